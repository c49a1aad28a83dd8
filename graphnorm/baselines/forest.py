"""The chemist's baseline: a random forest on Morgan count fingerprints (``--model rf``).

Breiman (2001), https://doi.org/10.1023/A:1010933404324, on ECFP4-like counts (Rogers & Hahn
2010, https://doi.org/10.1021/ci100050t): radius 2, 2048 folded counts per molecule, one
scikit-learn forest per target fitted on the rows labelled for it. It reads a user table
exactly as the graph models do (`load_table_dataset`: same rows, same split), and writes the
same run files (``metrics.json``, ``predictions_{val,test}.csv.gz``, ``splits.json``;
``graphnorm/train/tree_run.py``), so ``benchmark --models graphormer,rf`` pairs it with the
Graphormer split by split. Its fitted forests are saved beside them (``forest.skops``,
`graphnorm/baselines/forest_file.py`), so ``predict`` loads a forest run, alone or as one
member of an ensemble with graph models. As an estimator (``fit(X, y)`` / ``predict(X)``):
`random_forests`, a `PerTarget` of `ForestTarget` (graphnorm/baselines/estimators.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphnorm.tasks import resolve_task

from .estimators import PerTarget

COUNT_RADIUS, COUNT_BITS = 2, 2048


@dataclass(frozen=True)
class ForestConfig:
    n_estimators: int = 500
    max_features: float = 0.3  # of the 2048 counts per split; sklearn's 1.0 overfits counts
    min_samples_leaf: int = 1


def morgan_counts(smiles: list[str], bits: int = COUNT_BITS) -> np.ndarray:
    """float32 [N, bits] folded Morgan counts of radius 2 (the featurizer's generator,
    `chem.molecule.morgan_generator`); the rows were sanitized by the table reader already,
    so a failure here is a bug, raised with the SMILES."""
    from rdkit import Chem

    from graphnorm.chem.molecule import morgan_generator

    gen = morgan_generator(bits)
    out = np.zeros((len(smiles), bits), dtype=np.float32)
    for i, s in enumerate(smiles):
        mol = Chem.MolFromSmiles(s)
        if mol is None:
            raise ValueError(f"random forest: RDKit cannot read SMILES {s!r}")
        out[i] = gen.GetCountFingerprintAsNumPy(mol)
    return out


class ForestTarget:
    """One target's random forest as a scikit-learn-style estimator: ``fit(X, y)`` on the
    labelled rows, ``predict(X)`` the value (binary: the probability of 1; 0 where training
    saw no 1). ``model``: the fitted scikit-learn forest, what ``forest.skops`` stores
    (`from_model` reads it back)."""

    def __init__(self, binary: bool = False, config: ForestConfig = ForestConfig(),
                 seed: int = 0, threads: int = 1):
        self.binary, self.config, self.seed, self.threads = binary, config, seed, threads

    def fit(self, X: np.ndarray, y: np.ndarray) -> "ForestTarget":
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

        c = self.config
        kw = dict(n_estimators=c.n_estimators, max_features=c.max_features,
                  min_samples_leaf=c.min_samples_leaf, random_state=self.seed, n_jobs=self.threads)
        if self.binary:
            self.model = RandomForestClassifier(**kw).fit(X, y.astype(int))
        else:
            self.model = RandomForestRegressor(**kw).fit(X, y)
        return self

    def predict(self, X: np.ndarray):
        if not self.binary:
            return self.model.predict(X)
        classes = list(self.model.classes_)  # a training split with one class has no "1"
        return self.model.predict_proba(X)[:, classes.index(1)] if 1 in classes else 0.0

    @classmethod
    def from_model(cls, model, binary: bool) -> "ForestTarget":
        """The estimator of a stored forest."""
        fitted = cls(binary)
        fitted.model = model
        return fitted


def random_forests(task, seed: int = 0, threads: int = 1,
                   config: ForestConfig = ForestConfig()) -> PerTarget:
    """The rf kind's estimator: a `ForestTarget` per target column; ``task``: a task or its
    name (`graphnorm.tasks`)."""
    binary = resolve_task(task).binary
    return PerTarget(lambda j: ForestTarget(binary, config, seed, threads))


def fitted_forests(task, forests: list) -> PerTarget:
    """`random_forests` as stored (`PerTarget.models`: forests, None), ready to predict."""
    binary = resolve_task(task).binary
    return PerTarget(estimators_=[None if f is None else ForestTarget.from_model(f, binary)
                                  for f in forests])


def fit_forests(task, x_train: np.ndarray, y_train: np.ndarray, seed: int,
                threads: int, config: ForestConfig = ForestConfig()) -> list:
    """One forest per target, fitted on its labelled training rows (None for a target with
    no label in the training split): `random_forests` fitted, its stored models."""
    return random_forests(task, seed, threads, config).fit(x_train, y_train).models


def predict_forests(task, forests: list, x: np.ndarray) -> np.ndarray:
    """Predictions [N, T] of `fit_forests`' forests (probabilities of 1 for binary targets;
    NaN for a target that had no training label)."""
    return fitted_forests(task, forests).predict(x)
