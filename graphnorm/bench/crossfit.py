"""A cross-fitted validation score: what a run chose on its validation rows, chosen on one half
and scored on the other.

A run picks its checkpoint (the stopping step) and, under ``--tree-weight val…``, its tree
member's weight on the validation split, then reports the validation score of that choice:
on a small split the choice has fitted the rows it is scored on. Cross-fitting (Chernozhukov
et al. 2018, *Double/debiased machine learning*, Econometrics Journal 21, §3) splits the
validation rows into K folds (`folds_of`: by a hash of the SMILES, each class dealt evenly)
and, for each fold k,

    choice_k = argbest_c  score(c; rows not in k)        ŷ[k] = prediction of choice_k on k,

then scores the pooled out-of-fold predictions ŷ once on all rows. Each graph member's step is
chosen by its own metric, as the run chose its ``best.ckpt``; the tree member's weight is
refitted only where the run fitted it (the same rule, `member_weights.fit_tree_weight`), else
the run's weights are kept. What cannot be undone: a run with ``--patience`` stopped when
*all* rows stopped improving, so later steps are missing from its trace.

Reads a run folder trained with ``--trace-validation`` (`graphnorm.train.val_trace`): a single
graph run, or an ensemble whose graph members have traces and whose tree member has its
validation predictions (``predictions_val.csv.gz``). A tree model alone (``--model gbm``)
chose nothing on validation: its cross-fitted score is its validation score.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from graphnorm.run_folder import ENSEMBLE_FILE, METRICS_FILE

FOLDS = 2


@dataclass(frozen=True)
class CrossFit:
    """The cross-fitted score and what it was made of: the plain validation score of the same
    members (each at its own best step on all rows), the steps chosen per fold and member,
    and the folds' sizes."""
    metric: str
    crossfit: float
    plain: float
    steps: list  # [fold][graph member]
    fold_sizes: list
    weights_refitted: bool

    def to_dict(self) -> dict:
        return asdict(self)


def _best(metric: str, preds: np.ndarray, y: np.ndarray) -> int:
    """Index of the best of ``preds`` [S, N, T] on labels ``y`` (the first among equals, as
    the run's checkpoint keeps the first best); a degenerate slice scores worst."""
    import torch

    from graphnorm.tasks import HIGHER_IS_BETTER, compute_metric

    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    scores = []
    for p in preds:
        value = compute_metric(metric, torch.from_numpy(p), torch.from_numpy(y))
        scores.append(-np.inf if np.isnan(value) else sign * value)
    return int(np.argmax(scores))


def folds_of(smiles, y=None, k: int = FOLDS) -> np.ndarray:
    """Fold of each molecule: the rows ordered by a hash of their SMILES (stable, independent
    of the other rows' order) and dealt out 0, 1, ..., k-1 in turn; within each class where
    ``y`` is one binary label, so that every fold holds both classes. Not by scaffold: a TDC
    validation split is often a single scaffold group (dili, seed 1: 54 benzene derivatives)."""
    import hashlib

    smiles = list(smiles)
    labels = np.zeros((len(smiles), 0)) if y is None else np.asarray(y, float).reshape(len(smiles), -1)
    binary = labels.shape[1] == 1 and bool(np.isin(labels[:, 0], (0.0, 1.0)).all())
    groups = labels[:, 0] if binary else np.zeros(len(smiles))
    keys = [hashlib.sha256(s.encode()).hexdigest() for s in smiles]
    fold = np.zeros(len(smiles), dtype=int)
    for g in np.unique(groups):
        rows = sorted(np.flatnonzero(groups == g), key=lambda r: (keys[r], r))
        fold[rows] = np.arange(len(rows)) % k
    return fold


def _members(run: Path):
    """(graph members' traces, tree members' validation predictions aligned to the first
    trace's rows [M_tree, N, T], the ensemble (None for a single run), its tree flags)."""
    from graphnorm.ensemble import Ensemble
    from graphnorm.train.val_trace import TraceError, read_trace

    if not (run / ENSEMBLE_FILE).is_file():
        return [read_trace(run)], np.zeros((0,)), None, [False]
    ensemble = Ensemble.read(run)
    traces = [read_trace(m.path.parent) for m in ensemble.members if not m.tree]
    if not traces:
        raise TraceError(f"{run}: an ensemble of tree members only: nothing was chosen by step")
    smiles = list(traces[0]["smiles"])
    for t in traces[1:]:
        if list(t["smiles"]) != smiles:
            raise TraceError(f"{run}: the graph members validated on different molecules")
    trees = []
    for m in ensemble.members:
        if m.tree:
            import pandas as pd

            frame = pd.read_csv(m.predictions("val"))
            cols = [c for c in frame.columns if c.startswith("pred:")]
            if frame["smiles"].tolist() != smiles:  # the members score one split in one order
                raise TraceError(f"{m.predictions('val')}: not the graph members' validation "
                                 "molecules in their order: rows cannot be matched")
            trees.append(frame[cols].to_numpy(dtype=np.float32))
    return traces, np.stack(trees) if trees else np.zeros((0,)), ensemble, ensemble.tree


def crossfit_run(run, folds: int = FOLDS, weights: Optional[list[float]] = None) -> CrossFit:
    """The cross-fitted validation score of a run folder (module docstring); with ``weights``
    (one per member, in ensemble.json's order), the score the ensemble would have at those
    fixed weights: nothing refitted (e.g. another tree weight for a recipe, RULE.md O)."""
    import torch

    from graphnorm.tasks import compute_metric
    from graphnorm.train.member_weights import fit_tree_weight, tree_weight_rule

    from graphnorm.models import model_kind

    run = Path(run)
    record = json.loads((run / METRICS_FILE).read_text())
    metric = record["metric"]
    config = record.get("config") or {}
    kind = record.get("model") or config.get("model_name")
    if not (run / ENSEMBLE_FILE).is_file() and kind and model_kind(kind).tree:
        # a tree model alone chose nothing on validation: its score needs no cross-fitting
        value = float(record[f"val_{metric}"])
        return CrossFit(metric, value, value, [], [], False)
    traces, trees, ensemble, tree = _members(run)
    if weights is not None:
        if ensemble is None:
            raise ValueError(f"{run}: member weights for a run that is not an ensemble")
        ensemble = ensemble.weighted(weights)
    y = traces[0]["y"]
    fold = folds_of(traces[0]["smiles"], y, folds)
    refit, prior = tree_weight_rule(config.get("tree_weight", "equal"))
    refit = (bool(refit) and weights is None and ensemble is not None and any(tree)
             and not all(tree))

    def combined(step_index: list, rows: np.ndarray, weights_from: Optional[np.ndarray]):
        """The ensemble's prediction on ``rows`` with each graph member at its step; the tree
        weight refitted on ``weights_from`` rows where the run fitted it."""
        graph = iter([t["preds"][s] for t, s in zip(traces, step_index)])
        tree_iter = iter(trees)
        members = np.stack([next(tree_iter) if is_tree else next(graph) for is_tree in tree])
        if ensemble is None:
            return members[0][rows]
        chosen = ensemble
        if refit and weights_from is not None:
            w = fit_tree_weight(metric, torch.from_numpy(members[:, weights_from]),
                                torch.from_numpy(y[weights_from]), tree, prior, ensemble.average)
            chosen = ensemble.weighted(w.tolist())
        return chosen.combine(members[:, rows])

    pooled = np.zeros_like(y)
    steps = []
    for k in range(folds):
        held, choose = fold == k, fold != k
        if not held.any():
            continue
        index = [_best(metric, t["preds"][:, choose], y[choose]) for t in traces]
        steps.append([int(t["steps"][i]) for t, i in zip(traces, index)])
        pooled[held] = combined(index, held, choose)
    everything = np.ones(len(y), dtype=bool)
    plain_index = [_best(metric, t["preds"], y) for t in traces]
    plain = combined(plain_index, everything, everything if refit else None)
    score = lambda p: float(compute_metric(metric, torch.from_numpy(p), torch.from_numpy(y)))  # noqa: E731
    return CrossFit(metric, score(pooled), score(plain), steps,
                    [int((fold == k).sum()) for k in range(folds)], refit)
