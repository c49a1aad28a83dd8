"""The tree member's weight in an ensemble's mean, chosen on the validation split.

``fit_tree_weight`` takes the weight w of `WEIGHT_GRID` that scores best on validation; the
graph members share 1 - w equally. On the small validation splits of real ADMET tables (47-150
molecules) that choice overfits: it won validation on 6 of 6 TDC tasks and test on none
(docs/results/defaults.md; the campaign is at commit ff74c75). With a ``prior`` weight it follows the
one-standard-error rule (Breiman et al. 1984, *Classification and Regression Trees*, §3.4.3):
the fitted weight replaces the prior only when it beats the prior's validation score by more
than one bootstrap standard error of that difference,

    keep prior unless  s(w*) - s(prior) > SE_boot[s(w*) - s(prior)]   (s: higher is better),

so a validation split too small to tell the two apart keeps the prior, while a table where one
member is far better (QED: the Graphormer) still moves the weight.
"""
from __future__ import annotations

import numpy as np

from graphnorm.ensemble import MEAN, Ensemble, Member

WEIGHT_GRID = tuple(round(0.1 * k, 1) for k in range(11))
BOOTSTRAP_DRAWS = 200


def member_weights(w: float, tree: list[bool], dtype):
    """[M]: w for the tree member, 1 - w shared by the graph members."""
    import torch

    graphs = len(tree) - sum(tree)
    return torch.tensor([w if t else (1 - w) / graphs for t in tree], dtype=dtype)


def _blend(preds, w: float, tree: list[bool], average: str = MEAN):
    """The members' predictions [M, N, T] combined at weight w as the ensemble would be
    (`Ensemble.combine`; members known here by their predictions only): [N, T]."""
    weights = member_weights(w, tree, preds.dtype).tolist()
    return Ensemble(tuple(Member(None, weight=v) for v in weights), average).combine(preds)


def _score(metric, preds, y, w, tree, average=MEAN):
    from graphnorm.tasks import compute_metric

    return compute_metric(metric, _blend(preds, w, tree, average), y)


def beats_prior(metric: str, preds, y, tree: list[bool], w: float, prior: float,
                draws: int = BOOTSTRAP_DRAWS, seed: int = 0, average: str = MEAN) -> bool:
    """Whether weight ``w`` beats ``prior`` on these rows by more than one bootstrap standard
    error of the score difference (rows resampled with replacement, ``draws`` times)."""
    from graphnorm.tasks import HIGHER_IS_BETTER, compute_metric

    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    fitted, kept = _blend(preds, w, tree, average), _blend(preds, prior, tree, average)  # once
    gain = sign * (compute_metric(metric, fitted, y) - compute_metric(metric, kept, y))
    rng = np.random.default_rng(seed)
    n = preds.shape[1]
    diffs = []
    for _ in range(draws):
        rows = rng.integers(0, n, n)
        d = sign * (compute_metric(metric, fitted[rows], y[rows]) - compute_metric(metric, kept[rows], y[rows]))
        if not np.isnan(d):
            diffs.append(d)
    return len(diffs) > 1 and gain > float(np.std(diffs, ddof=1))


EQUAL = "equal"  # a prior: the tree member weighs as one member of M (1 / M)


def prior_weight(prior, tree: list[bool]) -> float:
    """The prior as a number: `EQUAL` is the share of one member among ``len(tree)``."""
    return sum(tree) / len(tree) if prior == EQUAL else float(prior)


def fit_tree_weight(metric: str, preds, y, tree: list[bool], prior=None, average: str = MEAN):
    """Member weights [M]: the tree member's weight w from `WEIGHT_GRID` that scores best on
    these (validation) predictions [M, N, T], the graph members sharing 1 - w equally; with
    ``prior`` (a weight, or `EQUAL`), that w only where it beats the prior by more than one
    standard error. ``average``: how the members are averaged (graphnorm.ensemble)."""
    from graphnorm.tasks import HIGHER_IS_BETTER

    prior = None if prior is None else prior_weight(prior, tree)

    scored = [(_score(metric, preds, y, w, tree, average), w) for w in WEIGHT_GRID]
    scored = [(v, w) for v, w in scored if not np.isnan(v)]
    if not scored:
        return member_weights(prior if prior is not None else sum(tree) / len(tree), tree, preds.dtype)
    best = (max if HIGHER_IS_BETTER[metric] else min)(scored, key=lambda t: t[0])[1]
    if prior is not None and best != prior and not beats_prior(metric, preds, y, tree, best, prior,
                                                                  average=average):
        best = prior
    return member_weights(best, tree, preds.dtype)


def tree_weight_rule(text: str) -> tuple[bool, float | str | None]:
    """``--tree-weight`` read as (fit on validation?, prior weight): ``equal`` (False, None),
    ``val`` (True, None), a number ``0.7`` (False, 0.7: fixed), ``val:0.7`` (True, 0.7: fitted
    under the one-standard-error rule toward 0.7), ``val:equal`` (True, `EQUAL`: toward one
    member's share). Raises ValueError naming the value."""
    if text in ("equal", "val"):
        return text == "val", None
    if text == f"val:{EQUAL}":
        return True, EQUAL
    fit, _, number = str(text).partition(":") if str(text).startswith("val:") else ("", "", text)
    try:
        prior = float(number)
    except ValueError:
        prior = -1.0
    if not 0.0 <= prior <= 1.0:
        raise ValueError(f"tree weight {text!r}: use equal, val, a weight in [0, 1] such as 0.7, "
                         "or val:W / val:equal (fitted on validation, W or one member's share "
                         "unless the fit is better by more than one standard error)")
    return fit == "val", prior
