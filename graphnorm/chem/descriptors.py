"""Molecule-level RDKit 2D descriptors (``FeaturizerConfig(descriptors=True)``).

The whole-molecule numbers a chemist knows (MolLogP, TPSA, MolMR, counts of rings, donors,
acceptors, fragments, ...) that a graph model must otherwise learn from a few hundred
molecules. Chemprop's ``v1_rdkit_2d_normalized`` (Yang et al. 2019,
https://doi.org/10.1021/acs.jcim.9b00237) is the reference: the same RDKit list
(``Descriptors._descList``) without the descriptors that depend on Gasteiger charges (NaN for
atoms without parameters) or on random embeddings. Stored compressed by a signed log,
``sign(x) log(1 + |x|)``, so counts and huge topological indices (``Ipc``) share one scale;
the model standardizes them with the training split's mean and std (`DescriptorEncoder`).

Two sets (``FeaturizerConfig.descriptors``):

- ``True`` (alias ``"rdkit2d"``): that list, 205 numbers, ~8-10 ms per drug-like molecule in
  Python (qed, the ``fr_*`` SMARTS, EState, BertzCT ...);
- ``"fast"``: what RDKit computes in C++ only, ~2 ms per molecule, for screening at scale:
  ``rdMolDescriptors.Properties`` (Crippen logP and MR, TPSA, Labute ASA, counts of donors,
  acceptors, rings, rotatable bonds, stereocentres, Kier-Hall chi and kappa indices), the
  MOE-type ``SlogP_VSA``, ``SMR_VSA`` and ``PEOE_VSA`` bins (Labute 2000,
  https://doi.org/10.1016/S1093-3263(00)00068-1) and the 42 molecular quantum numbers
  (Nguyen et al. 2009, https://doi.org/10.1002/cmdc.200900317); 121 numbers with RDKit 2026.09.

A descriptor RDKit cannot compute, or that comes out non-finite, is that molecule's
featurization error (naming the SMILES and the descriptor): the row is skipped in training
and gets an error row in ``predict``, never a silent NaN.
"""
from __future__ import annotations

import functools

import numpy as np

from .descriptor_values import descriptor_values, rdkit_descriptor_list
from .errors import FeaturizationError

# NaN for atoms without Gasteiger parameters (metals, B, Si ...), so unusable as inputs
_UNSTABLE_PREFIXES = ("BCUT2D_",)
_UNSTABLE = {"MaxPartialCharge", "MinPartialCharge", "MaxAbsPartialCharge", "MinAbsPartialCharge"}


@functools.lru_cache(maxsize=1)
def descriptor_functions() -> tuple:
    """((name, function), ...) of the RDKit descriptors used, in RDKit's order."""
    return tuple((name, fn) for name, fn in rdkit_descriptor_list()
                 if name not in _UNSTABLE and not name.startswith(_UNSTABLE_PREFIXES))


DESCRIPTOR_SETS = {"rdkit2d": True, "fast": "fast"}  # name -> the value configs store


def descriptor_set(value) -> bool | str:
    """A descriptor set as `FeaturizerConfig` stores it: False (none), True (RDKit's 2D list,
    also named "rdkit2d") or "fast"; anything else is a ValueError naming the choices."""
    if value is False or value is True:
        return value
    if isinstance(value, str) and value.lower() in DESCRIPTOR_SETS:
        return DESCRIPTOR_SETS[value.lower()]
    raise ValueError(f"featurizer descriptors must be true, false or one of "
                     f"{sorted(DESCRIPTOR_SETS)}, got {value!r}")


@functools.lru_cache(maxsize=1)
def _fast_properties():
    from rdkit.Chem import rdMolDescriptors

    return rdMolDescriptors.Properties()


@functools.lru_cache(maxsize=1)
def _fast_names() -> tuple:
    names = list(_fast_properties().GetPropertyNames())
    for prefix, bins in (("SlogP_VSA", 12), ("SMR_VSA", 10), ("PEOE_VSA", 14), ("MQN", 42)):
        names += [f"{prefix}{k}" for k in range(1, bins + 1)]
    return tuple(names)


def _fast_values(mol) -> np.ndarray:
    from rdkit.Chem import rdMolDescriptors as md

    # in this order the Crippen and Labute contributions are computed once and cached on the
    # molecule for the VSA bins
    values = [*_fast_properties().ComputeProperties(mol), *md.SlogP_VSA_(mol), *md.SMR_VSA_(mol),
              *md.PEOE_VSA_(mol), *md.MQNs_(mol)]
    return np.asarray(values, dtype=np.float64)


def _fast_values_of(mol, smiles: str | None) -> np.ndarray:
    """`_fast_values`, with RDKit's exceptions and a count that disagrees with the names turned
    into a FeaturizationError naming the SMILES."""
    try:
        values = _fast_values(mol)
    except Exception as e:  # RDKit raises many kinds; name the molecule
        raise FeaturizationError(f"RDKit's fast descriptors failed for SMILES {smiles!r}: "
                                 f"{type(e).__name__}: {e}") from e
    if len(values) != len(_fast_names()):  # an RDKit whose bins differ from the names
        raise FeaturizationError(f"RDKit returned {len(values)} fast descriptors for SMILES "
                                 f"{smiles!r}, expected {len(_fast_names())}")
    return values


def descriptor_names(which: bool | str = True) -> list[str]:
    if which == "fast":
        return list(_fast_names())
    return [name for name, _ in descriptor_functions()]


def descriptor_count(which: bool | str = True) -> int:
    """How many numbers a molecule gets from a set (the model's input width); depends on
    RDKit's version, so checkpoints record it and refuse another."""
    return len(descriptor_names(which))


def rdkit_descriptors(mol, smiles: str | None = None, which: bool | str = True) -> np.ndarray:
    """float32 [1, D]: ``sign(x) log(1 + |x|)`` of each descriptor of a set of a sanitized
    molecule; raises FeaturizationError naming the SMILES and the first descriptor (in order)
    that failed or is not finite. RDKit's 2D list comes from `descriptor_values` (shared
    intermediates computed once; the same numbers as calling each RDKit function)."""
    if which == "fast":
        values, errors = _fast_values_of(mol, smiles), {}
    else:
        values, errors = descriptor_values(mol, descriptor_functions(), smiles)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        k = int(bad[0])
        name = descriptor_names(which)[k]  # names only when naming a failure: off the hot path
        if k in errors:
            e = errors[k]
            raise FeaturizationError(f"RDKit descriptor {name} failed for SMILES {smiles!r}: "
                                     f"{type(e).__name__}: {e}") from e
        raise FeaturizationError(f"RDKit descriptor {name} is {values[k]} for SMILES "
                                 f"{smiles!r}; the molecule cannot take descriptors")
    return (np.sign(values) * np.log1p(np.abs(values))).astype(np.float32).reshape(1, -1)
