"""Fixed-length molecule vectors for tree models: the fingerprint sets of ``rf`` and ``gbm``.

- ``morgan``: 2048 folded Morgan counts of radius 2 (Rogers & Hahn 2010,
  https://doi.org/10.1021/ci100050t; ECFP4-like), the random forest's input.
- ``maplight``: the feature set of the MapLight entries of the TDC ADMET leaderboard (Notwell
  & Wood 2023, https://doi.org/10.26434/chemrxiv-2023-m3x5t): 1024 Morgan counts (radius 2),
  1024 Avalon counts (Gedeck et al. 2006), the 315 ErG pharmacophore-pair values (Stiefl et
  al. 2006, https://doi.org/10.1021/ci050457y) and every RDKit 2D descriptor (raw values;
  one RDKit cannot compute is NaN, which boosted trees route as missing).

A set's `signature` (its name, sizes and the RDKit version) keys the cache
(``graphnorm/data/feature_cache.py``) and is stored with a fitted model, which refuses
vectors of another signature.
"""
from __future__ import annotations

import numpy as np

from .descriptor_values import descriptor_values, rdkit_descriptor_list

MORGAN_RADIUS = 2
FEATURE_SETS = ("morgan", "maplight")


def _counts(mol, bits: int) -> np.ndarray:
    from graphnorm.chem.molecule import morgan_generator

    return morgan_generator(bits).GetCountFingerprintAsNumPy(mol).astype(np.float32)


def _avalon_counts(mol, bits: int = 1024) -> np.ndarray:
    from rdkit.Avalon import pyAvalonTools

    fp = pyAvalonTools.GetAvalonCountFP(mol, nBits=bits)
    out = np.zeros(bits, dtype=np.float32)
    for k, v in fp.GetNonzeroElements().items():
        out[k] = v
    return out


def _descriptors(mol, smiles: str) -> np.ndarray:
    # a descriptor RDKit cannot compute is NaN, which a tree model reads as missing
    values, _ = descriptor_values(mol, rdkit_descriptor_list(), smiles)
    values[~np.isfinite(values)] = np.nan
    # float32 overflows beyond 3.4e38 (Ipc of large molecules): cap, keeping the order
    return np.clip(values, -1e30, 1e30).astype(np.float32)


def _maplight(mol, smiles: str) -> np.ndarray:
    from rdkit.Chem import rdReducedGraphs

    erg = np.asarray(rdReducedGraphs.GetErGFingerprint(mol), dtype=np.float32)
    return np.concatenate([_counts(mol, 1024), _avalon_counts(mol), erg, _descriptors(mol, smiles)])


def width(name: str) -> int:
    return 2048 if name == "morgan" else 1024 + 1024 + 315 + len(rdkit_descriptor_list())


def signature(name: str) -> dict:
    """What a vector of set ``name`` holds; a model fitted on one refuses another."""
    import rdkit

    check_feature_set(name)
    return {"set": name, "width": width(name), "morgan_radius": MORGAN_RADIUS,
            "rdkit": rdkit.__version__}


def check_feature_set(name: str) -> None:
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {name!r}; choose from {', '.join(FEATURE_SETS)}")


def molecule_vector(name: str, smiles: str) -> np.ndarray:
    """float32 [width] of one SMILES; ValueError naming it when RDKit cannot read it."""
    from rdkit import Chem, rdBase

    with rdBase.BlockLogs():  # parse notes ("not removing hydrogen atom ...") are not the user's
        mol = Chem.MolFromSmiles(smiles) if smiles else None
    if mol is None:
        raise ValueError(f"RDKit cannot read SMILES {smiles!r}")
    return _counts(mol, 2048) if name == "morgan" else _maplight(mol, smiles)


def feature_matrix(name: str, smiles: list[str]) -> np.ndarray:
    """float32 [N, width] of SMILES the table reader sanitized already (a failure is raised
    with the SMILES)."""
    check_feature_set(name)
    out = np.empty((len(smiles), width(name)), dtype=np.float32)
    for i, s in enumerate(smiles):
        out[i] = molecule_vector(name, s)
    return out
