"""SMILES -> RDKit molecule -> categorical feature arrays (Contract 2 in docs/design.md).

Two vocabularies, both categorical and 0-based, heavy atoms only (hydrogens implicit):

* ``"ogb"`` — exactly `ogb.utils.smiles2graph` (Hu et al. 2020, https://ogb.stanford.edu):
  9 atom features (`ogb.utils.features.atom_to_feature_vector`) and 3 bond features
  (`bond_to_feature_vector`), edges in its order (bond k gives edges 2k: i->j, 2k+1: j->i).
* ``"zinc"`` — the benchmarking-gnns ZINC dictionary (Dwivedi et al. 2020,
  https://arxiv.org/abs/2003.00982; PyG `ZINC`): one atom feature, the atom as written in a
  Kekulé SMILES (element, plus " H<n>" and " +"/" -" for bracket atoms, e.g. 'C H1' is a
  chiral [C@@H]), and one bond feature single/double/triple (0/1/2) after kekulization.

Shortest-path distances and edge paths are added by `graphnorm.chem.featurize` (batched BFS
of `graphnorm.chem.paths`).
Sanitization (``sanitize=``): "strict" (the default, for user input such as predict) refuses
any molecule RDKit cannot sanitize, e.g. a five-valent carbon, with RDKit's reason.
"benchmark" keeps molecules that fail only RDKit's valence check (7 in MoleculeNet HIV:
hypervalent Al, B, Ge...), as OGB keeps them: parsed unsanitized, then sanitized without the
valence step. Dataset building uses "benchmark" so the official split sizes hold.
"""
from __future__ import annotations

import functools

import numpy as np
from ogb.utils.features import atom_to_feature_vector, bond_to_feature_vector
from rdkit import Chem, rdBase

from .config import VOCABS
from .errors import FeaturizationError

SANITIZE_MODES = ("strict", "benchmark")  # see the module docstring

ZINC_ATOM_DICT = {
    "C": 0, "O": 1, "N": 2, "F": 3, "C H1": 4, "S": 5, "Cl": 6, "O -": 7, "N H1 +": 8,
    "Br": 9, "N H3 +": 10, "N H2 +": 11, "N +": 12, "N -": 13, "S -": 14, "I": 15, "P": 16,
    "O H1 +": 17, "N H1 -": 18, "O +": 19, "S +": 20, "P H1": 21, "P H2": 22, "C H2 -": 23,
    "P +": 24, "S H1 +": 25, "C H1 -": 26, "P H1 +": 27,
}
ZINC_BOND_DICT = {Chem.BondType.SINGLE: 0, Chem.BondType.DOUBLE: 1, Chem.BondType.TRIPLE: 2}
NUM_FEATURES = {"ogb": (9, 3), "zinc": (1, 1)}  # (atom, bond) feature columns

# SMILES organic subset and the lowest default valence: an atom outside it, charged, chiral,
# isotopic, radical, or with hydrogens at another valence is written in brackets with its Hs.
_ORGANIC_VALENCE = {"B": 3, "C": 4, "N": 3, "O": 2, "P": 3, "S": 2,
                    "F": 1, "Cl": 1, "Br": 1, "I": 1}
# Elements with one allowed valence: a neutral non-radical atom has it, so no (slow) check.
_ONE_VALENCE = {s for s in _ORGANIC_VALENCE
                if len(Chem.GetPeriodicTable().GetValenceList(s)) == 1}
_CHI_NONE = Chem.ChiralType.CHI_UNSPECIFIED
_SANITIZE_NO_VALENCE = Chem.SanitizeFlags.SANITIZE_ALL ^ Chem.SanitizeFlags.SANITIZE_PROPERTIES


def _check_vocab(vocab: str) -> None:
    if vocab not in VOCABS:
        raise ValueError(f"vocab must be one of {VOCABS}, got {vocab!r}")


def check_sanitize(sanitize: str) -> None:
    if sanitize not in SANITIZE_MODES:
        raise ValueError(f"sanitize must be one of {SANITIZE_MODES}, got {sanitize!r}")


def mol_from_smiles(smiles: str, sanitize: str = "strict") -> Chem.Mol:
    """RDKit molecule (heavy atoms). sanitize="strict" refuses what RDKit cannot sanitize;
    "benchmark" falls back to skipping only the valence check (see the module docstring)."""
    check_sanitize(sanitize)
    if not isinstance(smiles, str) or not smiles.strip():
        raise FeaturizationError(f"not a SMILES string: {smiles!r}")
    with rdBase.BlockLogs():  # failures become exceptions, not stderr noise
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            mol = (_mol_without_valence_check(smiles) if sanitize == "benchmark"
                   else _sanitize_failure(smiles))
    if mol.GetNumHeavyAtoms() == 0:  # [H][H] or [H+] keep their H atoms: still none
        raise FeaturizationError(f"SMILES {smiles!r} has no heavy atoms")
    return mol


def _sanitize_failure(smiles: str):
    """Raise the FeaturizationError of a SMILES that RDKit refused, with RDKit's reason."""
    mol = Chem.MolFromSmiles(smiles, sanitize=False)
    if mol is None:
        raise FeaturizationError(f"RDKit cannot parse SMILES {smiles!r}")
    try:
        Chem.SanitizeMol(mol)
    except Exception as e:  # AtomValenceException, KekulizeException, ...
        raise FeaturizationError(f"RDKit cannot sanitize SMILES {smiles!r}: {e}") from None
    raise FeaturizationError(f"RDKit cannot read SMILES {smiles!r}")  # pragma: no cover


def _mol_without_valence_check(smiles: str) -> Chem.Mol:
    mol = Chem.MolFromSmiles(smiles, sanitize=False)
    if mol is None:
        raise FeaturizationError(f"RDKit cannot parse SMILES {smiles!r}")
    mol.UpdatePropertyCache(strict=False)  # implicit Hs without rejecting odd valences
    failed = Chem.SanitizeMol(mol, _SANITIZE_NO_VALENCE, catchErrors=True)
    if failed != Chem.SanitizeFlags.SANITIZE_NONE:  # e.g. aromaticity that cannot kekulize
        raise FeaturizationError(f"RDKit cannot sanitize SMILES {smiles!r} ({failed})")
    try:
        return Chem.RemoveHs(mol, sanitize=False)
    except Exception as e:  # pragma: no cover - RemoveHs rarely fails once sanitized
        raise FeaturizationError(f"RDKit cannot remove hydrogens of {smiles!r}: {e}") from e


def zinc_atom_label(atom: Chem.Atom) -> str:
    """The ZINC dictionary key of an atom of a kekulized molecule, e.g. 'C', 'N H1 +'."""
    sym = atom.GetSymbol()
    charge = atom.GetFormalCharge()
    num_h = atom.GetTotalNumHs()
    if (charge == 0 and sym in _ORGANIC_VALENCE and atom.GetChiralTag() == _CHI_NONE
            and atom.GetIsotope() == 0 and atom.GetNumRadicalElectrons() == 0
            and (num_h == 0 or sym in _ONE_VALENCE
                 or atom.GetTotalValence() == _ORGANIC_VALENCE[sym])):
        return sym
    label = sym + (f" H{num_h}" if num_h else "")
    if charge:
        label += " " + ("+" if charge > 0 else "-") * abs(charge)
    return label


def _atoms(mol: Chem.Mol) -> list:
    return [mol.GetAtomWithIdx(i) for i in range(mol.GetNumAtoms())]  # 2x faster than GetAtoms


def _bonds(mol: Chem.Mol) -> list:
    return [mol.GetBondWithIdx(i) for i in range(mol.GetNumBonds())]


def _zinc_bond(bond: Chem.Bond, name: str) -> list[int]:
    code = ZINC_BOND_DICT.get(bond.GetBondType())
    if code is None:
        raise FeaturizationError(f"bond {bond.GetIdx()} {bond.GetBondType()} of SMILES {name!r} "
                                 "is not single/double/triple")
    return [code]


def _zinc_atom(atom: Chem.Atom, name: str) -> list[int]:
    label = zinc_atom_label(atom)
    code = ZINC_ATOM_DICT.get(label)
    if code is None:
        raise FeaturizationError(f"atom {atom.GetIdx()} {label!r} of SMILES {name!r} is not in "
                                 "the 28-entry ZINC atom dictionary")
    return [code]


def mol_to_graph(mol: Chem.Mol, vocab: str = "ogb", smiles: str | None = None,
                 copy: bool = True):
    """(x long [N, F], edge_index long [2, E], edge_attr long [E, Fe]) as numpy arrays.

    Bond k gives edges 2k (i -> j) and 2k + 1 (j -> i), as in `ogb.utils.smiles2graph`.
    vocab "zinc" kekulizes the molecule (a copy unless copy=False).
    """
    _check_vocab(vocab)
    name = smiles if smiles is not None else Chem.MolToSmiles(mol)
    if vocab == "ogb":
        x = [atom_to_feature_vector(a) for a in _atoms(mol)]
        bonds = _bonds(mol)
        bond_feats = [bond_to_feature_vector(b) for b in bonds]
    else:
        mol = Chem.Mol(mol) if copy else mol
        try:
            Chem.Kekulize(mol, clearAromaticFlags=True)  # the ZINC bond dictionary has no aromatic
        except Exception as e:
            raise FeaturizationError(f"cannot kekulize SMILES {name!r}: {e}") from e
        x = [_zinc_atom(a, name) for a in _atoms(mol)]
        bonds = _bonds(mol)
        bond_feats = [_zinc_bond(b, name) for b in bonds]
    nf, ne = NUM_FEATURES[vocab]
    ends = np.array([(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in bonds],
                    dtype=np.int64).reshape(-1, 2)
    edge_index = np.ascontiguousarray(np.stack([ends, ends[:, ::-1]], axis=1).reshape(-1, 2).T)
    edge_attr = np.array(bond_feats, dtype=np.int64).reshape(-1, ne).repeat(2, axis=0)
    return np.array(x, dtype=np.int64).reshape(-1, nf), edge_index, edge_attr


def smiles_to_graph(smiles: str, vocab: str = "ogb", sanitize: str = "strict",
                    fingerprint_bits: int = 0, descriptors: bool | str = False):
    """RDKit part only: (x, edge_index, edge_attr) numpy arrays of one SMILES; with
    ``fingerprint_bits`` its `morgan_fingerprint` as a fourth array, with ``descriptors``
    that set of its RDKit descriptors (chem/descriptors.py) after that."""
    _check_vocab(vocab)
    mol = mol_from_smiles(smiles, sanitize)
    # before mol_to_graph, which may kekulize the molecule in place (aromatic bits would change)
    fp = morgan_fingerprint(mol, fingerprint_bits, smiles) if fingerprint_bits else None
    desc = None
    if descriptors:
        from .descriptors import rdkit_descriptors

        desc = rdkit_descriptors(mol, smiles, descriptors)
    graph = mol_to_graph(mol, vocab, smiles, copy=False)
    if fp is None and desc is None:
        return graph
    return (*graph, fp) if desc is None else (*graph, fp, desc)


@functools.lru_cache(maxsize=4)
def morgan_generator(bits: int):
    from rdkit.Chem import rdFingerprintGenerator

    return rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=bits)


def morgan_fingerprint(mol: Chem.Mol, bits: int, smiles: str | None = None) -> np.ndarray:
    """Morgan fingerprint of radius 2 (Rogers & Hahn 2010, https://doi.org/10.1021/ci100050t;
    ECFP4-like), folded to ``bits`` bits by RDKit's
    ``rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=bits)``; packed 8 bits per
    byte (``np.packbits``, first bit highest): uint8 [1, bits // 8]. `unpack_bits` undoes it."""
    gen = morgan_generator(bits)
    try:
        fp = gen.GetFingerprintAsNumPy(mol)
    except RuntimeError:  # "RingInfo not initialized": sanitize="benchmark" molecules (RemoveHs)
        try:
            mol = Chem.Mol(mol)  # a copy: the graph features stay those of the parsed molecule
            Chem.GetSymmSSSR(mol)  # perceives the rings
            fp = gen.GetFingerprintAsNumPy(mol)
        except Exception as e:
            name = smiles if smiles is not None else Chem.MolToSmiles(mol)
            raise FeaturizationError(f"no Morgan fingerprint for SMILES {name!r}: {e}") from e
    return np.packbits(fp.astype(np.uint8)).reshape(1, bits // 8)
