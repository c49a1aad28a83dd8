"""What a tree kind reads: the fingerprint sets of `graphnorm.chem.tabular` (``morgan``,
``maplight``), and ``maplight+admet``: ``maplight`` and the 9 measured properties the shipped
ADMET boosters predict from it (lipophilicity, solubility, plasma protein binding, LD50,
CYP2C9/2D6/3A4 inhibition, Ames, HIV; `graphnorm.baselines.admet_boosters`) -- what large
public tables measured, read by a model of a small table. ``boosters``: another boosters file
of the same format (``--admet-boosters``; `graphnorm.baselines.admet_loto`), None: the shipped.

The same functions for every set: `width`, `signature` (stored with a fitted model, which
refuses vectors of another) and `feature_matrix`; a table's run caches the base set's vectors
(`base_set`, `graphnorm.data.feature_cache.table_features`) and `extend`s them, so the
boosters' 9 predictions (milliseconds a molecule) never recompute MapLight.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from graphnorm.chem import tabular

ADMET = "+admet"  # the suffix of a set that appends the ADMET boosters' predictions
FEATURE_SETS = tabular.FEATURE_SETS + ("maplight" + ADMET,)
# the copy of a run's own boosters file in its folder (boosters other than the shipped ones:
# --admet-boosters, or the leave-own-task-out ones of `benchmark --suite tdc-admet`)
RUN_BOOSTERS = "admet_boosters.json.gz"


def _check(name: str, boosters=None) -> None:
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {name!r}; choose from {', '.join(FEATURE_SETS)}")
    if boosters is not None and not name.endswith(ADMET):
        raise ValueError(f"--admet-boosters is read by --tree-features maplight{ADMET}, "
                         f"not by {name}")


def _file(boosters) -> Path:
    from .admet_boosters import ADMET_FILE

    return ADMET_FILE if boosters is None else Path(boosters)


def _own(boosters) -> bool:
    """Boosters other than the shipped ones (a run keeps a copy of their file)."""
    return boosters is not None and _file(boosters).resolve() != _file(None).resolve()


def width(name: str, boosters=None) -> int:
    _check(name, boosters)
    if name.endswith(ADMET):
        from .admet_boosters import admet_columns

        return tabular.width(name.removesuffix(ADMET)) + len(admet_columns(_file(boosters)))
    return tabular.width(name)


def signature(name: str, boosters=None) -> dict:
    """What a vector of set ``name`` holds (the boosters' hash and columns for +admet; for
    boosters other than the shipped ones, the name of their copy in the run folder)."""
    _check(name, boosters)
    if not name.endswith(ADMET):
        return tabular.signature(name)
    from .admet_boosters import admet_signature

    return dict(tabular.signature(name.removesuffix(ADMET)), set=name,
                width=width(name, boosters), **admet_signature(_file(boosters)),
                **({"admet_file": RUN_BOOSTERS} if _own(boosters) else {}))


def base_set(name: str) -> str:
    """The chemistry layer's set a set is built on (itself for morgan and maplight)."""
    _check(name)
    return name.removesuffix(ADMET)


def extend(name: str, base: np.ndarray, boosters=None) -> np.ndarray:
    """Set ``name``'s vectors from its base set's (the table's cached ones, or fresh)."""
    if not name.endswith(ADMET):
        return base
    from .admet_boosters import admet_features

    return np.hstack([base, admet_features(base, _file(boosters))])


def feature_matrix(name: str, smiles: list[str], boosters=None) -> np.ndarray:
    """float32 [N, width] (a SMILES RDKit cannot read is raised, named)."""
    return extend(name, tabular.feature_matrix(base_set(name), smiles), boosters)


def training_overlap(name: str, smiles: dict[str, list[str]], boosters=None
                     ) -> dict[str, int] | None:
    """Molecules per split that set ``name``'s fitted parts were fitted on (their features
    are in-sample there); None for a set without fitted parts."""
    if not name.endswith(ADMET):
        return None
    from .admet_boosters import admet_overlap

    return {split: admet_overlap(m, _file(boosters)) for split, m in smiles.items()}


def keep_with_run(boosters, folder: Path) -> None:
    """Put a copy of boosters other than the shipped ones in the run folder (a hard link
    where the file system allows): the fitted model reads them wherever the folder goes."""
    if not _own(boosters):
        return
    import os
    import shutil

    target = Path(folder) / RUN_BOOSTERS
    if target.exists() and target.resolve() == _file(boosters).resolve():
        return  # the run folder's own copy, given again
    target.unlink(missing_ok=True)
    try:
        os.link(_file(boosters), target)
    except OSError:
        shutil.copyfile(_file(boosters), target)


def run_boosters(features: dict, folder: Path) -> Path | None:
    """The boosters a fitted model's features came from (its stored ``signature``): the copy
    in its run folder, or None for the shipped ones."""
    stored = features.get("admet_file")
    return None if stored is None else Path(folder) / Path(stored).name
