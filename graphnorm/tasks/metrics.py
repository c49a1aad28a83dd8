"""The metrics that score a run: their direction, their worst value and the evaluator.

Every metric scores one target's labelled rows (`Metric.score`); `compute_metric` is the
evaluator every caller uses (training, ensembles, tree runs, benchmark summaries). One target
without missing labels scores MAE/RMSE on the whole arrays; otherwise each target is scored
on its labelled rows and the scores averaged over the targets that have one (as OGB and
Chemprop do), so no target's units dominate by count of labels. For ROC-AUC that average is
exactly OGB's evaluator (per target with both classes, then the mean; `ogbg-molhiv` has one
target), without importing OGB. Imports nothing from graphnorm, and torch and numpy only
where a score is computed (tensors are read through their own methods), so the CLI offers
the metric names without loading either.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # annotations only: numpy loads where a score is computed
    import numpy as np


def _regression_error(metric: str, p, t) -> float:
    """MAE or RMSE of one target's labelled rows (numpy or torch)."""
    import numpy as np

    d = np.asarray(p, dtype=float) - np.asarray(t, dtype=float)
    return float(np.abs(d).mean()) if metric == "mae" else float(np.sqrt((d ** 2).mean()))


def rocauc(p: np.ndarray, t: np.ndarray) -> float:
    """ROC-AUC of one target; NaN when it has a single class (no ranking to score)."""
    import numpy as np
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
    import numpy as np
    from scipy.stats import spearmanr

    if len(t) < 2 or np.ptp(t) == 0 or np.ptp(p) == 0:
        return math.nan
    return float(spearmanr(p, t).statistic)


@dataclass(frozen=True)
class Metric:
    """A run's score: picks the checkpoint (``val/<name>``) and is reported in metrics.json."""
    name: str
    higher_is_better: bool
    score: Callable[[np.ndarray, np.ndarray], float]  # (pred, labels) of one target's rows
    # what a degenerate validation slice (one class, constant labels) logs: the worst value
    worst: float
    error: bool = False  # a distance in target units: one complete target scores whole arrays


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("mae", False, lambda p, t: _regression_error("mae", p, t), math.inf, error=True),
    Metric("rmse", False, lambda p, t: _regression_error("rmse", p, t), math.inf, error=True),
    Metric("spearman", True, spearman, -1.0),
    Metric("rocauc", True, rocauc, 0.0),
    Metric("auprc", True, auprc, 0.0),
)}
METRIC_NAMES = tuple(METRICS)  # train --metric choices
HIGHER_IS_BETTER = {name: m.higher_is_better for name, m in METRICS.items()}


def metric_named(name: str) -> Metric:
    try:
        return METRICS[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; expected one of {sorted(METRICS)}") from None


def target_columns(pred, target):
    """Per target: (predictions, labels) of its labelled rows, as float64 numpy arrays."""
    import numpy as np

    p = pred.detach().double().cpu().numpy().reshape(len(pred), -1)
    t = target.detach().double().cpu().numpy().reshape(len(target), -1)
    for j in range(t.shape[1]):
        have = ~np.isnan(t[:, j])
        yield p[have, j], t[have, j]


def mean_over_targets(metric: str, pred, target) -> float:
    """``metric`` per target, then averaged over the targets that have it (NaN when none
    does)."""
    import numpy as np

    score = metric_named(metric).score
    values = [score(p, t) for p, t in target_columns(pred, target) if t.size]
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan


def compute_metric(metric: str, pred, target) -> float:
    """``pred`` and ``target``: tensors [N, T] in original units (logits are fine for
    rocauc)."""
    complete = not (target.dim() > 1 and target.shape[-1] > 1) and not bool(target.isnan().any())
    if complete and metric_named(metric).error:
        return _regression_error(metric, pred.detach().cpu().numpy(), target.detach().cpu().numpy())
    return mean_over_targets(metric, pred, target)
