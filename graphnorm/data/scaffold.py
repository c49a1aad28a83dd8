"""OGB's scaffold split of ogbg-molhiv, rebuilt from the MoleculeNet HIV rows.

OGB took its split from the pretrain-gnns code (Hu et al. 2020, ``splitters.scaffold_split``):
1. key each molecule by its Bemis–Murcko scaffold SMILES
   (``MurckoScaffold.MurckoScaffoldSmiles(smiles=s, includeChirality=True)``);
2. sort the scaffold groups by (size, first row index), largest first;
3. put each group into train if train stays within 80 % of all rows, else into valid if
   train + valid stay within 90 %, else into test.
On HIV.csv this gives 32,901 / 4,113 / 4,113 rows with 1,232 / 81 / 130 actives, OGB's sizes.

Seven HIV SMILES (hypervalent Al, B, Ge, ...) no longer pass RDKit sanitization, so they
have no Murcko scaffold here; each gets a group of its own keyed by its SMILES. These
singletons do not change the split sizes.
"""
from __future__ import annotations

import hashlib
from typing import Optional, Sequence

FRAC_TRAIN, FRAC_VALID = 0.8, 0.1


def scaffold_bucket(scaffold: Optional[str], smiles: str, modulo: int = 100) -> int:
    """A molecule's hash bucket by its scaffold (stable: it does not depend on which other
    molecules there are); a molecule without one (acyclic or unparsable) is a group of its
    own, keyed by its SMILES. Pre-training's held-out scaffolds and cross-fitting's folds."""
    return int(hashlib.sha256((scaffold or f"<none> {smiles}").encode()).hexdigest()[:8],
               16) % modulo


def murcko_scaffold(smiles: str, mol=None) -> Optional[str]:
    """Bemis–Murcko scaffold SMILES with chirality, or None when RDKit cannot sanitize it."""
    from rdkit import Chem
    from rdkit.Chem.Scaffolds import MurckoScaffold

    mol = mol if mol is not None else Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    try:
        return MurckoScaffold.MurckoScaffoldSmiles(mol=mol, includeChirality=True)
    except Exception:  # RDKit raises various C++ errors for odd valences
        return None


def scaffold_split(smiles: Sequence[str], scaffolds: Optional[Sequence[Optional[str]]] = None
                   ) -> dict[str, list[int]]:
    """Row indices {"train", "val", "test"} of OGB's scaffold split (see module docstring).

    `scaffolds` may be given precomputed (one per SMILES, None = unparsable); otherwise they
    are computed here (about 30 s for HIV on one core).
    """
    if scaffolds is None:
        scaffolds = [murcko_scaffold(s) for s in smiles]
    if len(scaffolds) != len(smiles):
        raise ValueError(f"{len(scaffolds)} scaffolds for {len(smiles)} SMILES")
    groups: dict[str, list[int]] = {}
    for i, (s, scaf) in enumerate(zip(smiles, scaffolds)):
        # Unparsable molecules: a group of their own (prefix keeps them apart from scaffolds).
        key = scaf if scaf is not None else f"<unparsable {i}> {s}"
        groups.setdefault(key, []).append(i)
    ordered = sorted(groups.values(), key=lambda g: (len(g), g[0]), reverse=True)
    n = len(smiles)
    train_cut, valid_cut = FRAC_TRAIN * n, (FRAC_TRAIN + FRAC_VALID) * n
    out: dict[str, list[int]] = {"train": [], "val": [], "test": []}
    for group in ordered:
        if len(out["train"]) + len(group) <= train_cut:
            out["train"].extend(group)
        elif len(out["train"]) + len(out["val"]) + len(group) <= valid_cut:
            out["val"].extend(group)
        else:
            out["test"].extend(group)
    return {k: sorted(v) for k, v in out.items()}
