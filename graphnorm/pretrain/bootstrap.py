"""The panel's metrics and a paired bootstrap of their difference, for comparing two
predictions of the same held-out molecules (`compare`: backbone against backbone;
`versus_gbm`: backbone against one model per table).

Resamples are drawn all at once (a [B, n] index matrix) and scored row-wise: ROC-AUC from
average ranks (Mann-Whitney U / (n+ n-)), R² from row means; a resample with one class only,
where ROC-AUC is undefined, is left out and replaced.
"""
from __future__ import annotations

import numpy as np

BOOTSTRAP, LEVEL, SEED = 1000, 0.95, 0


def _row_scores(binary: bool, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Score of each row of y, p [B, n] (NaN where a row has one class only)."""
    if binary:
        from scipy.stats import rankdata

        ranks = rankdata(p, axis=1)
        pos = y.sum(1)
        neg = y.shape[1] - pos
        u = (ranks * y).sum(1) - pos * (pos + 1) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((pos > 0) & (neg > 0), u / (pos * neg), np.nan)
    var = y.var(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, 1 - ((y - p) ** 2).mean(1) / var, np.nan)


def score(binary: bool, y: np.ndarray, p: np.ndarray) -> float:
    """The panel's metric of one prediction vector."""
    return float(_row_scores(binary, y[None, :], p[None, :])[0])


def paired_interval(binary: bool, y: np.ndarray, a: np.ndarray, b: np.ndarray,
                    rng: np.random.Generator, resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """The LEVEL interval of score(a) - score(b) over paired resamples of the molecules."""
    diffs: list[np.ndarray] = []
    n, have = len(y), 0
    while have < resamples:
        i = rng.integers(0, n, (resamples, n))
        d = _row_scores(binary, y[i], a[i]) - _row_scores(binary, y[i], b[i])
        d = d[~np.isnan(d)]
        diffs.append(d)
        have += len(d)
        if not have and len(diffs) > 3:
            raise ValueError("no resample holds both classes")
    d = np.concatenate(diffs)[:resamples]
    lo, hi = np.quantile(d, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


def verdict(lo: float, hi: float) -> str:
    return "better" if lo > 0 else "worse" if hi < 0 else "tied"
