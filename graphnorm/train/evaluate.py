"""Score a saved checkpoint on the validation and test splits (rank 0, exact, no sampler padding)."""
from __future__ import annotations

from pathlib import Path

import torch

from graphnorm.checkpoint import load_checkpoint
from graphnorm.task import compute_metric, per_target_metrics


def predictloader(loaded, loader) -> tuple[torch.Tensor, torch.Tensor]:
    preds, ys = [], []
    for batch in loader:
        preds.append(loaded.predict_batch(batch))  # sigmoid for binary: ROC-AUC is unchanged
        ys.append(batch.y)
    return torch.cat(preds), torch.cat(ys)


def evaluate_checkpoint(path: Path, dm) -> dict:
    loaded = load_checkpoint(path)
    metric = loaded.task["metric"]
    scores = {"epoch": loaded.epoch}
    for split in ("val", "test"):
        pred, y = predictloader(loaded, dm.loader(split, train=False))
        scores[split] = compute_metric(metric, pred, y)
        if "targets" in loaded.task:  # own data: every target's MAE/RMSE or ROC-AUC
            scores.setdefault("per_target", {})[split] = per_target_metrics(
                loaded.task["task_type"], pred, y, loaded.task["targets"])
    return scores
