"""Pooled evidence for a default: the relative improvement of one arm over another, averaged
over tasks and seeds, with a two-stage bootstrap interval (RULE.md L).

A per-task rule ("better beyond one seed's SD on each split") cannot see a gain of a few
per cent on small splits: each split's noise swamps it. Pooling asks one question of all
tasks at once -- is the *average* relative improvement above zero? -- and its interval
resamples the tasks (and, within each, the seeds), so one task cannot carry the verdict by
itself:

    r_{t,s} = clip((e_base - e_new) / e_base, -1, 1)
    R = mean_t mean_s r_{t,s}

with ``e`` an error (MAE; 1 - score for ROC-AUC, AUPRC, Spearman). The clip bounds what one
near-perfect task (1 - ROC-AUC ~ 0.01) can add or take away.

RULE.md M reads the same errors on a *bounded* scale (``statistic="bounded"``):

    r_{t,s} = (e_base - e_new) / max(e_base, e_new, f),   f = 0 for MAE/RMSE, 0.1 for 1 - score

in [-1, 1] without a clip and antisymmetric in the arms; the floor reads a ranking task
above 0.9 against 0.1 rather than against its own vanishing error, where the relative
form turned AUC changes of ~0.01 into r = +0.54 and -1.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from graphnorm.stats.bootstrap import HELPS_HURTS, verdict
from graphnorm.tasks import HIGHER_IS_BETTER

RESAMPLES, LEVEL, SEED = 10_000, 0.95, 0
SCORE_ERROR_FLOOR = 0.1  # the bounded form's floor for 1 - score errors (RULE.md M)
STATISTICS = ("relative", "bounded")


def error_of(metric: str, score: float) -> float:
    """The error a score stands for: itself for MAE/RMSE, 1 - score for ROC-AUC, AUPRC,
    Spearman (a metric whose higher is better is at most 1; `graphnorm.tasks.METRICS`)."""
    return 1.0 - float(score) if HIGHER_IS_BETTER[metric] else float(score)


def relative_improvement(e_base: float, e_new: float) -> float:
    """clip((e_base - e_new) / e_base, -1, 1): positive when ``new`` has the smaller error."""
    if not np.isfinite(e_base) or not np.isfinite(e_new):
        raise ValueError(f"errors must be finite, got base {e_base}, new {e_new}")
    if e_base <= 0:  # a perfect base: any error of the new arm is a full loss, none a tie
        return 0.0 if e_new <= 0 else -1.0
    return float(np.clip((e_base - e_new) / e_base, -1.0, 1.0))


def bounded_improvement(e_base: float, e_new: float, floor: float = 0.0) -> float:
    """(e_base - e_new) / max(e_base, e_new, floor): positive when ``new`` has the smaller
    error, in [-1, 1]; 0 when both errors are 0."""
    if not np.isfinite(e_base) or not np.isfinite(e_new) or min(e_base, e_new) < 0:
        raise ValueError(f"errors must be finite and >= 0, got base {e_base}, new {e_new}")
    scale = max(e_base, e_new, floor)
    return 0.0 if scale <= 0 else float((e_base - e_new) / scale)


def improvements(metric: str, base_scores: Sequence[float], new_scores: Sequence[float],
                 statistic: str = "relative") -> list[float]:
    """r of each (base, new) pair of ``metric`` scores (one per seed): L's clipped relative
    form, or M's bounded one (module docstring)."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if statistic == "relative":
        return [relative_improvement(error_of(metric, b), error_of(metric, n))
                for b, n in zip(base_scores, new_scores)]
    floor = SCORE_ERROR_FLOOR if HIGHER_IS_BETTER[metric] else 0.0
    return [bounded_improvement(error_of(metric, b), error_of(metric, n), floor)
            for b, n in zip(base_scores, new_scores)]


def pooled_interval(by_task: Mapping[str, Sequence[float]], resamples: int = RESAMPLES,
                    level: float = LEVEL, seed: int = SEED) -> dict:
    """{"mean", "low", "high", "tasks", "pairs"}: the mean over tasks of each task's mean r,
    and its ``level`` percentile interval from a two-stage bootstrap (tasks with
    replacement, then each drawn task's values with replacement)."""
    values = [np.asarray(v, dtype=float) for v in by_task.values()]
    if not values or any(len(v) == 0 for v in values):
        raise ValueError("every task needs at least one value")
    rng = np.random.default_rng(seed)
    k, width = len(values), max(len(v) for v in values)
    padded = np.zeros((k, width))
    for t, v in enumerate(values):
        padded[t, :len(v)] = v
    counts = np.array([len(v) for v in values])
    tasks = rng.integers(0, k, (resamples, k))  # stage 1: tasks with replacement
    n = counts[tasks]  # [B, k] values each drawn task holds
    # stage 2: each drawn task's values with replacement, n of them (the rest masked out)
    picks = np.floor(rng.random((resamples, k, width)) * n[..., None]).astype(np.int64)
    drawn = padded[tasks[..., None], picks]
    used = np.arange(width)[None, None, :] < n[..., None]
    means = ((drawn * used).sum(-1) / n).mean(-1)
    alpha = (1 - level) / 2
    return {"mean": float(np.mean([v.mean() for v in values])),
            "low": float(np.quantile(means, alpha)), "high": float(np.quantile(means, 1 - alpha)),
            "tasks": k, "pairs": int(sum(len(v) for v in values))}


def pooled_verdict(interval: Mapping[str, float]) -> str:
    """``helps`` when the interval lies above 0, ``hurts`` when below, else ``neutral``."""
    return verdict(interval["low"], interval["high"], HELPS_HURTS)
