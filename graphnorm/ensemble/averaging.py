"""How an ensemble's members are averaged into one prediction: the rule behind
`graphnorm.ensemble.Ensemble.combine`, which every place that averages members calls (the
ensemble's scores and fitted member weight in training, ``predict``/``serve``, the intervals
and calibration fitted on validation, a benchmark summary's seed and model-pair ensembles).

- ``mean``: the weighted mean in the user's units (probabilities for classification);
- ``logodds``: for classification, the weighted mean of the members' log-odds, mapped back
  to a probability,

      p = sigmoid(sum_m w_m * logit(clip(p_m, eps, 1 - eps))),

  the pooling of independent evidence (a weighted geometric mean of the odds; Genest &
  Zidek 1986, "Combining probability distributions", https://doi.org/10.1214/ss/1177013825).
  A confident member weighs more than under the mean; regression always takes ``mean``.

Measured (docs/results/defaults.md; the campaign is at commit ff74c75): for the admet default (Graphormer 0.3 +
boosted trees 0.7) log-odds scored validation +0.19 % (-0.21 to +0.54 %) over 110 task-seeds
of 13 classification tables, and is its rule there. Other ensembles keep ``mean``: a random
forest's probabilities are often exactly 0 or 1, whose clipped log-odds would rule the mean.
"""
from __future__ import annotations

from typing import Optional, Sequence

MEAN, LOGODDS = "mean", "logodds"
AVERAGES = (MEAN, LOGODDS)
EPS = 1e-6  # probabilities clipped before the log-odds: a member's 0 or 1 stays finite


def check_average(average: str) -> str:
    if average not in AVERAGES:
        raise ValueError(f"member average {average!r}: use {' or '.join(AVERAGES)}")
    return average


def average_for(task, configured: str) -> str:
    """The average an ensemble of ``task`` (a `Task`) uses: ``logodds`` only on classification."""
    return check_average(configured) if task.binary else MEAN


def average_members(preds, weights: Optional[Sequence[float]] = None, average: str = MEAN):
    """preds [M, N, T] (torch tensor or numpy array), weights [M] (None: equal) -> [N, T] in
    the same library and dtype. Called by `Ensemble.combine` only (a test keeps it so)."""
    import numpy as np

    if isinstance(preds, np.ndarray):
        def pool(x):
            return np.mean(x, axis=0) if weights is None else np.average(x, axis=0, weights=weights)

        if average == MEAN:
            return pool(preds)
        p = np.clip(preds, EPS, 1 - EPS)
        return 1.0 / (1.0 + np.exp(-pool(np.log(p) - np.log1p(-p))))
    import torch

    def pool(x):
        if weights is None:
            return x.mean(0)
        # the weights in the predictions' dtype (a list of floats, or a tensor)
        return torch.einsum("m,mnt->nt", torch.as_tensor(weights, dtype=x.dtype), x)

    if average == MEAN:
        return pool(preds)
    return torch.sigmoid(pool(torch.logit(preds, eps=EPS)))
