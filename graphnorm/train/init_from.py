"""Fine-tuning: a new run starts from a trained checkpoint's weights (``train --init-from``).

Every weight and buffer except the head's is copied (BatchNorm statistics included): the
head's width follows the new task's targets, and the target scaling is the new data's. The
checkpoint must hold the same model, built on the same featurizer settings; a difference is
refused by name, never loaded in part. Settings that only act during training (dropout) and
those that only shape the head (number of targets, readout) may differ.

One input may differ: RDKit descriptors at the head (`ADDABLE_AT_HEAD`). A run may add them
to a checkpoint trained without them (the shipped ``zinc250k`` backbone regressed them, so it
could not take them as inputs), take another set than the checkpoint's (a backbone
pre-trained with ``--descriptors fast`` under ``--recipe admet``'s full set), or leave out
the checkpoint's. Their encoder then starts fresh (or is dropped), like the head; the
backbone is unchanged, since head-side inputs never reach a block. ``path`` may name a
shipped backbone (`graphnorm.pretrained`).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from graphnorm.data.files import sha256_file

from .model_config import comparable

# model config fields a fine-tuning run may set anew: training-time only, or head-only
FREE_FIELDS = ("num_tasks", "dropout", "attention_dropout", "fingerprint_dropout", "readout")
HEAD_PREFIX = "head."
# featurizer/model field -> weight prefix of an input a fine-tuning run may add at the head
ADDABLE_AT_HEAD = {"descriptors": "descriptors."}
# the weights a fine-tuning run trains from their start at the full --lr (--backbone-lr
# scales the rest): the head and the head-side inputs
HEAD_SIDE = (HEAD_PREFIX,) + tuple(ADDABLE_AT_HEAD.values())
SCRATCH = "; or --init-from none to train from scratch"
RECORD = "init_from.json"  # in the run folder: what was loaded, for metrics.json and --resume


class InitFromError(ValueError):
    pass


def pretrain_steps(loaded) -> int | None:
    """Where a pre-training checkpoint stopped on its learning-rate schedule: the steps its run
    trained (its ``epoch``, which pre-training sets to its step) after its own warm start's
    (``schedule_offset``), so a chain of warm starts adds up; None for another checkpoint."""
    spec = (loaded.meta.get("train_config") or {}).get("pretrain")
    return None if not spec else int(loaded.epoch) + int(spec.get("schedule_offset") or 0)


def _differences(pretrained: dict, run: dict, skip=()) -> list[str]:
    keys = sorted((set(pretrained) | set(run)) - set(skip))
    return [f"{k}: {pretrained.get(k)!r} in the checkpoint, {run.get(k)!r} in this run"
            for k in keys if comparable(pretrained.get(k)) != comparable(run.get(k))]


def init_from_checkpoint(model: torch.nn.Module, model_config: dict, featurizer,
                         path: str | Path, loaded=None, panel_column: str | None = None) -> dict:
    """Copy ``path``'s weights (a best.ckpt or a run directory) into ``model`` except the head;
    returns {"path", "sha256", "epoch", "tensors", "task"} for the run's metrics.json.
    ``loaded``: ``path``'s checkpoint when the caller has read it already. ``panel_column``:
    the run fits that quantity as a column of the ADMET panel, so a product build (which read
    the TDC tables) may start it; recorded as ``product_build`` in the returned record."""
    from graphnorm.pretrained import BACKBONES, PretrainedError, resolve_init_from
    from graphnorm.checkpoints import CheckpointError, load_checkpoint

    try:  # a run directory means its best.ckpt; an ensemble directory is refused
        loaded = loaded or load_checkpoint(resolve_init_from(path))
    except (CheckpointError, PretrainedError) as err:
        raise InitFromError(f"--init-from: {err}{SCRATCH}") from err
    where = f"--init-from {loaded.path}"
    pretrain = (loaded.meta.get("train_config") or {}).get("pretrain") or {}
    if pretrain.get("tdc_tables") and not panel_column:
        raise InitFromError(f"{where}: a product build of the ADMET panel (it read every TDC "
                            "table, test sets too); a fine-tuning run starts from a backbone "
                            f"that never saw a TDC molecule, such as the shipped 'admet'{SCRATCH}")
    # asdict, not to_dict: to_dict leaves out fingerprint_bits when it is 0
    added = _added_at_head(loaded, model_config)
    featurizer_diff = _differences(dataclasses.asdict(loaded.featurizer),
                                   dataclasses.asdict(featurizer), added)
    if featurizer_diff:
        raise InitFromError(f"{where}: its data was featurized differently "
                            f"({'; '.join(featurizer_diff)}); featurize this run the same way "
                            "(e.g. --fingerprint-bits), since the input layers depend on "
                            f"it{SCRATCH}")
    model_diff = _differences(loaded.meta["model_config"], model_config, FREE_FIELDS + added)
    if model_diff:
        raise InitFromError(f"{where}: another model ({'; '.join(model_diff)}); use the same "
                            "model, preset, norm and options as the pre-training "
                            f"run{SCRATCH}")
    fresh = (HEAD_PREFIX,) + tuple(ADDABLE_AT_HEAD[k] for k in added)
    state = {k: v for k, v in loaded.model.state_dict().items() if not k.startswith(fresh)}
    missing, unexpected = model.load_state_dict(state, strict=False)
    stray = [k for k in missing if not k.startswith(fresh)] + list(unexpected)
    if stray:  # configs agreed but the weights do not: a bug, never a partial load
        raise InitFromError(f"{where}: weights do not match this model: {stray[:5]}")
    shipped = {"shipped": str(path)} if str(path) in BACKBONES and not Path(path).exists() else {}
    return {"path": str(loaded.path), "sha256": sha256_file(loaded.path), **shipped,
            "epoch": loaded.epoch + 1, "tensors": len(state), "task": loaded.task.get("name"),
            **({"pretrain_steps": pretrain_steps(loaded)} if pretrain else {}),
            **({"added_at_head": list(added)} if added else {}),
            **({"product_build": True, "panel_column": panel_column}
               if pretrain.get("tdc_tables") else {})}


def _added_at_head(loaded, model_config: dict) -> tuple:
    """The `ADDABLE_AT_HEAD` inputs that differ between the checkpoint and this run while
    neither side feeds them anywhere but the head: added, replaced or left out."""
    before = loaded.meta["model_config"]

    def at_head(config: dict, k: str) -> bool:  # absent counts: nothing reaches a block
        return not config.get(k) or config.get(f"{k}_at", "head") == "head"

    return tuple(k for k in ADDABLE_AT_HEAD
                 if comparable(before.get(k)) != comparable(model_config.get(k))
                 and at_head(before, k) and at_head(model_config, k))
