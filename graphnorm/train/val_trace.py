"""``--trace-validation``: every validation's predictions, for a cross-fitted validation score.

A run chooses things on its validation split (the checkpoint, the stopping step, a member's
weight) and then reports its score on the same rows: on the 50-150 molecules of a small
table's validation split that score flatters whatever was chosen. Cross-fitting
(graphnorm/bench/crossfit.py) chooses on one part of the rows and scores the other; it needs
the model's predictions at *every* validation, which this callback records in
``OUT/val_trace.npz``:

- ``steps`` [S]: the optimizer step of each validation,
- ``preds`` [S, N, T]: the predictions as ``predict`` writes them (target units; probabilities
  for binary tasks), in the validation loader's order,
- ``y`` [N, T] and ``smiles`` [N]: that order's labels and molecules.

A resumed run keeps the validations before its checkpoint's step and replaces the later ones.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from lightning.pytorch.callbacks import Callback

TRACE_FILE = "val_trace.npz"


class TraceError(ValueError):
    pass


class ValidationTrace(Callback):
    """Appends each validation of a single-process run to ``<out>/val_trace.npz`` (the
    module's ``last_validation``; the sanity check before training is not a validation)."""

    def __init__(self, out):
        self.path = Path(out) / TRACE_FILE

    def on_validation_end(self, trainer, pl_module) -> None:
        last = getattr(pl_module, "last_validation", None)
        if trainer.sanity_checking or last is None or trainer.world_size > 1:
            return
        pred, y, smiles = last
        step = int(trainer.global_step)
        steps, preds = np.zeros(0, dtype=np.int64), np.zeros((0, *pred.shape), dtype=np.float32)
        smiles = [s or "" for s in smiles]
        old = None
        if self.path.is_file():
            try:
                old = read_trace(self.path.parent)
            except TraceError as err:  # a damaged trace never stops the training
                warnings.warn(f"{err}: starting the trace again", stacklevel=2)
        if (old is not None and list(old["smiles"]) == smiles
                and old["preds"].shape[1:] == pred.shape):
            keep = old["steps"] < step  # a resumed run redoes what came after its checkpoint
            steps, preds = old["steps"][keep], old["preds"][keep]
        steps = np.append(steps, step)
        preds = np.concatenate([preds, pred.numpy()[None].astype(np.float32)])
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, steps=steps, preds=preds, y=y.numpy().astype(np.float32),
                            smiles=np.array(smiles))
        tmp.replace(self.path)  # a kill mid-write leaves the previous trace whole


def read_trace(folder) -> dict:
    """The trace of a run folder: {"steps", "preds", "y", "smiles"}; a TraceError naming the
    file when there is none or it cannot be read."""
    path = Path(folder) / TRACE_FILE
    if not path.is_file():
        raise TraceError(f"{path}: no validation trace (train with --trace-validation)")
    try:
        with np.load(path, allow_pickle=False) as data:
            out = {k: data[k] for k in ("steps", "preds", "y", "smiles")}
    except (OSError, ValueError, KeyError) as err:
        raise TraceError(f"{path}: not a readable validation trace ({err})") from err
    if out["preds"].shape[0] != len(out["steps"]) or out["preds"].shape[1] != len(out["smiles"]):
        raise TraceError(f"{path}: steps, predictions and molecules do not match in length")
    return out
