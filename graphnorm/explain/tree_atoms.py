"""Atom scores of a boosted-tree prediction that reads Morgan counts: TreeSHAP contributions of
the count features, each shared among the atoms of the substructures that set its bit.

TreeSHAP (Lundberg et al. 2020, *From local explanations to global understanding with
explainable AI for trees*, Nat. Mach. Intell. 2:56; LightGBM's ``pred_contrib``) splits a
prediction exactly into a base value plus one contribution per feature, phi_f. A Morgan bit b
is set by the environments env(b) (a centre atom and its radius; several can fold into one
bit), and environment e covers the atoms within its radius of the centre, atoms(e). Then

    score(a) = sum_b  phi_b / |env(b)| * sum_{e in env(b)} [a in atoms(e)] / |atoms(e)|

so the atoms of a molecule share exactly what its present substructures contribute. The rest
of the prediction is not any atom's, and is left out: the base value, the whole-molecule
descriptors' contributions, and bits absent from the molecule (an absence can move a tree).
"""
from __future__ import annotations

import numpy as np


def morgan_environments(smiles: str, bits: int) -> dict[int, list[tuple[int, ...]]]:
    """bit -> the atom sets of the environments that set it, for the Morgan generator the
    tabular features use (`graphnorm.chem.molecule.morgan_generator`, radius 2)."""
    from rdkit import Chem
    from rdkit.Chem import rdFingerprintGenerator

    from graphnorm.chem.molecule import morgan_generator

    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise ValueError(f"RDKit cannot read SMILES {smiles!r}")
    info = rdFingerprintGenerator.AdditionalOutput()
    info.AllocateBitInfoMap()
    morgan_generator(bits).GetCountFingerprintAsNumPy(mol, additionalOutput=info)
    out: dict[int, list[tuple[int, ...]]] = {}
    for bit, environments in info.GetBitInfoMap().items():
        for centre, radius in environments:
            atoms = {centre}
            if radius:
                for bond in Chem.FindAtomEnvironmentOfRadiusN(mol, radius, centre):
                    b = mol.GetBondWithIdx(bond)
                    atoms.update((b.GetBeginAtomIdx(), b.GetEndAtomIdx()))
            out.setdefault(int(bit), []).append(tuple(sorted(atoms)))
    return out


def morgan_atom_scores(smiles: str, contributions: np.ndarray) -> np.ndarray:
    """float [atoms] in RDKit's atom order: the Morgan bits' contributions (``contributions``
    [bits], one per count feature) shared among their environments' atoms."""
    from rdkit import Chem

    contributions = np.asarray(contributions, dtype=float)
    n = Chem.MolFromSmiles(smiles).GetNumAtoms() if smiles else 0
    scores = np.zeros(n)
    for bit, environments in morgan_environments(smiles, len(contributions)).items():
        share = contributions[bit] / len(environments)
        for atoms in environments:
            scores[list(atoms)] += share / len(atoms)
    return scores
