"""What a tree kind reads: the fingerprint sets of `graphnorm.chem.tabular` (``morgan``,
``maplight``), and ``maplight+admet``: ``maplight`` and the 9 measured properties the shipped
ADMET boosters predict from it (lipophilicity, solubility, plasma protein binding, LD50,
CYP2C9/2D6/3A4 inhibition, Ames, HIV; `graphnorm.baselines.admet_boosters`) -- what large
public tables measured, read by a model of a small table.

The same three functions for every set: `width`, `signature` (stored with a fitted model,
which refuses vectors of another) and `feature_matrix`; `cache_source` is what
`graphnorm.data.feature_cache.table_features` needs to cache a set the chemistry layer does
not name.
"""
from __future__ import annotations

from functools import partial

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


def feature_matrix(name: str, smiles: list[str]) -> np.ndarray:
    """float32 [N, width] (a SMILES RDKit cannot read is raised, named)."""
    _check(name)
    if not name.endswith(ADMET):
        return tabular.feature_matrix(name, smiles)
    from .admet_boosters import admet_features

    base = tabular.feature_matrix(name.removesuffix(ADMET), smiles)
    return np.hstack([base, admet_features(base)])


def cache_source(name: str):
    """``computed_by`` of `table_features`: None for the chemistry layer's own sets."""
    return None if name in tabular.FEATURE_SETS else (signature(name), partial(feature_matrix, name))
