"""The task contract in one place: loss, target scaling, predictions and metrics.

A task is the plain dict stored in checkpoints (``task_type`` "regression" | "binary",
``metric`` "mae" | "rmse" | "spearman" | "rocauc" | "auprc", ``num_tasks``, optional ``targets`` names). Regression targets
are standardized per target with the training mean/std (`target_scaling`), so the L1 loss is
on unit scale; model outputs are mapped back (`in_units`) before metrics and predictions.
Binary tasks train on logits with BCE; predictions are probabilities. Missing labels (NaN)
are left out of losses and metrics. A multi-target or partly labelled run's model-selection
number is the mean over targets (as OGB and Chemprop do), so no target's units dominate by
count of labels; a single benchmark target keeps the OGB evaluator.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from graphnorm.data.info import METRICS

HIGHER_IS_BETTER = {"mae": False, "rmse": False, "spearman": True, "rocauc": True, "auprc": True}
# what a degenerate validation slice (one class, constant labels) logs: the worst value
WORST_SCORE = {"spearman": -1.0, "rocauc": 0.0, "auprc": 0.0}
REGRESSION_METRICS = ("mae", "rmse", "spearman")  # a table's --metric must suit its task
CLASSIFICATION_METRICS = ("rocauc", "auprc")


def is_regression(task: dict) -> bool:
    return task["task_type"] == "regression"


def target_names(task: dict) -> list[str]:
    """A task's target names; tasks without names (benchmarks, checkpoint format 1) give one
    ``prediction`` column per target (``prediction``, ``prediction_1``, ...)."""
    names = task.get("targets")
    if names:
        return list(names)
    n = int(task.get("num_tasks", 1))
    return ["prediction"] + [f"prediction_{k}" for k in range(1, n)]


def target_scaling(task_type: str, ys: torch.Tensor) -> tuple[list[float], list[float]]:
    """Per-target (mean, std) of training labels ys [N, T] for regression (missing labels
    ignored; std floored at 1e-6); binary tasks are not scaled (0, 1)."""
    if task_type != "regression":
        return [0.0] * ys.shape[1], [1.0] * ys.shape[1]
    means, stds = [], []
    for col in ys.T:
        have = col[~torch.isnan(col)]
        means.append(float(have.mean()) if have.numel() else 0.0)
        stds.append(float(have.std().clamp_min(1e-6)) if have.numel() > 1 else 1.0)
    return means, stds


REGRESSION_LOSSES = ("l1", "mse")


def task_loss(task: dict, raw: torch.Tensor, y: torch.Tensor, mean: torch.Tensor,
              std: torch.Tensor, loss: str = "l1") -> torch.Tensor:
    """L1 (or ``loss="mse"``: squared error, what RMSE scores) on standardized targets
    (regression) or BCE on logits (binary); raw: model output."""
    valid = ~torch.isnan(y)  # OGB marks missing labels with NaN
    if is_regression(task):
        if loss not in REGRESSION_LOSSES:
            raise ValueError(f"regression loss must be one of {REGRESSION_LOSSES}, got {loss!r}")
        fn = F.l1_loss if loss == "l1" else F.mse_loss
        return fn(raw[valid], ((y - mean) / std)[valid])
    return F.binary_cross_entropy_with_logits(raw[valid], y[valid])


def in_units(task: dict, raw: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """Model output in target units (regression) or logits (binary): what metrics read."""
    return raw * std + mean if is_regression(task) else raw


def predictions(task: dict, raw: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """What users get: target units (regression) or probabilities (binary)."""
    return in_units(task, raw, mean, std) if is_regression(task) else torch.sigmoid(raw)


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


def auprc(p: np.ndarray, t: np.ndarray) -> float:
    """Area under the precision-recall curve (scikit-learn's average precision, as PyTDC
    scores it); NaN without a positive."""
    from sklearn.metrics import average_precision_score

    if t.sum() < 1:
        return math.nan
    return float(average_precision_score(t, p))


def spearman(p: np.ndarray, t: np.ndarray) -> float:
    """Spearman rank correlation of one target (NaN when either side is constant)."""
    from scipy.stats import spearmanr

    if len(t) < 2 or np.ptp(t) == 0 or np.ptp(p) == 0:
        return math.nan
    return float(spearmanr(p, t).statistic)


SCORES = {"rocauc": rocauc, "auprc": auprc, "spearman": spearman}


def check_metric(metric: str, task: str) -> None:
    """A clear error for a metric that does not score this task ("classification" or
    "regression")."""
    allowed = CLASSIFICATION_METRICS if task == "classification" else REGRESSION_METRICS
    if metric not in allowed:
        raise ValueError(f"--metric {metric!r} does not score a {task} task; choose from "
                         f"{', '.join(allowed)}")


def per_target_metrics(task_type: str, pred: torch.Tensor, target: torch.Tensor,
                       names: Optional[Sequence[str]] = None) -> dict[str, dict]:
    """{target name: {"n": labelled rows, "mae", "rmse", "spearman"} or {"n", "positives",
    "rocauc", "auprc"}}."""
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
            entry["spearman"] = spearman(p, t)
        else:
            entry["positives"] = int(t.sum())
            entry["rocauc"] = rocauc(p, t)
            entry["auprc"] = auprc(p, t)
        out[name] = entry
    return out


def mean_over_targets(metric: str, pred: torch.Tensor, target: torch.Tensor) -> float:
    """``metric`` (a key of `HIGHER_IS_BETTER`) per target, then averaged over the targets that have
    it (NaN when none does)."""
    values = []
    for p, t in _columns(pred, target):
        if t.size == 0:
            continue
        values.append(_regression_error(metric, p, t) if metric in ("mae", "rmse")
                      else SCORES[metric](p, t))
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan


def _regression_error(metric: str, p, t) -> float:
    """MAE or RMSE of one target's labelled rows (numpy or torch)."""
    d = np.asarray(p, dtype=float) - np.asarray(t, dtype=float)
    return float(np.abs(d).mean()) if metric == "mae" else float(np.sqrt((d ** 2).mean()))


def compute_metric(metric: str, pred: torch.Tensor, target: torch.Tensor) -> float:
    """``pred`` and ``target``: [N, T] in original units (logits are fine for rocauc)."""
    if metric in HIGHER_IS_BETTER and (target.dim() > 1 and target.shape[-1] > 1
                                       or bool(torch.isnan(target).any())):
        return mean_over_targets(metric, pred, target)  # own data: several targets, missing labels
    if metric in ("mae", "rmse"):
        return _regression_error(metric, pred.detach().cpu().numpy(), target.detach().cpu().numpy())
    if metric in ("spearman", "auprc"):  # TDC's metrics: one target, no missing label here
        return mean_over_targets(metric, pred, target)
    if metric == "rocauc":
        from ogb.graphproppred import Evaluator

        y_true = target.cpu().numpy()
        if len(np.unique(y_true[~np.isnan(y_true)])) < 2:
            return float("nan")  # ROC-AUC needs both classes (tiny smoke-test slices)
        result = Evaluator("ogbg-molhiv").eval({"y_true": y_true, "y_pred": pred.cpu().numpy()})
        return float(result["rocauc"])
    raise ValueError(f"unknown metric {metric!r}; expected one of {sorted(HIGHER_IS_BETTER)}")
