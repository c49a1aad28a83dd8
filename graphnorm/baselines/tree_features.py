"""What a tree kind reads: the fingerprint sets of `graphnorm.chem.tabular` (``morgan``,
``maplight``), and ``maplight+admet``: ``maplight`` and the 9 measured properties the shipped
ADMET boosters predict from it (lipophilicity, solubility, plasma protein binding, LD50,
CYP2C9/2D6/3A4 inhibition, Ames, HIV; `graphnorm.baselines.admet_boosters`) -- what large
public tables measured, read by a model of a small table.

The same functions for every set: `width`, `signature` (stored with a fitted model, which
refuses vectors of another) and `feature_matrix`; a table's run caches the base set's vectors
(`base_set`, `graphnorm.data.feature_cache.table_features`) and `extend`s them, so the
boosters' 9 predictions (milliseconds a molecule) never recompute MapLight.
"""
from __future__ import annotations

import numpy as np

from graphnorm.chem import tabular

ADMET = "+admet"  # the suffix of a set that appends the shipped boosters' predictions
FEATURE_SETS = tabular.FEATURE_SETS + ("maplight" + ADMET,)


def _check(name: str) -> None:
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {name!r}; choose from {', '.join(FEATURE_SETS)}")


def width(name: str) -> int:
    _check(name)
    if name.endswith(ADMET):
        from .admet_boosters import admet_columns

        return tabular.width(name.removesuffix(ADMET)) + len(admet_columns())
    return tabular.width(name)


def signature(name: str) -> dict:
    """What a vector of set ``name`` holds (the boosters' hash and columns for +admet)."""
    _check(name)
    if not name.endswith(ADMET):
        return tabular.signature(name)
    from .admet_boosters import admet_signature

    return dict(tabular.signature(name.removesuffix(ADMET)), set=name, width=width(name),
                **admet_signature())


def base_set(name: str) -> str:
    """The chemistry layer's set a set is built on (itself for morgan and maplight)."""
    _check(name)
    return name.removesuffix(ADMET)


def extend(name: str, base: np.ndarray) -> np.ndarray:
    """Set ``name``'s vectors from its base set's (the table's cached ones, or fresh)."""
    if not name.endswith(ADMET):
        return base
    from .admet_boosters import admet_features

    return np.hstack([base, admet_features(base)])


def feature_matrix(name: str, smiles: list[str]) -> np.ndarray:
    """float32 [N, width] (a SMILES RDKit cannot read is raised, named)."""
    return extend(name, tabular.feature_matrix(base_set(name), smiles))


def training_overlap(name: str, smiles: dict[str, list[str]]) -> dict[str, int] | None:
    """Molecules per split that set ``name``'s shipped models were fitted on (their features
    are in-sample there); None for a set without fitted parts."""
    if not name.endswith(ADMET):
        return None
    from .admet_boosters import admet_overlap

    return {split: admet_overlap(m) for split, m in smiles.items()}
