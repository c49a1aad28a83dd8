"""Metrics and a paired bootstrap of their difference, for comparing two predictions of the
same molecules: the ADMET panel's (`panel.compare`: backbone against backbone;
`panel.versus_gbm`: backbone against one model per table; `panel.readouts`: booster against
head; `panel.versus`: a panel against a peer's on measured molecules) and pre-training's
held-out scores (`pretrain.evaluate`).

Resamples are drawn all at once (a [B, n] index matrix) and scored row-wise: ROC-AUC from
average ranks (Mann-Whitney U / (n+ n-)), R² from row means, Spearman as the Pearson
correlation of row ranks; a resample where the metric is undefined (one class only, no
spread) is left out and replaced.
"""
from __future__ import annotations

import numpy as np

BOOTSTRAP, LEVEL, SEED = 1000, 0.95, 0
METRICS = ("rocauc", "r2", "spearman")


def metric_of(binary: bool) -> str:
    """The panel's metric of an endpoint: ROC-AUC (binary) or R² (regression)."""
    return "rocauc" if binary else "r2"


def _row_scores(metric: str, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Score of each row of y, p [B, n] (NaN where the metric is undefined for a row)."""
    from scipy.stats import rankdata

    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if metric == "spearman":
        ry, rp = rankdata(y, axis=1), rankdata(p, axis=1)
        ry -= ry.mean(1, keepdims=True)
        rp -= rp.mean(1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (ry * rp).sum(1) / np.sqrt((ry ** 2).sum(1) * (rp ** 2).sum(1))
    if metric == "rocauc":
        ranks = rankdata(p, axis=1)
        pos = y.sum(1)
        neg = y.shape[1] - pos
        u = (ranks * y).sum(1) - pos * (pos + 1) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((pos > 0) & (neg > 0), u / (pos * neg), np.nan)
    var = y.var(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, 1 - ((y - p) ** 2).mean(1) / var, np.nan)


def score(metric: str, y: np.ndarray, p: np.ndarray) -> float:
    """``metric`` (`METRICS`) of one prediction vector."""
    return float(_row_scores(metric, y[None, :], p[None, :])[0])


def paired_interval(metric: str, y: np.ndarray, a: np.ndarray, b: np.ndarray,
                    rng: np.random.Generator, resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """The LEVEL interval of score(a) - score(b) over paired resamples of the molecules."""
    diffs: list[np.ndarray] = []
    n, have = len(y), 0
    while have < resamples:
        i = rng.integers(0, n, (resamples, n))
        d = _row_scores(metric, y[i], a[i]) - _row_scores(metric, y[i], b[i])
        d = d[~np.isnan(d)]
        diffs.append(d)
        have += len(d)
        if not have and len(diffs) > 3:
            raise ValueError(f"no resample where {metric} is defined (one class, no spread)")
    d = np.concatenate(diffs)[:resamples]
    lo, hi = np.quantile(d, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


# the words of a verdict, (interval above 0, below 0, holding 0), for the reader at hand: a
# model against another, a default's pooled effect, one arm of a paired comparison
BETTER_WORSE = ("better", "worse", "tied")
HELPS_HURTS = ("helps", "hurts", "neutral")


def verdict(lo: float, hi: float, words: tuple[str, str, str] = BETTER_WORSE) -> str:
    """The one verdict of a 95 % interval of a difference (signed: above 0 is better): the
    first word when it lies above 0, the second when below, else the third."""
    return words[0] if lo > 0 else words[1] if hi < 0 else words[2]
