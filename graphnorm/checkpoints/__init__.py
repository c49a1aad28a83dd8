"""The checkpoint contract: the format a training run writes, the upgrade chain from every
older format, and the reader of a run's model files.

Above the models and tree baselines it loads, below ``train/`` (which writes checkpoints) and
the packages that use trained models (inference, explain, serve, analysis, bench): they all
read checkpoints through here, none through ``train/``.

- `format`: the ``graphnorm`` block (`graphnorm_block`), `CHECKPOINT_FORMAT`, and
  `upgrade_checkpoint` (format N -> N+1, in place);
- `keys`: the state-dict key names of the layouts before the shared core (`upgrade_keys`);
- `strip`: `strip_checkpoint`, a checkpoint as a backbone ships (weights and block only);
- `reader`: `load_checkpoint`, `load_member`, `checkpoint_files`, `LoadedModel`, and
  `load_gnn_columns`: a backbone's columns for the trees (`gnn_columns.GnnColumns`, +gnn sets).
"""
from .format import (CHECKPOINT_FORMAT, PRE_CONFIG_SETTINGS, SUPPORTED_FORMATS, CheckpointError,
                     graphnorm_block, upgrade_checkpoint)
from .keys import rename_keys, upgrade_keys
from .reader import (TRAIN_HINT, LoadedModel, checkpoint_files, load_gnn_columns, is_tree_file,
                     load_checkpoint, load_member)
from .strip import strip_checkpoint

__all__ = ["CHECKPOINT_FORMAT", "PRE_CONFIG_SETTINGS", "SUPPORTED_FORMATS", "CheckpointError",
           "graphnorm_block", "upgrade_checkpoint", "rename_keys", "upgrade_keys", "TRAIN_HINT",
           "LoadedModel", "checkpoint_files", "load_gnn_columns", "is_tree_file", "load_checkpoint",
           "load_member", "strip_checkpoint"]
