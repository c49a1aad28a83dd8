"""Boosted trees on the MapLight feature set (``--model gbm``).

Gradient-boosted decision trees (Friedman 2001, https://doi.org/10.1214/aos/1013203451) in
LightGBM (Ke et al. 2017, https://papers.nips.cc/paper/6907) on ECFP4 + Avalon counts, ErG and
RDKit 2D descriptors (`graphnorm.chem.tabular`, "maplight"), the recipe of the MapLight
entries of the TDC ADMET leaderboard (Notwell & Wood 2023), which used CatBoost. LightGBM,
because on the same features and splits it fits ~40x faster than CatBoost's defaults for a
similar error (experiments/results/tdc_admet/gbm_library/), so it costs seconds beside a
Graphormer member instead of minutes. One booster per target, fitted on the rows labelled for it.

Heavy-tailed positive targets (half-life in hours, volumes, clearances) are fitted in log10
units when the training labels ask for it (`graphnorm.tasks.target_transforms`, the rule the
graph models share), and predictions are
returned in the user's units; the choice is announced and stored with the model.

As an estimator (scikit-learn's ``fit(X, y)`` / ``predict(X)``): `boosted_trees` is a
`PerTarget` of `BoostedTarget`, wrapped in `Log10Target` for a log10 target
(graphnorm/baselines/estimators.py); `fit_boosted` / `predict_boosted` fit it and predict with
what it stores.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from graphnorm.tasks import resolve_task

from .estimators import PerTarget, with_transform


@dataclass(frozen=True)
class BoostedConfig:
    n_estimators: int = 500
    learning_rate: float = 0.03
    num_leaves: int = 31
    min_child_samples: int = 10
    colsample_bytree: float = 0.3  # of ~2.6k features per tree: decorrelates the trees
    subsample: float = 0.8
    subsample_freq: int = 1
    reg_lambda: float = 1.0

    def to_dict(self) -> dict:
        return asdict(self)


class BoostedTarget:
    """One target's LightGBM booster as a scikit-learn-style estimator: ``fit(X, y)`` on the
    labelled rows, ``predict(X)`` the value (binary: the probability of 1). A binary
    target whose training rows hold one class is its rate (nothing to learn). ``model``: the
    fitted ``lightgbm.Booster`` or that rate, what ``gbm.json`` stores (`from_model` reads
    it back)."""

    def __init__(self, binary: bool = False, config: BoostedConfig = BoostedConfig(),
                 seed: int = 0, threads: int = 1):
        self.binary, self.config, self.seed, self.threads = binary, config, seed, threads

    def fit(self, X: np.ndarray, y: np.ndarray, init_score=None) -> "BoostedTarget":
        """``init_score``: a per-row margin the trees start from (log-odds when binary) and
        that prediction leaves out -- e.g. a source's offset to the scale predicted."""
        import lightgbm as lgb

        params = dict(self.config.to_dict(), random_state=self.seed, n_jobs=self.threads,
                      verbose=-1)
        if self.binary:
            y = y.astype(int)
            if len(np.unique(y)) < 2:  # one class: nothing to learn, predict its rate
                self.model = float(y.mean())
                return self
            self.model = lgb.LGBMClassifier(**params).fit(X, y, init_score=init_score).booster_
        else:
            self.model = lgb.LGBMRegressor(**params).fit(X, y, init_score=init_score).booster_
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        if isinstance(self.model, float):
            return np.full(X.shape[0], self.model)
        return self.model.predict(X)  # a binary booster predicts the probability of 1

    @classmethod
    def from_model(cls, model) -> "BoostedTarget":
        """The estimator of a stored booster (or rate)."""
        fitted = cls()
        fitted.model = model
        return fitted


def boosted_trees(task, seed: int = 0, threads: int = 1, config: BoostedConfig = BoostedConfig(),
                  transforms=None) -> PerTarget:
    """The gbm kind's estimator: a `BoostedTarget` per target column, in log10 units where
    ``transforms`` says "log10" (`Log10Target`; regression only); ``task``: a task or its
    name (`graphnorm.tasks`)."""
    binary = resolve_task(task).binary

    def make(j):
        return with_transform(BoostedTarget(binary, config, seed, threads),
                              None if binary or not transforms else transforms[j])

    return PerTarget(make)


def fitted_boosters(task, models: list, transforms=None) -> PerTarget:
    """`boosted_trees` as stored (`PerTarget.models`: boosters, rates, None), ready to predict."""
    binary = resolve_task(task).binary
    return PerTarget(estimators_=[
        None if m is None else with_transform(BoostedTarget.from_model(m),
                                               None if binary or not transforms else transforms[j])
        for j, m in enumerate(models)])


def fit_boosted(task, x: np.ndarray, y: np.ndarray, seed: int, threads: int,
                config: BoostedConfig = BoostedConfig(), transforms=None) -> list:
    """One LightGBM booster per target (`boosted_trees` fitted; its stored models: None
    where the training split has no label); ``transforms``: per target "log10" or None."""
    return boosted_trees(task, seed, threads, config, transforms).fit(x, y).models


def predict_boosted(task, models: list, x: np.ndarray, transforms=None) -> np.ndarray:
    """[N, T] predictions in the user's units (probabilities of 1 for binary targets; NaN for
    a target that had no training label)."""
    return fitted_boosters(task, models, transforms).predict(x)
