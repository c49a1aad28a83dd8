"""Score a saved checkpoint on the validation and test splits (rank 0, exact, no sampler padding)
and keep its predictions, so seeds can be ensembled and errors studied without the model."""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import pandas as pd
import torch

from graphnorm.checkpoints import load_checkpoint
from graphnorm.run_folder import predictions_file
from graphnorm.tasks import compute_metric, resolve_task


def predict_loader(models: Sequence, loader) -> tuple[torch.Tensor, torch.Tensor, list]:
    """Predictions [M, N, T] of each of ``models`` (LoadedModels) over a loader, in one pass;
    the labels [N, T] and the SMILES (None where the data has none)."""
    preds, ys, smiles = [], [], []
    for batch in loader:
        # sigmoid for binary: ROC-AUC is unchanged
        preds.append(torch.stack([m.predict_batch(batch) for m in models]))
        ys.append(batch.y)
        smiles += list(batch.smiles or [None] * batch.y.shape[0])
    return torch.cat(preds, 1), torch.cat(ys), smiles


def prediction_frame(names: list[str], pred: torch.Tensor, y: torch.Tensor, smiles: list) -> pd.DataFrame:
    """One row per molecule of a split, in split order: ``smiles``, then ``y:<target>`` and
    ``pred:<target>`` per target (regression in original units, binary as probabilities)."""
    df = pd.DataFrame({"smiles": smiles})
    for j, name in enumerate(names):
        df[f"y:{name}"] = y[:, j].double().numpy()
        df[f"pred:{name}"] = pred[:, j].double().numpy()
    return df


def scored_splits(splits) -> tuple[str, ...]:
    """The evaluation splits that hold molecules: ("val", "test"), or ("val",) where the
    data withholds its test set (the TDC suite's selection tables, graphnorm/data/tdc.py), so
    that no test score, prediction file or summary of one exists for such a run."""
    return tuple(s for s in ("val", "test") if s == "val" or len(splits[s]))


def evaluate_checkpoint(path: Path, dm, out: Optional[Path] = None) -> dict:
    """Val and test metric of a checkpoint (test None where the data has no test split);
    with ``out``, also ``out/predictions_<split>.csv.gz``."""
    loaded = load_checkpoint(path)
    metric = loaded.task["metric"]
    scores = {"epoch": loaded.epoch, "test": None}
    for split in scored_splits(dm.splits):
        (pred,), y, smiles = predict_loader([loaded], dm.loader(split, train=False))
        scores[split] = compute_metric(metric, pred, y)
        if "targets" in loaded.task:  # own data: every target's MAE/RMSE or ROC-AUC
            scores.setdefault("per_target", {})[split] = resolve_task(loaded.task).per_target(
                pred, y, loaded.task["targets"])
        if out is not None:
            names = loaded.task.get("targets") or [f"target_{k}" if k else "target"
                                                   for k in range(y.shape[1])]
            prediction_frame(names, pred, y, smiles).to_csv(
                Path(out) / predictions_file(split), index=False)
    return scores
