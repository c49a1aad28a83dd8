"""RDKit's 2D descriptors (``Descriptors._descList``), each shared intermediate computed once.

Both descriptor users read the values from here: the graph model's inputs
(`graphnorm.chem.descriptors`) and the boosted trees' ``maplight`` vector
(`graphnorm.chem.tabular`). Calling the 217 functions one by one, as
``Descriptors.CalcMolDescriptors`` does, recomputes several intermediates per molecule: the
EState indices 4 times (an O(atoms^2) Python loop each, ~2 ms of a ~13 ms molecule) and the
characteristic polynomial behind ``Ipc`` and ``AvgIpc`` twice, Gasteiger charges for each of
the 14 ``PEOE_VSA`` bins, a Morgan generator per ``FpDensityMorgan``. Here each is computed once,
with the same floating-point operations in the same order, so every value is bit for bit the
one RDKit's own function returns (``tests/chem/test_descriptor_values.py`` checks that on
drug-like, charged, salt, metal, single-atom and large molecules). One exception: ``Ipc`` and
``AvgIpc`` come from the exact characteristic polynomial (`_char_poly_abs`), the same as
RDKit's where its floats are exact, and host-independent where they are not (~45+ atoms).

Any exception in a shared computation falls back to RDKit's own functions for its members,
so a molecule on which a descriptor fails fails with RDKit's exception, as before.
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence

import numpy as np

_ESTATE = ("MaxAbsEStateIndex", "MaxEStateIndex", "MinAbsEStateIndex", "MinEStateIndex")
_IPC = ("Ipc", "AvgIpc")


@functools.lru_cache(maxsize=1)
def rdkit_descriptor_list() -> tuple:
    """((name, function), ...): RDKit's whole list (``Descriptors._descList``), its order."""
    from rdkit.Chem import Descriptors

    return tuple(Descriptors._descList)


def _estate_indices(mol) -> np.ndarray:
    """``EState.EStateIndices(mol)``: the per-atom loop kept, the O(n^2) pair loop replaced
    by arrays. RDKit adds, for atom i, the terms (I_i - I_j) / (d_ij + 1)^2 of j = 0, 1, ...
    (j != i) one after the other; ``np.cumsum`` along a row adds them in that same order, so
    the sums are identical (not merely close)."""
    from rdkit import Chem
    from rdkit.Chem.EState.EState import GetPrincipleQuantumNumber

    table = Chem.GetPeriodicTable()
    n = mol.GetNumAtoms()
    intrinsic = np.zeros(n, dtype=np.float64)
    for i, atom in enumerate(mol.GetAtoms()):
        degree = atom.GetDegree()
        if degree > 0:
            number = atom.GetAtomicNum()
            dv = table.GetNOuterElecs(number) - atom.GetTotalNumHs()
            shell = GetPrincipleQuantumNumber(number)
            intrinsic[i] = (4. / (shell * shell) * dv + 1) / degree
    dists = Chem.GetDistanceMatrix(mol, useBO=False, useAtomWts=False) + 1
    terms = (intrinsic[:, None] - intrinsic[None, :]) / (dists * dists)
    terms[dists >= 1e6] = 0.0  # atoms in different fragments do not interact
    np.fill_diagonal(terms, 0.0)
    accum = np.cumsum(terms, axis=1)[:, -1] if n else np.zeros(0)
    return accum + intrinsic


def _estate(mol) -> dict:
    indices = _estate_indices(mol)
    mol._eStateIndices = indices  # EState_VSA* and VSA_EState* read it (force=False)
    return {"MaxAbsEStateIndex": max(abs(x) for x in indices), "MaxEStateIndex": max(indices),
            "MinAbsEStateIndex": min(abs(x) for x in indices), "MinEStateIndex": min(indices)}


def _ipc(mol) -> dict:
    """``GraphDescriptors.Ipc`` and ``AvgIpc``: one characteristic polynomial for both, in
    exact integers (`_char_poly_abs`)."""
    from rdkit import Chem
    from rdkit.ML.InfoTheory import entropy

    try:
        dmat = mol._adjMat
    except AttributeError:
        dmat = Chem.GetDistanceMatrix(mol, False)
        mol._adjMat = dmat
    poly = _char_poly_abs(np.equal(dmat, 1))
    info = entropy.InfoEntropy(poly)
    return {"AvgIpc": info, "Ipc": sum(poly) * info}


def _char_poly_abs(adjacency: np.ndarray) -> np.ndarray:
    """|coefficients| (float64, highest power first) of the characteristic polynomial of a 0/1
    adjacency matrix: RDKit's ``Graphs.CharacteristicPolynomial`` (Le Verrier-Faddeev,
    B_k = A_k - tr(A_k)/k I, A_{k+1} = A B_k), in integers.

    RDKit runs it in floats with BLAS products. Once entries pass 2^53 (molecules of ~45+
    atoms) the rounding follows the CPU's BLAS kernel: bacitracin's AvgIpc is 1.3696 with
    OpenBLAS's SkylakeX kernels and 1.4086 with its Haswell/Zen ones, so the same molecule
    got other features on another host. Here A B_k sums each atom's neighbours' rows of B_k,
    in int64 while no sum can overflow and in Python integers after, so every coefficient
    is exact on every host; where RDKit's floats are exact too (smaller molecules) the
    values are the same."""
    n = len(adjacency)
    neighbours = [np.flatnonzero(row) for row in adjacency]
    width = max((len(x) for x in neighbours), default=0)
    rows = np.full((n, max(width, 1)), n)  # row n of the padded B_k is zeros (also: no bonds)
    for i, x in enumerate(neighbours):
        rows[i, :len(x)] = x
    limit = 2 ** 62 // max(width, n, 1)  # |entries| below it: no int64 sum overflows
    a_k = np.asarray(adjacency, dtype=np.int64)
    coefficients = [1]
    for k in range(1, n + 1):
        if a_k.dtype != object and np.abs(a_k).max(initial=0) >= limit:
            a_k = a_k.astype(object)
        c, rest = divmod(sum(int(v) for v in np.diagonal(a_k)), k)
        if rest:  # impossible for an integer matrix: RDKit's own function takes over
            raise ArithmeticError(f"trace not divisible by {k}")
        coefficients.append(c)
        b_k = np.concatenate([a_k, np.zeros((1, n), dtype=a_k.dtype)])  # B_k and a zero row
        b_k[np.arange(n), np.arange(n)] -= c
        a_k = b_k[rows].sum(axis=1)
    return np.abs(np.array([float(c) for c in coefficients]))


def _peoe_vsa(mol) -> dict:
    """``PEOE_VSA1..14``: RDKit's C++ ``PEOE_VSA_`` computes Gasteiger charges and all 14 bins
    on every call (it caches nothing), ~30 us each; once here."""
    from rdkit.Chem import rdMolDescriptors

    return {f"PEOE_VSA{k + 1}": v for k, v in enumerate(rdMolDescriptors.PEOE_VSA_(mol, force=False))}


def _sps(mol) -> dict:
    """``SpacialScore.SPS`` (normalized): the same C++ stereo perception on a copy, then the
    per-atom integer products in one pass instead of RDKit's per-atom dictionaries and its
    scan of every double bond for every atom. Integer sums: identical."""
    from rdkit import Chem
    from rdkit.Chem import rdmolops

    copy = Chem.Mol(mol)
    rdmolops.FindPotentialStereoBonds(copy)
    stereo = {i for i, _ in Chem.FindMolChiralCenters(copy, includeUnassigned=True, includeCIP=False,
                                                      useLegacyImplementation=False)}
    for bond in copy.GetBonds():
        if bond.GetBondType() == Chem.BondType.DOUBLE and bond.GetStereo() != Chem.BondStereo.STEREONONE:
            stereo.update((bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()))
    hybrid = _hybridisation_scores()
    score = 0
    for atom in copy.GetAtoms():
        ring = 2 if not atom.GetIsAromatic() and atom.IsInRing() else 1
        score += (hybrid.get(atom.GetHybridization(), 4) * (2 if atom.GetIdx() in stereo else 1)
                  * ring * atom.GetDegree() ** 2)
    score /= copy.GetNumHeavyAtoms()
    return {"SPS": score}


def _morgan_density(mol) -> dict:
    """``FpDensityMorgan1..3``: RDKit builds a new Morgan generator on every call; the same
    count fingerprints from generators built once."""
    heavy = mol.GetNumHeavyAtoms()
    out = {}
    for radius in (1, 2, 3):
        keys = len(_morgan_generator(radius).GetSparseCountFingerprint(mol).GetNonzeroElements())
        out[f"FpDensityMorgan{radius}"] = 0.0 if heavy == 0 else float(keys) / heavy
    return out


@functools.lru_cache(maxsize=3)
def _morgan_generator(radius: int):
    from rdkit.Chem import rdFingerprintGenerator

    return rdFingerprintGenerator.GetMorganGenerator(radius)


@functools.lru_cache(maxsize=1)
def _hybridisation_scores() -> dict:
    from rdkit import Chem

    return {Chem.HybridizationType.SP: 1, Chem.HybridizationType.SP2: 2, Chem.HybridizationType.SP3: 3}


_GROUPS: dict[str, Callable[[object], dict]] = {
    **dict.fromkeys(_ESTATE, _estate), **dict.fromkeys(_IPC, _ipc),
    **{f"PEOE_VSA{k}": _peoe_vsa for k in range(1, 15)}, "SPS": _sps,
    **{f"FpDensityMorgan{r}": _morgan_density for r in (1, 2, 3)}}


@functools.lru_cache(maxsize=1)
def _rdkit_positions() -> dict:
    """{name: (RDKit's function, its position in RDKit's list)}."""
    return {name: (fn, k) for k, (name, fn) in enumerate(rdkit_descriptor_list())}


class _Known:
    """One SMILES's descriptors computed so far, by position in RDKit's list: an array, not
    a dict of floats, so that a table of 10,000+ molecules costs ~20 MB, not ~300."""

    def __init__(self, size: int):
        self.values = np.full(size, np.nan)
        self.known = np.zeros(size, dtype=bool)
        self.errors: dict[int, Exception] = {}

    def get(self, position: int) -> float | Exception:
        return self.errors.get(position, self.values[position])

    def put(self, position: int, result: float | Exception) -> None:
        self.known[position] = True
        if isinstance(result, Exception):
            self.errors[position] = result
        else:
            self.values[position] = result


_by_smiles: dict | None = None  # SMILES -> _Known


@contextlib.contextmanager
def shared_by_smiles():
    """Within it, a SMILES's descriptors are computed once for everyone who asks with that
    SMILES: the Graphormer's 205 inputs and the gbm member's MapLight vector (all 217), each
    from ``Chem.MolFromSmiles`` of the same string. `Predictor.predict_rows` opens it around
    one slice of rows (memory bounded by the slice), `graphnorm.train.ensemble` around an
    ensemble's members (the Graphormer's table featurized, then gbm's MapLight vectors: on
    an empty cache the descriptors were computed twice, 3-5 % of the admet default's CPU per
    seed). Only for callers whose molecule is ``Chem.MolFromSmiles(smiles)``: the key is the
    string. Featurizing workers of a process pool (tables above ~2,000 rows) fill their own
    copies, which end with them."""
    global _by_smiles
    outer = _by_smiles
    _by_smiles = {} if outer is None else outer
    try:
        yield
    finally:
        _by_smiles = outer


def descriptor_values(mol, functions: Sequence[tuple[str, Callable]], smiles: str | None = None
                      ) -> tuple[np.ndarray, dict]:
    """(float64 [len(functions)], {position: exception}) of ``(name, fn)`` pairs on a molecule.

    A pair whose function is RDKit's own for that name may be served by a shared computation
    (or, inside `shared_by_smiles` and with ``smiles`` given, by an earlier caller); any other
    function (a test's stand-in) is called as it is. A function that raises leaves NaN at its
    position and its exception in the dict; non-finite values are returned as they are, for
    the caller to judge."""
    rdkit_fns = _rdkit_positions()
    memo = None
    if _by_smiles is not None and smiles is not None:
        memo = _by_smiles.get(smiles)
        if memo is None:
            memo = _by_smiles[smiles] = _Known(len(rdkit_fns))
    values = np.empty(len(functions), dtype=np.float64)
    errors: dict[int, Exception] = {}
    shared: dict[Callable, dict | None] = {}
    for k, (name, fn) in enumerate(functions):
        own, position = rdkit_fns.get(name, (None, None))
        if own is not fn:
            position = None
        if memo is not None and position is not None and memo.known[position]:
            result = memo.get(position)
        else:
            result = _value(mol, name, fn, _GROUPS.get(name) if own is fn else None, shared)
            if memo is not None and position is not None:
                memo.put(position, result)
        if isinstance(result, Exception):
            values[k], errors[k] = np.nan, result
        else:
            values[k] = result
    return values, errors


def _value(mol, name: str, fn: Callable, group: Callable | None, shared: dict) -> float | Exception:
    """One descriptor: from its group's shared computation when there is one, else RDKit's
    function; an exception is returned, not raised."""
    if group is not None and group not in shared:
        try:
            shared[group] = group(mol)
        except Exception:  # RDKit's own functions then raise their own errors
            shared[group] = None
    try:
        return float(shared[group][name] if group is not None and shared[group] else fn(mol))
    except Exception as e:  # RDKit raises many kinds; the caller names the molecule
        return e
