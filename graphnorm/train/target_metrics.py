"""Per-target metrics with missing labels (NaN) left out: MAE and RMSE for regression,
ROC-AUC for binary targets. A multi-target run's single model-selection number is the mean
over targets (as OGB and Chemprop do), so no target's units dominate by count of labels."""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import torch


def _columns(pred: torch.Tensor, target: torch.Tensor):
    p = pred.detach().double().cpu().numpy().reshape(len(pred), -1)
    t = target.detach().double().cpu().numpy().reshape(len(target), -1)
    for j in range(t.shape[1]):
        have = ~np.isnan(t[:, j])
        yield p[have, j], t[have, j]


def rocauc(p: np.ndarray, t: np.ndarray) -> float:
    """ROC-AUC of one target; NaN when it has a single class (no ranking to score)."""
    from sklearn.metrics import roc_auc_score

    if len(np.unique(t)) < 2:
        return math.nan
    return float(roc_auc_score(t, p))


def per_target_metrics(task_type: str, pred: torch.Tensor, target: torch.Tensor,
                       names: Optional[Sequence[str]] = None) -> dict[str, dict]:
    """{target name: {"n": labelled rows, "mae", "rmse"} or {"n", "positives", "rocauc"}}."""
    out = {}
    for j, (p, t) in enumerate(_columns(pred, target)):
        name = names[j] if names else f"target_{j}"
        entry: dict = {"n": int(t.size)}
        if t.size == 0:
            out[name] = entry
            continue
        if task_type == "regression":
            entry["mae"] = float(np.abs(p - t).mean())
            entry["rmse"] = float(np.sqrt(((p - t) ** 2).mean()))
        else:
            entry["positives"] = int(t.sum())
            entry["rocauc"] = rocauc(p, t)
        out[name] = entry
    return out


def mean_over_targets(metric: str, pred: torch.Tensor, target: torch.Tensor) -> float:
    """``metric`` ("mae" | "rocauc") per target, then averaged over the targets that have
    it (NaN when none does)."""
    values = []
    for p, t in _columns(pred, target):
        if t.size == 0:
            continue
        values.append(float(np.abs(p - t).mean()) if metric == "mae" else rocauc(p, t))
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan
