"""The checkpoint format: the ``graphnorm`` block a training run writes, and the chain of
upgrades that brings every older format to the current one.

A checkpoint written by training (a Lightning checkpoint) carries a ``graphnorm`` block:
format number, graphnorm version, model config, task, target scaling, training config,
training domain and the FeaturizerConfig, so prediction needs nothing else. Formats:

1. scalar ``target_mean``/``target_std``; featurizer {name, version, vocab, max_hops[, max_dist]}
2. per-target lists of ``target_mean``/``target_std``; ``task`` may name its ``targets``
3. ``featurizer`` is a whole `graphnorm.chem.FeaturizerConfig` (vocab, max_hops, max_dist,
   version); the model's sizes were taken from it; state-dict keys in the shared core's
   layout (the core came within format 2, so format-2 files hold either layout)

`upgrade_checkpoint` applies format N -> N+1 in turn, in place; the old state-dict key
names are `graphnorm.checkpoints.keys`'. Readers (`load_checkpoint`, a resumed Lightning
run) see the current format only.
"""
from __future__ import annotations

CHECKPOINT_FORMAT = 3  # bump when the "graphnorm" block changes: add its upgrade step below
SUPPORTED_FORMATS = (1, 2, 3)
# What checkpoints written before the FeaturizerConfig existed (formats 1-2) were trained with
# where they do not say: the defaults of that time. A fact about old files: never change it,
# even if FeaturizerConfig's defaults change.
PRE_CONFIG_SETTINGS = {"max_hops": 5, "max_dist": 20}


class CheckpointError(RuntimeError):
    pass


def graphnorm_block(model_config: dict, task: dict, train_config: dict, target_mean,
                    target_std, featurizer, train_domain: dict) -> dict:
    """The ``graphnorm`` block a training run writes into every checkpoint (the current
    format); ``target_mean``/``target_std``: tensors [T]; ``featurizer``: a FeaturizerConfig."""
    from graphnorm import __version__

    return {"format": CHECKPOINT_FORMAT, "version": __version__,
            "model_config": dict(model_config), "task": dict(task),
            "train_config": dict(train_config),
            "target_mean": target_mean.tolist(), "target_std": target_std.tolist(),
            "featurizer": featurizer.to_dict(), "train_domain": dict(train_domain)}


def featurizer_of_format_2(featurizer: dict, model_config: dict) -> dict:
    """A format 1-2 ``featurizer`` block as a whole FeaturizerConfig dict: the values it
    (or, for max_hops/max_dist, the model config) names, else `PRE_CONFIG_SETTINGS`."""
    from graphnorm.chem import FeaturizerConfig

    known = {f for f in FeaturizerConfig.__dataclass_fields__}
    values = {k: v for k, v in featurizer.items() if k in known}  # also held "name"
    for key, old in PRE_CONFIG_SETTINGS.items():
        values.setdefault(key, model_config.get(key, old))
    return FeaturizerConfig(**values).to_dict()


def _format_1_to_2(ckpt: dict, model) -> None:
    """Scalar target scaling -> one-entry lists (block) and [1] buffers (state dict)."""
    meta = ckpt.get("graphnorm") or {}
    for name in ("target_mean", "target_std"):
        if isinstance(meta.get(name), (int, float)):
            meta[name] = [float(meta[name])]
    state = ckpt.get("state_dict", {})
    for name in ("target_mean", "target_std"):
        if name in state and state[name].dim() == 0:
            state[name] = state[name].reshape(1)


def _format_2_to_3(ckpt: dict, model) -> None:
    """The featurizer block -> a whole FeaturizerConfig; state-dict keys -> the shared core's
    layout (``model``: the module the ``model.*`` keys load into)."""
    from .keys import upgrade_keys

    meta = ckpt.get("graphnorm")
    if meta is not None and "featurizer" in meta:
        meta["featurizer"] = featurizer_of_format_2(meta["featurizer"], meta.get("model_config", {}))
    if model is not None and "state_dict" in ckpt:
        upgrade_keys(model, ckpt["state_dict"], prefix="model.")


UPGRADES = {1: _format_1_to_2, 2: _format_2_to_3}  # format N -> N + 1


def upgrade_checkpoint(ckpt: dict, model=None) -> dict:
    """``ckpt`` brought to `CHECKPOINT_FORMAT` in place (returned for chaining); ``model``
    (the module its ``model.*`` keys load into) lets old key names be renamed. A checkpoint
    without a ``graphnorm`` block gets every step (they leave current data alone)."""
    meta = ckpt.get("graphnorm")
    fmt = meta.get("format", 1) if isinstance(meta, dict) else 1
    if fmt not in SUPPORTED_FORMATS:
        raise CheckpointError(
            f"checkpoint format {fmt!r} (written by graphnorm {meta.get('version', '?')}); "
            f"this graphnorm reads formats {', '.join(map(str, SUPPORTED_FORMATS))}")
    for step in range(fmt, CHECKPOINT_FORMAT):
        UPGRADES[step](ckpt, model)
    if isinstance(meta, dict):
        meta["format"] = CHECKPOINT_FORMAT
    return ckpt
