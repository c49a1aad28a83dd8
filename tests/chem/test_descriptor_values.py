"""The shared-intermediate descriptor path gives RDKit's own numbers and RDKit's own errors,
except ``Ipc``/``AvgIpc`` where RDKit's floats are not exact (there: the exact polynomial).

The reference is the straightforward loop over ``Descriptors._descList`` (what the features
of existing checkpoints and caches were computed with), on molecules chosen to reach the
corners: drug-like, stereo (SPS), charged, salts, metals, single atoms, no bonds, radicals,
isotopes, explicit hydrogens, disconnected fragments and large ones (Ipc in the 1e30s)."""
import numpy as np
import pytest
from rdkit import Chem, RDLogger
from rdkit.Chem import Descriptors

from graphnorm.chem import tabular
from graphnorm.chem.descriptor_values import descriptor_values, rdkit_descriptor_list
from graphnorm.chem.descriptors import descriptor_functions, descriptor_names, rdkit_descriptors
from graphnorm.chem.molecule import FeaturizationError

RDLogger.DisableLog("rdApp.*")

SMILES = [
    "CC(=O)Nc1ccc(O)cc1", "CC(C)Cc1ccc(cc1)[C@@H](C)C(=O)O", "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
    "Cc1ccc(NC(=O)c2ccc(CN3CCN(C)CC3)cc2)cc1Nc1nccc(-c2cccnc2)n1",  # imatinib
    "C/C=C/C=C\\C(=O)O[C@H]1C[C@@H](N)[C@H](O)[C@@H](CO)O1", "F/C=C/F", "C[C@H](N)C(=O)O",
    "CC(=O)[O-].[Na+]", "[Na+].[Cl-]", "C[N+](C)(C)C.[Br-]", "[O-][N+](=O)c1ccccc1",
    "NC(CC(=O)[O-])C(=O)O.[K+]", "[NH3+]CC([O-])=O", "[Pt](Cl)(Cl)(N)N", "[Fe+2].[Cl-].[Cl-]",
    "B(O)(O)c1ccccc1", "[Si](C)(C)(C)C", "F[Sb-](F)(F)(F)(F)F", "C", "O", "[Na]", "[He]", "[Cu]",
    "[H]", "[H][H]", "*", "CC.O", "[CH2]", "[C]", "[2H]C([2H])([2H])O", "[H]OC([H])([H])C",
    "C1CCCCCCCCCCCCCCCCCCCCCCC1", "c1ccc2cc3ccccc3cc2c1", "C1=CC=CC=C1", "O=S(=O)(O)c1ccccc1",
    "CC(C)(C)OC(=O)N[C@@H](Cc1ccccc1)C(=O)N[C@@H](CC(C)C)C(=O)N[C@@H](Cc1c[nH]c2ccccc12)C(=O)O",
    "C" * 60, "c1ccccc1" + "C(=O)NCc1ccccc1" * 12,
    "CCC1(CC)C(=O)NC(=O)NC1=O", "N#N", "[N-]=[N+]=[N-]", "OP(=O)(O)OP(=O)(O)O",
]


def reference(mol, functions):
    """RDKit's functions called one by one, each on the molecule as the loop leaves it."""
    values, errors = np.empty(len(functions)), {}
    for k, (_, fn) in enumerate(functions):
        try:
            values[k] = float(fn(mol))
        except Exception as e:
            values[k], errors[k] = np.nan, e
    return values, errors


BACITRACIN = ("CC[C@H](C)[C@H](N)C1=N[C@H](C(=O)N[C@@H](CC(C)C)C(=O)N[C@H](CCC(=O)O)C(=O)N"
              "[C@H](C(=O)N[C@H]2CCCCNC(=O)[C@H](CC(N)=O)NC(=O)[C@@H](CC(=O)O)NC(=O)[C@H]"
              "(Cc3cnc[nH]3)NC(=O)[C@@H](Cc3ccccc3)NC(=O)[C@H]([C@@H](C)CC)NC(=O)[C@@H](CCCN)"
              "NC2=O)[C@@H](C)CC)CS1")  # 100 atoms, in TDC's lipophilicity table
IPC = ("Ipc", "AvgIpc")


def rdkit_ipc_is_exact(mol) -> bool:
    """RDKit's float polynomial equals the exact one (sympy's, integers)."""
    from rdkit.Chem import Graphs

    adjacency = np.equal(Chem.GetDistanceMatrix(mol, False), 1)
    return np.array_equal(np.abs(Graphs.CharacteristicPolynomial(mol, adjacency)),
                          exact_char_poly_abs(adjacency))


def exact_char_poly_abs(adjacency) -> np.ndarray:
    from sympy import ZZ
    from sympy.polys.matrices import DomainMatrix

    rows = [[ZZ(int(v)) for v in row] for row in np.asarray(adjacency, dtype=int)]
    poly = DomainMatrix(rows, (len(rows), len(rows)), ZZ).charpoly() if rows else [1]
    return np.abs(np.array([float(int(c)) for c in poly]))


@pytest.mark.parametrize("smiles", SMILES)
def test_the_same_values_and_errors_as_rdkit_one_by_one(smiles):
    functions = rdkit_descriptor_list()
    assert functions == tuple(Descriptors._descList)  # the order and names checkpoints know
    want, want_errors = reference(Chem.MolFromSmiles(smiles), functions)
    got, got_errors = descriptor_values(Chem.MolFromSmiles(smiles), functions)
    if not rdkit_ipc_is_exact(Chem.MolFromSmiles(smiles)):  # test_ipc_is_exact covers them
        keep = [k for k, (name, _) in enumerate(functions) if name not in IPC]
        (want, got), functions = (want[keep], got[keep]), [functions[k] for k in keep]
    # bit for bit, NaN and inf included (counts are exact a fortiori)
    assert np.array_equal(got, want, equal_nan=True), [
        (functions[k][0], want[k], got[k]) for k in np.flatnonzero(~((got == want) | np.isnan(got) & np.isnan(want)))]
    assert {k: (type(e), str(e)) for k, e in got_errors.items()} == {
        k: (type(e), str(e)) for k, e in want_errors.items()}


def test_rdkit_is_inexact_on_the_large_molecules_only():
    inexact = [s for s in SMILES if not rdkit_ipc_is_exact(Chem.MolFromSmiles(s))]
    assert inexact == ["c1ccccc1" + "C(=O)NCc1ccccc1" * 12]


@pytest.mark.parametrize("smiles", [BACITRACIN, "c1ccccc1" + "C(=O)NCc1ccccc1" * 12, "C" * 60,
                                    "Cc1ccc(NC(=O)c2ccc(CN3CCN(C)CC3)cc2)cc1Nc1nccc(-c2cccnc2)n1"])
def test_ipc_is_exact(smiles):
    """Ipc and AvgIpc from the exact characteristic polynomial (sympy's, in integers), with
    RDKit's formulas: on bacitracin RDKit's floats give AvgIpc 1.37 or 1.41 (by BLAS kernel),
    the exact polynomial 4.30."""
    from rdkit.ML.InfoTheory import entropy

    mol = Chem.MolFromSmiles(smiles)
    poly = exact_char_poly_abs(np.equal(Chem.GetDistanceMatrix(mol, False), 1))
    info = entropy.InfoEntropy(poly)
    names = [name for name, _ in rdkit_descriptor_list()]
    got, _ = descriptor_values(mol, rdkit_descriptor_list())
    assert got[names.index("AvgIpc")] == info
    assert got[names.index("Ipc")] == sum(poly) * info


def _has_avx2() -> bool:
    try:
        return " avx2" in open("/proc/cpuinfo").read()
    except OSError:
        return False


@pytest.mark.skipif(__import__("platform").machine() not in ("x86_64", "AMD64") or not _has_avx2(),
                    reason="the Haswell OpenBLAS kernel needs an x86 CPU with AVX2")
@pytest.mark.slow  # starts Python processes
def test_ipc_does_not_depend_on_the_blas_kernel():
    """The same features under two OpenBLAS kernels (RDKit's float path differs there)."""
    import os
    import subprocess
    import sys

    code = ("from graphnorm.chem.tabular import feature_matrix; import sys; "
            f"sys.stdout.write(repr(feature_matrix('maplight', [{BACITRACIN!r}])[0].tolist()))")
    out = {core: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True, env=dict(os.environ, OPENBLAS_CORETYPE=core)).stdout
           for core in ("Haswell", "Prescott")}
    assert out["Haswell"] == out["Prescott"] and len(out["Haswell"]) > 1000


def test_the_model_inputs_are_the_signed_logs_of_the_reference():
    functions = descriptor_functions()
    for smiles in ("Cc1ccc(NC(=O)c2ccc(CN3CCN(C)CC3)cc2)cc1Nc1nccc(-c2cccnc2)n1", "CC(=O)[O-].[Na+]"):
        want, _ = reference(Chem.MolFromSmiles(smiles), functions)
        got = rdkit_descriptors(Chem.MolFromSmiles(smiles), smiles)[0]
        assert np.array_equal(got, (np.sign(want) * np.log1p(np.abs(want))).astype(np.float32))
    assert len(descriptor_names()) == len(functions)


def test_a_descriptor_rdkit_cannot_compute_is_named_with_the_smiles():
    # SPS divides by the heavy-atom count: RDKit's own ZeroDivisionError, not a fast-path one
    with pytest.raises(FeaturizationError, match=r"SPS failed for SMILES '\[H\]\[H\]': ZeroDivisionError"):
        rdkit_descriptors(Chem.MolFromSmiles("[H][H]"), "[H][H]")


def test_a_failing_shared_computation_falls_back_to_rdkit(monkeypatch):
    import graphnorm.chem.descriptor_values as dv

    def broken(mol):
        raise RuntimeError("shared step failed")

    monkeypatch.setitem(dv._GROUPS, "MaxEStateIndex", broken)
    mol = Chem.MolFromSmiles("CCO")
    got, errors = descriptor_values(mol, rdkit_descriptor_list())
    want, _ = reference(Chem.MolFromSmiles("CCO"), rdkit_descriptor_list())
    assert not errors and np.array_equal(got, want, equal_nan=True)


def test_tree_features_keep_rdkit_values_with_failures_as_nan():
    smiles = "[H][H]"
    want, _ = reference(Chem.MolFromSmiles(smiles), rdkit_descriptor_list())
    want[~np.isfinite(want)] = np.nan
    got = tabular.molecule_vector("maplight", smiles)[-len(want):]
    assert np.isnan(got[[k for k, (n, _) in enumerate(rdkit_descriptor_list()) if n == "SPS"]]).all()
    assert np.array_equal(got, np.clip(want, -1e30, 1e30).astype(np.float32), equal_nan=True)


def test_members_of_one_prediction_share_a_smiles_descriptors(monkeypatch):
    """The Graphormer's inputs and the gbm's MapLight vector of one row: computed once, the
    second caller only adds what the first did not ask for (BCUT2D, partial charges)."""
    import graphnorm.chem.descriptor_values as dv

    calls = []
    estate = dv._GROUPS["MaxEStateIndex"]
    monkeypatch.setitem(dv._GROUPS, "MaxEStateIndex", lambda mol: calls.append(1) or estate(mol))
    smiles = "Cc1ccc(NC(=O)c2ccc(CN3CCN(C)CC3)cc2)cc1Nc1nccc(-c2cccnc2)n1"
    want, _ = reference(Chem.MolFromSmiles(smiles), rdkit_descriptor_list())
    with dv.shared_by_smiles():
        graph_inputs = rdkit_descriptors(Chem.MolFromSmiles(smiles), smiles)
        tree_inputs = tabular.molecule_vector("maplight", smiles)[-len(want):]
    assert len(calls) == 1
    assert np.array_equal(tree_inputs, np.clip(want, -1e30, 1e30).astype(np.float32))
    subset = [k for k, (name, _) in enumerate(rdkit_descriptor_list()) if name in descriptor_names()]
    assert np.array_equal(graph_inputs[0], (np.sign(want[subset]) * np.log1p(np.abs(want[subset]))).astype(np.float32))
    assert dv._by_smiles is None  # the memo goes with the slice
    tabular.molecule_vector("maplight", smiles)
    assert len(calls) == 2  # outside: computed again
