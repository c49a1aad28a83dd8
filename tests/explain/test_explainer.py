"""Explainer (rows, errors, ensembles) and the `graphnorm explain` command's files."""
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.cli import main
from graphnorm.explain.explainer import load_explainer
from tiny_checkpoint import write_checkpoint, write_ensemble

ROWS = ["CCO", "not a smiles", "", "c1ccccc1O", "C[C](C)(C)(C)C"]  # bad: parse, empty, valence


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain-ckpts")
    return {"single": write_checkpoint(root / "one" / "best.ckpt", targets=("logp", "tpsa")),
            "ensemble": write_ensemble(root / "ens", members=3),
            "gine": write_checkpoint(root / "gine" / "best.ckpt", model="gine")}


@pytest.mark.parametrize("method", ["ig", "occlusion", "rollout"])
def test_rows_errors_and_atoms(ckpts, method):
    ex = load_explainer(ckpts["single"], method=method, steps=8).explain(ROWS)
    mol = ex.molecules
    assert list(mol.columns) == ["row", "smiles", "logp", "tpsa", "error"]
    assert list(mol.row) == [f"row {k}" for k in range(1, 6)]
    bad = mol.error != ""
    assert list(bad) == [False, True, True, False, True]
    assert "RDKit cannot parse" in mol.error[1] and "empty SMILES" in mol.error[2]
    assert mol.logp[bad].isna().all() and mol.logp[~bad].notna().all()
    atoms = ex.atoms
    assert list(atoms.columns) == ["row", "smiles", "atom_index", "element", "target", "score", "std"]
    assert len(atoms) == (3 + 7) * 2  # atoms x targets of the two good rows
    first = atoms[atoms.row == "row 1"]
    assert list(first.element) == ["C", "C", "C", "C", "O", "O"]
    assert list(first.target) == ["logp", "tpsa"] * 3
    assert first["std"].isna().all()  # one model: no spread
    assert sorted(ex.scores) == [0, 3] and ex.scores[3].shape == (7, 2)


def test_ensemble_scores_are_the_members_mean_and_std(ckpts):
    ens = ckpts["ensemble"]
    smiles = ["CCO", "CC(=O)Nc1ccc(O)cc1"]
    ex = load_explainer(ens, method="ig", steps=8).explain(smiles)
    members = [load_explainer(ens / f"model_{k}" / "best.ckpt", method="ig", steps=8).explain(smiles)
               for k in range(3)]
    for row in (0, 1):
        stack = np.stack([m.scores[row] for m in members])
        np.testing.assert_allclose(ex.scores[row], stack.mean(0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ex.spread[row], stack.std(0), rtol=1e-4, atol=1e-5)
    assert (ex.spread[1] > 0).all()  # the members differ
    preds = np.array([m.molecules.prediction for m in members])
    np.testing.assert_allclose(ex.molecules.prediction, preds.mean(0), rtol=1e-5)
    np.testing.assert_allclose(ex.molecules.prediction_std, preds.std(0), rtol=1e-4)
    assert ex.atoms["std"].notna().all()


def test_gnn_refuses_rollout(ckpts):
    with pytest.raises(ValueError, match="rollout needs a Graphormer"):
        load_explainer(ckpts["gine"], method="rollout")
    ex = load_explainer(ckpts["gine"], method="occlusion").explain(["CCN"])
    assert len(ex.atoms) == 3


def test_cli_writes_table_drawings_and_grid(ckpts, tmp_path, capsys):
    src = tmp_path / "mols.csv"
    src.write_bytes(b"id,smiles\na,CCO\nb,xx\nc,CC(=O)Nc1ccc(O)cc1\nd,C\xe9C\n")
    out = tmp_path / "out"
    rc = main(["explain", "--checkpoint", str(ckpts["ensemble"]), "--input", str(src),
               "--smiles", "CN", "--out", str(out), "--method", "occlusion"])
    assert rc == 0
    mols = pd.read_csv(out / "molecules.csv", keep_default_na=False)
    assert list(mols.row) == ["argument 1", "line 2", "line 3", "line 4", "line 5"]
    assert "UnicodeDecodeError" in mols.error[4] and "cannot parse" in mols.error[2]
    assert list(mols.drawing) == ["mol_0001.svg", "mol_0002.svg", "", "mol_0004.svg", ""]
    atoms = pd.read_csv(out / "attributions.csv")
    assert set(atoms.row) == {"argument 1", "line 2", "line 4"} and atoms["std"].notna().all()
    for stem in ("mol_0001", "mol_0002", "mol_0004"):
        assert (out / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
        assert (out / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "grid.png").read_bytes()[:4] == b"\x89PNG"
    meta = json.loads((out / "explain.json").read_text())
    assert meta["method"] == "occlusion" and len(meta["checkpoints"]) == 3 and meta["failed"] == 2
    assert "line 3" in capsys.readouterr().err


def test_cli_several_targets_and_all_failed(ckpts, tmp_path):
    out = tmp_path / "two"
    assert main(["explain", "--checkpoint", str(ckpts["single"]), "--smiles", "CCO",
                 "--out", str(out), "--method", "ig", "--steps", "4"]) == 0
    assert (out / "mol_0001_logp.svg").is_file() and (out / "mol_0001_tpsa.png").is_file()
    assert (out / "grid_logp.png").is_file() and (out / "grid_tpsa.png").is_file()
    assert main(["explain", "--checkpoint", str(ckpts["single"]), "--smiles", "xx",
                 "--out", str(tmp_path / "bad")]) == 1


def test_cli_errors_name_the_input(ckpts, tmp_path, capsys):
    assert main(["explain", "--checkpoint", str(ckpts["gine"]), "--smiles", "CCO",
                 "--out", str(tmp_path / "x"), "--method", "rollout"]) == 2
    assert "rollout needs a Graphormer" in capsys.readouterr().err
    assert main(["explain", "--checkpoint", str(tmp_path / "missing"), "--smiles", "CCO",
                 "--out", str(tmp_path / "y")]) == 2
    assert "checkpoint not found" in capsys.readouterr().err


def test_default_method_is_one_place():
    from graphnorm.explain import cli, methods

    assert cli.DEFAULT_METHOD == methods.DEFAULT_METHOD
    assert cli.METHOD_CHOICES == methods.METHODS


@pytest.mark.slow  # starts a Python process
def test_parser_with_explain_and_serve_loads_no_torch_or_fastapi():
    """`graphnorm --help` stays instant: the two commands' arguments import nothing heavy."""
    import subprocess
    import sys

    code = ("import sys; from graphnorm.cli import build_parser; p = build_parser(); "
            "p.parse_args(['explain', '--checkpoint', 'x', '--out', 'y']); "
            "p.parse_args(['serve', '--checkpoint', 'x']); "
            "heavy = [m for m in ('torch', 'fastapi', 'rdkit', 'pandas') if m in sys.modules]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)
