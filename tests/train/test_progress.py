"""Progress output (a bar on a terminal, a line per epoch in logs) and quiet resumes."""
import io

import pytest

from graphnorm.train.callbacks import EpochLines, EpochProgressBar, progress_callbacks
from graphnorm.train.config import TrainConfig
from graphnorm.train.run import train


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_on_a_terminal_lines_otherwise():
    assert [type(c) for c in progress_callbacks(True, FakeTerminal())] == [EpochProgressBar]
    assert [type(c) for c in progress_callbacks(True, io.StringIO())] == [EpochLines]
    assert progress_callbacks(False, FakeTerminal()) == []


def test_log_output_is_a_line_per_epoch(raw_dir, cache_root, zinc_subset, tmp_path, capsys):
    train(TrainConfig(dataset="zinc-subset", preset="tiny", raw_dir=str(raw_dir),
                      cache_root=str(cache_root), max_epochs=3, batch_size=64, limit_train=128,
                      limit_eval=64, out=str(tmp_path), progress=True))
    out = capsys.readouterr().out  # pytest's capture is not a terminal
    epoch_lines = [line for line in out.splitlines() if line.startswith("epoch ")]
    assert [line.split(":")[0] for line in epoch_lines] == ["epoch 1", "epoch 2", "epoch 3"]
    assert all("val/mae" in line for line in epoch_lines)
    assert "it/s" not in out and "\r" not in out
    # one model line with the model's own parameter count, not Lightning's table (FLOPs 0)
    import json

    params = json.loads((tmp_path / "metrics.json").read_text())["params"]
    assert f"[graphnorm] model: Graphormer, {params:,} parameters" in out.splitlines()
    assert "FLOPs" not in out
    # validating every 4 steps (2 an epoch): scores in the lines of the epochs that validated,
    # not the last one repeated
    train(TrainConfig(dataset="zinc-subset", preset="tiny", raw_dir=str(raw_dir),
                      cache_root=str(cache_root), max_epochs=4, batch_size=64, limit_train=128,
                      limit_eval=64, val_every_steps=4, out=str(tmp_path / "sparse"), progress=True))
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("epoch ")]
    assert ["val/mae" in x for x in lines] == [False, True, False, True]
    assert all("train/loss" in x for x in lines)


@pytest.mark.filterwarnings("error:Experiment logs directory")
def test_resume_keeps_history_without_a_deletion_warning(raw_dir, cache_root, zinc_subset, tmp_path):
    kw = dict(dataset="zinc-subset", preset="tiny", raw_dir=str(raw_dir), cache_root=str(cache_root),
              batch_size=64, limit_train=128, limit_eval=64, out=str(tmp_path), progress=False)
    train(TrainConfig(max_epochs=1, **kw))
    train(TrainConfig(max_epochs=2, resume=True, **kw))  # the warning would raise here
    assert (tmp_path / "logs" / "metrics.csv").is_file()
