"""The tree-model kinds, one entry each: what a kind reads, how it fits, predicts, saves and
loads. ``train --model rf|gbm``, ensembles (``--forest-member``, ``--forest-model``),
benchmarks and ``predict`` ask this table instead of branching on names; a new tree kind is
one module for its model, one for its file, and one entry here.

- ``rf``: a random forest on 2048 Morgan counts (`graphnorm.baselines.forest`), saved with
  skops (``forest.skops``); an ensemble member in ``OUT/forest``.
- ``gbm``: LightGBM on the MapLight features (`graphnorm.baselines.boosted`), saved in
  LightGBM's text format (``gbm.json``); an ensemble member in ``OUT/gbm``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional


@dataclass(frozen=True)
class TreeKind:
    name: str
    label: str  # what users read in messages
    feature_set: str  # graphnorm.chem.tabular
    model_file: str  # the file in a run folder that `predict` loads
    member_dir: str  # its folder as an ensemble member
    fit: Callable  # (task, x, y [N, T], seed, threads) -> (models, config, transforms)
    predict: Callable  # (task, models, x, transforms) -> [N, T]; task: graphnorm.tasks.Task
    save: Callable  # (out, models, task, features, config, seed, transforms) -> Path
    load: Callable  # (path) -> TreeMember


def _fit_forest(task, x, y, seed, threads):
    from .forest import ForestConfig, fit_forests

    return fit_forests(task, x, y, seed, threads), ForestConfig().__dict__, [None] * y.shape[1]


def _predict_forest(task, models, x, transforms):
    from .forest import predict_forests

    return predict_forests(task, models, x)


def _save_forest(out, models, task, features, config, seed, transforms):
    from .forest_file import save_forest

    fingerprint = {"radius": features["morgan_radius"], "bits": features["width"],
                   "kind": "Morgan counts"}
    return save_forest(out, models, task, fingerprint, config, seed)


def _load_forest(path):
    from .forest_file import load_forest

    return load_forest(path)


def _fit_boosted(task, x, y, seed, threads):
    from .boosted import BoostedConfig, fit_boosted, log_transform_wanted

    transforms = [("log10" if not task.binary and log_transform_wanted(y[:, j]) else None)
                  for j in range(y.shape[1])]
    config = BoostedConfig()
    return fit_boosted(task, x, y, seed, threads, config, transforms), config.to_dict(), transforms


def _predict_boosted(task, models, x, transforms):
    from .boosted import predict_boosted

    return predict_boosted(task, models, x, transforms)


def _save_boosted(out, models, task, features, config, seed, transforms):
    from .boosted_file import save_boosted

    return save_boosted(out, models, task, features, config, seed, transforms)


def _load_boosted(path):
    from .boosted_file import load_boosted

    return load_boosted(path)


TREE_KINDS = {
    "rf": TreeKind("rf", "random forest on Morgan counts", "morgan", "forest.skops", "forest",
                   _fit_forest, _predict_forest, _save_forest, _load_forest),
    "gbm": TreeKind("gbm", "LightGBM on MapLight features", "maplight", "gbm.json", "gbm",
                    _fit_boosted, _predict_boosted, _save_boosted, _load_boosted),
}


def tree_kind(name: str) -> TreeKind:
    if name not in TREE_KINDS:
        raise ValueError(f"unknown tree model {name!r}; choose from {', '.join(TREE_KINDS)}")
    return TREE_KINDS[name]


def kind_of_file(path) -> Optional[TreeKind]:
    """The tree kind whose saved model ``path`` is (by file name), else None (a graph
    checkpoint)."""
    name = Path(path).name
    return next((k for k in TREE_KINDS.values() if k.model_file == name), None)


def member_files(run: Path) -> list[Path]:
    """The tree members of an ensemble folder, in registry order."""
    return [run / k.member_dir / k.model_file for k in TREE_KINDS.values()
            if (run / k.member_dir / k.model_file).is_file()]

