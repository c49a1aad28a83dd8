"""Split-conformal prediction intervals and probability calibration: the statistics, given
validation (or held-out) predictions and labels. Used by `predict` (a model's intervals and
calibrated probabilities), the ADMET panel (its endpoints' intervals and Platt scales) and
the benchmark's interval report.

Regression (Vovk et al. 2005; Lei et al. 2018, https://arxiv.org/abs/1604.04173): with the
absolute residuals ``r_i = |y_i - f(x_i)|`` of the n validation molecules, the interval
``f(x) ± q``, ``q`` the ``ceil((n + 1) level) / n`` empirical quantile of ``r``, covers a new
exchangeable molecule's label with probability >= ``level`` (and < level + 1 / (n + 1)). It is
a guarantee on average over molecules, not per molecule, and only for molecules like the
validation ones (a random split; a scaffold split's test molecules are less alike). The
width is the same for every molecule: the ensemble std ranks errors too poorly to scale it
(README: Ensembles). The validation split also chose the best epoch, which makes its
residuals slightly optimistic; coverage is therefore measured on test splits
(``experiments/results/small_tables/``).

Classification: the expected calibration error (ECE, Guo et al. 2017,
https://arxiv.org/abs/1706.04599) and Platt (logistic on the logit) or isotonic calibration
fitted on the validation predictions.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd


def conformal_quantile(residuals: np.ndarray, level: float) -> float:
    """The split-conformal quantile of absolute residuals at coverage ``level`` (inf when the
    validation split is too small for that level: fewer than 1 / (1 - level) - 1 molecules)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"interval level must lie in (0, 1), e.g. 0.9; got {level}")
    r = np.sort(np.asarray(residuals, dtype=float)[~np.isnan(residuals)])
    n = len(r)
    k = math.ceil((n + 1) * level)
    return float("inf") if n == 0 or k > n else float(r[k - 1])


def interval_halfwidths(val: pd.DataFrame, level: float) -> dict[str, float]:
    """Target name -> q of `conformal_quantile` on that target's labelled validation rows."""
    out = {}
    for col in (c for c in val.columns if c.startswith("y:")):
        name = col[2:]
        resid = np.abs(val[col].to_numpy(float) - val[f"pred:{name}"].to_numpy(float))
        out[name] = conformal_quantile(resid, level)
    return out


def coverage(lo: np.ndarray, hi: np.ndarray, y: np.ndarray) -> float:
    """Fraction of labelled rows with lo <= y <= hi."""
    have = ~np.isnan(y)
    return float(((y[have] >= lo[have]) & (y[have] <= hi[have])).mean()) if have.any() else math.nan


def expected_calibration_error(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """ECE of binary probabilities: sum over equal-width bins of (bin share) x |mean p - mean y|."""
    have = ~np.isnan(y)
    p, y = np.asarray(p, float)[have], np.asarray(y, float)[have]
    if len(p) == 0:
        return math.nan
    which = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum(abs(p[which == b].mean() - y[which == b].mean()) * (which == b).mean()
                     for b in range(bins) if (which == b).any()))


class ProbabilityCalibrator:
    """Platt scaling (a logistic regression on the logit of p) or isotonic regression of the
    labels on p, fitted on validation predictions of one target."""

    def __init__(self, method: str):
        if method not in ("platt", "isotonic"):
            raise ValueError(f"calibration must be platt or isotonic, got {method!r}")
        self.method = method

    def fit(self, p: np.ndarray, y: np.ndarray) -> "ProbabilityCalibrator":
        have = ~np.isnan(y)
        p, y = np.asarray(p, float)[have], np.asarray(y, float)[have]
        if len(np.unique(y)) < 2:
            raise ValueError("probability calibration needs both classes among the validation "
                             "molecules")
        if self.method == "platt":
            from sklearn.linear_model import LogisticRegression

            self.model = LogisticRegression(C=1e6).fit(_logit(p)[:, None], y.astype(int))
        else:
            from sklearn.isotonic import IsotonicRegression

            self.model = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(p, y)
        return self

    def transform(self, p: np.ndarray) -> np.ndarray:
        p = np.asarray(p, float)
        out = np.full_like(p, np.nan)
        ok = ~np.isnan(p)
        if not ok.any():  # a chunk of failed rows: scikit-learn refuses zero samples
            return out
        if self.method == "platt":
            out[ok] = self.model.predict_proba(_logit(p[ok])[:, None])[:, 1]
        else:
            out[ok] = self.model.predict(p[ok])
        return out


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))
