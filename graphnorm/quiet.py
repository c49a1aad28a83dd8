"""Third-party output that says nothing about a graphnorm run, silenced when graphnorm is
imported (so the CLI, the Python API and spawned benchmark workers all get it):

- Lightning's promotional log lines ("💡 Tip: For seamless cloud uploads ... litmodels",
  "... litlogger"), printed by every Trainer. Lightning's other info lines stay.
- torch_geometric (2.8) calls ``torch.jit.script`` while it is imported, which recent torch
  (2.13 here) reports as deprecated. graphnorm itself never scripts; only that exact message is hidden.
- A deprecation inside Lightning's own pytree helper (``isinstance(treespec, LeafSpec)``),
  raised by every Trainer whatever the run.

Importing this module imports neither torch nor Lightning (``graphnorm --help`` stays fast).
"""
from __future__ import annotations

import logging
import warnings

# rank_zero_info logs through one of these (Lightning rebinds lightning_utilities' logger)
_LIGHTNING_LOGGERS = ("lightning.pytorch.utilities.rank_zero",
                      "lightning.fabric.utilities.rank_zero",
                      "lightning_utilities.core.rank_zero")


class NoLightningTips(logging.Filter):
    """Drops Lightning's "💡 Tip: ..." advertisements, keeps every other record."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).lstrip().startswith("💡 Tip")


def silence_third_party_noise() -> None:
    """Idempotent: install the log filter once per logger, the warning filter once."""
    for name in _LIGHTNING_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, NoLightningTips) for f in logger.filters):
            logger.addFilter(NoLightningTips())
    warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\).*")
    warnings.filterwarnings("ignore", message=r"`torch\.jit\.script` is deprecated",
                            category=DeprecationWarning)
