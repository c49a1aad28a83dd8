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
``+gnn`` (``maplight+gnn``, ``maplight+admet+gnn``) appends a pre-trained Graphormer's
embedding and task outputs, computed from the SMILES and cached per table like the base set.
The network is a model file, a layer above this one: its columns come in as ``gnn``, a
`graphnorm.checkpoints.gnn_columns.GnnColumns` (``width``, ``signature()``, ``columns()``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from graphnorm.chem import tabular

GNN = "+gnn"  # the suffix of a set that appends a pre-trained Graphormer's columns
# the copy of the +gnn sets' backbone in a run folder (its fitted model reads it)
RUN_BACKBONE = "feature_backbone.ckpt"
ADMET = "+admet"  # the suffix of a set that appends the ADMET boosters' predictions
FEATURE_SETS = tabular.FEATURE_SETS + ("maplight" + ADMET, "maplight" + GNN,
                                       "maplight" + ADMET + GNN)
# the copy of a run's own boosters file in its folder (boosters other than the shipped ones:
# --admet-boosters, or the leave-own-task-out ones of `benchmark --suite tdc-admet`)
RUN_BOOSTERS = "admet_boosters.json.xz"


def has_admet(name: str) -> bool:
    """Whether set ``name`` appends the ADMET boosters' predictions."""
    return name.removesuffix(GNN).endswith(ADMET)


def _check(name: str, boosters=None, gnn=None) -> None:
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {name!r}; choose from {', '.join(FEATURE_SETS)}")
    if boosters is not None and not has_admet(name):
        raise ValueError(f"--admet-boosters is read by --tree-features maplight{ADMET}, "
                         f"not by {name}")
    if gnn is not None and not name.endswith(GNN):
        raise ValueError(f"--feature-backbone is read by the --tree-features sets ending in "
                         f"{GNN}, not by {name}")


def _file(boosters) -> Path:
    from .admet_boosters import ADMET_FILE

    return ADMET_FILE if boosters is None else Path(boosters)


def _own(boosters) -> bool:
    """Boosters other than the shipped ones (a run keeps a copy of their file)."""
    return boosters is not None and _file(boosters).resolve() != _file(None).resolve()


def _columns(name: str, gnn):
    """The +gnn sets' columns provider, required."""
    if gnn is None:
        raise ValueError(f"--tree-features {name} reads a pre-trained Graphormer: give "
                         "--feature-backbone FILE (a `graphnorm pretrain` checkpoint)")
    return gnn


def width(name: str, boosters=None, gnn=None) -> int:
    _check(name, boosters, gnn)
    total = tabular.width(base_set(name))
    if has_admet(name):
        from .admet_boosters import admet_columns

        total += len(admet_columns(_file(boosters)))
    if name.endswith(GNN):
        total += _columns(name, gnn).width
    return total


def signature(name: str, boosters=None, gnn=None) -> dict:
    """What a vector of set ``name`` holds (the boosters' hash and columns for +admet; for
    boosters other than the shipped ones, the name of their copy in the run folder; for +gnn
    the backbone's hash and the name of its copy)."""
    _check(name, boosters, gnn)
    if name == base_set(name):
        return tabular.signature(name)
    out = dict(tabular.signature(base_set(name)), set=name, width=width(name, boosters, gnn))
    if has_admet(name):
        from .admet_boosters import admet_signature

        out.update(admet_signature(_file(boosters)),
                   **({"admet_file": RUN_BOOSTERS} if _own(boosters) else {}))
    if name.endswith(GNN):
        out.update(_columns(name, gnn).signature(), gnn_file=RUN_BACKBONE)
    return out


def base_set(name: str) -> str:
    """The chemistry layer's set a set is built on (itself for morgan and maplight)."""
    _check(name)
    return name.removesuffix(GNN).removesuffix(ADMET)


def extend(name: str, base: np.ndarray, boosters=None, gnn: np.ndarray | None = None) -> np.ndarray:
    """Set ``name``'s vectors from its base set's (the table's cached ones, or fresh) and, for
    +gnn, the backbone's columns ``gnn`` of the same molecules."""
    parts = [base]
    if has_admet(name):
        from .admet_boosters import admet_features

        parts.append(admet_features(base, _file(boosters)))
    if name.endswith(GNN):
        if gnn is None or len(gnn) != len(base):
            raise ValueError(f"{name}: the backbone's columns of the same molecules are needed")
        parts.append(gnn)
    return parts[0] if len(parts) == 1 else np.hstack(parts)


def feature_matrix(name: str, smiles: list[str], boosters=None, gnn=None) -> np.ndarray:
    """float32 [N, width] (a SMILES RDKit cannot read is raised, named)."""
    _check(name, boosters, gnn)
    cols = _columns(name, gnn).columns(smiles) if name.endswith(GNN) else None
    return extend(name, tabular.feature_matrix(base_set(name), smiles), boosters, cols)


def table_matrix(name: str, smiles: list[str], table: str, checksum: str, root=None,
                 progress: bool = False, boosters=None, gnn=None) -> np.ndarray:
    """`feature_matrix` of a table's molecules, the base set's and the backbone's columns
    cached per table (`graphnorm.data.feature_cache.table_features`)."""
    from graphnorm.data.feature_cache import table_features

    base = table_features(base_set(name), smiles, table, checksum, root, progress)
    cols = None
    if name.endswith(GNN):
        provider = _columns(name, gnn)
        sig = provider.signature()
        cols = table_features(f"gnn-{sig['gnn_backbone'][:8]}", smiles, table, checksum, root,
                              progress, computed_by=(sig, provider.columns))
    return extend(name, base, boosters, cols)


def training_overlap(name: str, smiles: dict[str, list[str]], boosters=None
                     ) -> dict[str, int] | None:
    """Molecules per split that set ``name``'s fitted parts were fitted on (their features
    are in-sample there); None for a set without fitted parts."""
    if not has_admet(name):
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


def keep_backbone(gnn, folder: Path) -> None:
    """Put a copy of the +gnn sets' backbone (``gnn.path``) in the run folder (`RUN_BACKBONE`;
    a hard link where the file system allows): the fitted model reads it wherever it goes."""
    if gnn is None:
        return
    import os
    import shutil

    source, target = Path(gnn.path), Path(folder) / RUN_BACKBONE
    if target.exists() and target.resolve() == source.resolve():
        return
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def run_backbone(features: dict, folder: Path) -> Path | None:
    """The backbone a fitted model's +gnn columns came from: the copy in its run folder."""
    stored = features.get("gnn_file")
    return None if stored is None else Path(folder) / Path(stored).name


def run_boosters(features: dict, folder: Path) -> Path | None:
    """The boosters a fitted model's features came from (its stored ``signature``): the copy
    in its run folder, or None for the shipped ones."""
    stored = features.get("admet_file")
    return None if stored is None else Path(folder) / Path(stored).name
