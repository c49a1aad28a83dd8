"""Molecule-level RDKit 2D descriptors (``FeaturizerConfig(descriptors=True)``).

The whole-molecule numbers a chemist knows (MolLogP, TPSA, MolMR, counts of rings, donors,
acceptors, fragments, ...) that a graph model must otherwise learn from a few hundred
molecules. Chemprop's ``v1_rdkit_2d_normalized`` (Yang et al. 2019,
https://doi.org/10.1021/acs.jcim.9b00237) is the reference: the same RDKit list
(``Descriptors._descList``) without the descriptors that depend on Gasteiger charges (NaN for
atoms without parameters) or on random embeddings. Stored compressed by a signed log,
``sign(x) log(1 + |x|)``, so counts and huge topological indices (``Ipc``) share one scale;
the model standardizes them with the training split's mean and std (`DescriptorEncoder`).

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


def descriptor_names() -> list[str]:
    return [name for name, _ in descriptor_functions()]


def descriptor_count() -> int:
    """How many numbers a molecule gets (the model's input width); depends on RDKit's version,
    so checkpoints record it and refuse another."""
    return len(descriptor_functions())


def rdkit_descriptors(mol, smiles: str | None = None) -> np.ndarray:
    """float32 [1, D]: ``sign(x) log(1 + |x|)`` of each descriptor of a sanitized molecule;
    raises FeaturizationError naming the SMILES and the first descriptor (in order) that
    failed or is not finite. The values come from `descriptor_values` (shared intermediates
    computed once; the same numbers as calling each RDKit function)."""
    functions = descriptor_functions()
    values, errors = descriptor_values(mol, functions, smiles)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        k = int(bad[0])
        name = functions[k][0]
        if k in errors:
            e = errors[k]
            raise FeaturizationError(f"RDKit descriptor {name} failed for SMILES {smiles!r}: "
                                     f"{type(e).__name__}: {e}") from e
        raise FeaturizationError(f"RDKit descriptor {name} is {values[k]} for SMILES "
                                 f"{smiles!r}; the molecule cannot take descriptors")
    return (np.sign(values) * np.log1p(np.abs(values))).astype(np.float32).reshape(1, -1)
