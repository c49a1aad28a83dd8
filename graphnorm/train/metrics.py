"""Task metrics: MAE for regression, ROC-AUC through the OGB Evaluator for binary tasks."""
from __future__ import annotations

import numpy as np
import torch

HIGHER_IS_BETTER = {"mae": False, "rocauc": True}


def compute_metric(metric: str, pred: torch.Tensor, target: torch.Tensor) -> float:
    """``pred`` and ``target``: [N, T] in original units (logits are fine for rocauc)."""
    if metric in HIGHER_IS_BETTER and (target.dim() > 1 and target.shape[-1] > 1
                                       or bool(torch.isnan(target).any())):
        from .target_metrics import mean_over_targets  # own data: several targets, missing labels

        return mean_over_targets(metric, pred, target)
    if metric == "mae":
        return float((pred - target).abs().mean())
    if metric == "rocauc":
        from ogb.graphproppred import Evaluator

        y_true = target.cpu().numpy()
        if len(np.unique(y_true[~np.isnan(y_true)])) < 2:
            return float("nan")  # ROC-AUC needs both classes (tiny smoke-test slices)
        result = Evaluator("ogbg-molhiv").eval({"y_true": y_true, "y_pred": pred.cpu().numpy()})
        return float(result["rocauc"])
    raise ValueError(f"unknown metric {metric!r}; expected one of {sorted(HIGHER_IS_BETTER)}")
