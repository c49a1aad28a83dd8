"""The chemist's baseline: a random forest on Morgan count fingerprints (``--model rf``).

Breiman (2001), https://doi.org/10.1023/A:1010933404324, on ECFP4-like counts (Rogers & Hahn
2010, https://doi.org/10.1021/ci100050t): radius 2, 2048 folded counts per molecule, one
scikit-learn forest per target fitted on the rows labelled for it. It reads a user table
exactly as the graph models do (`load_table_dataset`: same rows, same split), and writes the
same run files (``metrics.json``, ``predictions_{val,test}.csv.gz``, ``splits.json``;
``graphnorm/train/tree_run.py``), so ``benchmark --models graphormer,rf`` pairs it with the
Graphormer split by split. Its fitted forests are saved beside them (``forest.skops``,
`graphnorm/baselines/forest_file.py`), so ``predict`` loads a forest run, alone or as one
member of an ensemble with graph models.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphnorm.tasks import resolve_task

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


def fit_forests(task, x_train: np.ndarray, y_train: np.ndarray, seed: int,
                threads: int, config: ForestConfig = ForestConfig()) -> list:
    """One forest per target, fitted on its labelled training rows (None for a target with
    no label in the training split); ``task``: a task or its name (`graphnorm.tasks`)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    binary = resolve_task(task).binary

    forests = []
    for j in range(y_train.shape[1]):
        have = ~np.isnan(y_train[:, j])
        if not have.any():
            forests.append(None)
            continue
        kw = dict(n_estimators=config.n_estimators, max_features=config.max_features,
                  min_samples_leaf=config.min_samples_leaf, random_state=seed, n_jobs=threads)
        if binary:
            forests.append(RandomForestClassifier(**kw).fit(x_train[have],
                                                            y_train[have, j].astype(int)))
        else:
            forests.append(RandomForestRegressor(**kw).fit(x_train[have], y_train[have, j]))
    return forests


def predict_forests(task, forests: list, x: np.ndarray) -> np.ndarray:
    """Predictions [N, T] of `fit_forests`' forests (probabilities of 1 for binary targets;
    NaN for a target that had no training label)."""
    binary = resolve_task(task).binary
    out = np.full((len(x), len(forests)), np.nan)
    for j, forest in enumerate(forests):
        if forest is None:
            continue
        if binary:
            classes = list(forest.classes_)  # a training split with one class has no "1"
            out[:, j] = forest.predict_proba(x)[:, classes.index(1)] if 1 in classes else 0.0
        else:
            out[:, j] = forest.predict(x)
    return out

