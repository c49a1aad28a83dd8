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
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from graphnorm.tasks import LOG10, resolve_task


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


def fit_boosted(task, x: np.ndarray, y: np.ndarray, seed: int, threads: int,
                config: BoostedConfig = BoostedConfig(), transforms=None) -> list:
    """One LightGBM booster per target (None where the training split has no label);
    ``transforms``: per target "log10" or None (regression only); ``task``: a task or its
    name (`graphnorm.tasks`)."""
    import lightgbm as lgb

    binary = resolve_task(task).binary

    models = []
    for j in range(y.shape[1]):
        have = ~np.isnan(y[:, j])
        if not have.any():
            models.append(None)
            continue
        target = y[have, j]
        params = dict(config.to_dict(), random_state=seed, n_jobs=threads, verbose=-1)
        if binary:
            target = target.astype(int)
            if len(np.unique(target)) < 2:  # one class: nothing to learn, predict its rate
                models.append(float(target.mean()))
                continue
            model = lgb.LGBMClassifier(**params)
        else:
            if transforms and transforms[j] == LOG10:
                target = np.log10(target)
            model = lgb.LGBMRegressor(**params)
        models.append(model.fit(x[have], target).booster_)
    return models


def predict_boosted(task, models: list, x: np.ndarray, transforms=None) -> np.ndarray:
    """[N, T] predictions in the user's units (probabilities of 1 for binary targets; NaN for
    a target that had no training label)."""
    binary = resolve_task(task).binary
    out = np.full((len(x), len(models)), np.nan)
    for j, model in enumerate(models):
        if model is None:
            continue
        if isinstance(model, float):
            out[:, j] = model
            continue
        pred = model.predict(x)  # a binary booster predicts the probability of 1
        if not binary and transforms and transforms[j] == LOG10:
            pred = 10.0 ** pred
        out[:, j] = pred
    return out
