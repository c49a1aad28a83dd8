"""Third-party noise is silenced when graphnorm is imported (graphnorm/quiet.py)."""
import logging
import subprocess
import sys

import pytest

import graphnorm  # noqa: F401  (installs the filters)


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_a_trainer_prints_no_lightning_tips_but_its_other_info(tmp_path):
    import lightning as L
    from lightning.pytorch.loggers import CSVLogger
    from lightning.pytorch.utilities.rank_zero import rank_zero_module

    log = rank_zero_module.log  # the logger Lightning's rank_zero_info writes to
    seen, level = _Records(), log.level
    log.addHandler(seen)
    log.setLevel(logging.INFO)
    try:
        L.Trainer(logger=CSVLogger(tmp_path), default_root_dir=tmp_path, accelerator="cpu",
                  enable_progress_bar=False)
    finally:
        log.removeHandler(seen)
        log.setLevel(level)
    assert seen.messages, "Lightning logged nothing: the test would not see a tip"
    assert not [m for m in seen.messages if "Tip" in m or "litlogger" in m]


@pytest.mark.slow  # starts a Python process
def test_importing_torch_geometric_through_graphnorm_warns_nothing():
    # a fresh interpreter: torch_geometric warns only on its first import
    code = ("import warnings; warnings.simplefilter('error'); import graphnorm; "
            "import graphnorm.data.cache")  # imports torch_geometric
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
