"""What the tree kinds share, in scikit-learn's shape (``fit(X, y)`` / ``predict(X)``):

- `Log10Target`: a transformed-target regressor -- fitted on log10 of the labels, predicting
  10 ** its inner prediction, so callers get the user's units (as sklearn's
  ``TransformedTargetRegressor(func=np.log10, inverse_func=...)``, but it also wraps an
  estimator loaded already fitted from a model file);
- `PerTarget`: one estimator per target column, each fitted on the rows labelled for it
  (None for a column without a label), predicting [N, T] with NaN where there is none.

A kind's one-target estimator (`graphnorm.baselines.boosted.BoostedTarget`,
`graphnorm.baselines.forest.ForestTarget`) holds the model it saves; `PerTarget.models`
lists them in the form the kind's file stores.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from graphnorm.tasks import LOG10


class Log10Target:
    """Fitted in log10 units, predicting in the user's (positive, heavy-tailed labels:
    half-lives, volumes, clearances; `graphnorm.tasks.target_transforms` chooses)."""
    transform = LOG10

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X: np.ndarray, y: np.ndarray, **fit_params) -> "Log10Target":
        self.estimator.fit(X, np.log10(y), **fit_params)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return 10.0 ** self.estimator.predict(X)

    @property
    def model(self):
        """What the kind's file stores: the inner estimator's model (in log10 units)."""
        return self.estimator.model


def with_transform(estimator, transform: Optional[str]):
    """``estimator`` wrapped for its target's transform (`Log10Target` for ``"log10"``)."""
    return Log10Target(estimator) if transform == LOG10 else estimator


class PerTarget:
    """One estimator per target column. ``make(j)`` builds column j's (unfitted) estimator;
    ``estimators_`` (after `fit`, or given when loaded from a file) holds them, None where
    the training rows had no label."""

    def __init__(self, make: Optional[Callable[[int], object]] = None,
                 estimators_: Optional[Sequence] = None):
        self.make = make
        if estimators_ is not None:
            self.estimators_ = list(estimators_)

    def fit(self, X: np.ndarray, Y: np.ndarray) -> "PerTarget":
        self.estimators_ = []
        for j in range(Y.shape[1]):
            have = ~np.isnan(Y[:, j])
            self.estimators_.append(self.make(j).fit(X[have], Y[have, j]) if have.any() else None)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """[N, T] in the user's units; NaN for a target that had no training label."""
        out = np.full((len(X), len(self.estimators_)), np.nan)
        for j, estimator in enumerate(self.estimators_):
            if estimator is not None:
                out[:, j] = estimator.predict(X)
        return out

    @property
    def models(self) -> list:
        """Per target the fitted model a kind's file stores (None: no label)."""
        return [None if e is None else e.model for e in self.estimators_]
