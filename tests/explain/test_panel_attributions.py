"""Atom attributions of the ADMET panel: `explain_endpoint` (graphnorm/explain/
panel_attributions.py) in the scale the panel shows, and ``graphnorm admet --explain``."""
import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch

from tiny_panel import make_tiny_panel
from graphnorm.explain.panel_attributions import explain_endpoint

MOLECULES = ["c1ccccc1O", "not a smiles", "CC(=O)Nc1ccc(O)cc1"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out, _, _ = make_tiny_panel(tmp_path_factory.mktemp("panel"))
    return out


@pytest.fixture
def folder(built, tmp_path):
    """A copy of the tiny panel's folder, its panel.json free to edit."""
    return shutil.copytree(built, tmp_path / "run")


def edit_endpoint(folder, task: str, **changes) -> None:
    record = json.loads((folder / "panel.json").read_text())
    entry = next(e for e in record["endpoints"] if e["task"] == task)
    for key, value in changes.items():
        if value is None:
            entry.pop(key, None)
        else:
            entry[key] = value
    (folder / "panel.json").write_text(json.dumps(record))


def raw_occlusion(loaded, smiles: str, task: str) -> np.ndarray:
    """Occlusion on the model's raw output of ``task`` (standardized value or logit), by
    hand: the output minus the output with atom i's embedding blanked, per atom."""
    from graphnorm.explain.sites import edited_atom_embeddings
    from graphnorm.graph.collate import collate_graphs
    from graphnorm.inference.predict import Predictor

    column = loaded.targets.index(task)
    graph = Predictor(loaded).featurize([smiles])[0][0][1]
    batch = collate_graphs([graph])
    model = loaded.model.eval()
    scores = []
    with torch.no_grad():
        full = model(batch)[0, column].item()
        for i in range(int(graph.num_nodes)):
            def blank(e, i=i):
                e = e.clone()
                e[:, i] = 0.0
                return e

            with edited_atom_embeddings(model, batch.node_mask, blank):
                scores.append(full - model(batch)[0, column].item())
    return np.array(scores)


def test_every_atom_of_a_valid_molecule_gets_a_score_and_a_bad_row_its_error(built):
    from rdkit import Chem

    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.explain.panel_attributions import ATOM_COLUMNS

    got = explain_endpoint(AdmetPanel.load(built, all_endpoints=True), MOLECULES, "alpha/logS")
    assert got.endpoint == "alpha/logS" and got.method == "occlusion"
    assert len(got.scores) == len(got.errors) == len(MOLECULES)
    for k in (0, 2):
        atoms = Chem.MolFromSmiles(MOLECULES[k]).GetNumAtoms()
        assert got.errors[k] == "" and got.scores[k].shape == (atoms,)
        assert np.isfinite(got.scores[k]).all() and np.abs(got.scores[k]).max() > 0
    assert got.scores[1] is None and "not a smiles" in got.errors[1]
    assert list(got.atoms.columns) == ATOM_COLUMNS
    assert got.atoms.smiles.tolist() == [MOLECULES[0]] * 7 + [MOLECULES[2]] * 11
    assert (got.atoms.endpoint == "alpha/logS").all()
    assert got.atoms.element.tolist()[:7] == ["C"] * 6 + ["O"]
    np.testing.assert_allclose(got.atoms.score, np.concatenate([got.scores[0], got.scores[2]]))


def test_regression_scores_are_the_raw_output_scores_times_the_std(built):
    from graphnorm.explain.explainer import Explainer
    from graphnorm.inference.admet_panel import AdmetPanel

    panel = AdmetPanel.load(built, all_endpoints=True)
    loaded = panel.loaded
    std = loaded.target_std.reshape(-1)[loaded.targets.index("alpha/logS")].item()
    assert abs(std - 1) > 0.05  # else the scaling could not be told from its absence
    expect = raw_occlusion(loaded, MOLECULES[0], "alpha/logS") * std
    got = explain_endpoint(panel, MOLECULES[:1], "alpha/logS")
    np.testing.assert_allclose(got.scores[0], expect, rtol=1e-4, atol=1e-7)
    assert "change of the value" in got.meaning
    # integrated gradients on the one-output view: what the Explainer gives for the whole
    # model (in units: the checkpoint's regression task block scales it by the std)
    whole = Explainer(panel.predictor, "ig", steps=8).explain(MOLECULES[:1])
    column = loaded.targets.index("alpha/logS")
    view = explain_endpoint(panel, MOLECULES[:1], "alpha/logS", method="ig", steps=8)
    np.testing.assert_allclose(view.scores[0], whole.scores[0][:, column], rtol=1e-4, atol=1e-6)


def test_binary_scores_are_changes_of_the_calibrated_logit(folder):
    from graphnorm.inference.admet_panel import AdmetPanel

    def panel(platt):
        edit_endpoint(folder, "beta/t1", platt=platt)
        return AdmetPanel.load(folder, all_endpoints=True)

    plain = panel(None)  # no Platt fit: a change of the logit itself
    raw = explain_endpoint(plain, MOLECULES[:1], "beta/t1")
    expect = raw_occlusion(plain.loaded, MOLECULES[0], "beta/t1")
    np.testing.assert_allclose(raw.scores[0], expect, rtol=1e-4, atol=1e-7)
    assert np.abs(raw.scores[0]).max() > 0
    scaled = explain_endpoint(panel([-2.5, 3.0]), MOLECULES[:1], "beta/t1")
    np.testing.assert_allclose(scaled.scores[0], -2.5 * raw.scores[0], rtol=1e-5, atol=1e-8)
    assert "calibrated logit" in scaled.meaning


def test_an_endpoint_the_panel_does_not_show_is_refused_with_where_to_look(folder):
    from graphnorm.inference.admet_panel import AdmetPanel, PanelError

    for task in ("alpha/logS", "alpha/toxic", "beta/t1", "beta/t2"):
        edit_endpoint(folder, task, shown=task == "alpha/logS")
    panel = AdmetPanel.load(folder)
    assert explain_endpoint(panel, ["CCO"], "alpha/logS").scores[0].shape == (3,)
    with pytest.raises(PanelError, match=r"'beta/t1' did not hold up.*--all.*graphnorm admet --list"):
        explain_endpoint(panel, ["CCO"], "beta/t1")
    with pytest.raises(PanelError, match=r"'nope/x' is not an endpoint.*graphnorm admet --list"):
        explain_endpoint(panel, ["CCO"], "nope/x")


def test_admet_explain_writes_a_drawing_per_molecule_and_the_atom_table(built, tmp_path, capsys):
    from graphnorm.cli import main
    from graphnorm.inference.admet_panel import AdmetPanel

    out = tmp_path / "drawings"
    args = ["admet", "--model", str(built), "--all", "--smiles", *MOLECULES]
    assert main(args + ["--explain", "beta/t2", "--drawings", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["attributions.csv", "mol_0001.svg",
                                                     "mol_0003.svg"]
    assert "<svg" in (out / "mol_0001.svg").read_text()
    table = pd.read_csv(out / "attributions.csv")
    assert list(table.columns) == ["row", "smiles", "atom_index", "element", "endpoint", "score"]
    assert table.row.unique().tolist() == ["argument 1", "argument 3"]
    expect = explain_endpoint(AdmetPanel.load(built, all_endpoints=True), MOLECULES, "beta/t2")
    np.testing.assert_allclose(table.score, expect.atoms.score, rtol=1e-5, atol=1e-7)
    assert "argument 2" in capsys.readouterr().err  # the failed row is named
    # refused: an endpoint it does not show, no folder, a folder without --explain
    assert main(args + ["--explain", "nope/x", "--drawings", str(tmp_path / "x")]) == 2
    assert main(args + ["--explain", "beta/t2"]) == 2
    assert main(args + ["--drawings", str(tmp_path / "y")]) == 2
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_a_batch_without_bonds_is_predicted_and_explained(built):
    """Methane alone: the GINE branch embeds no bonds (an empty edge tensor once crashed)."""
    from graphnorm.inference.admet_panel import AdmetPanel

    panel = AdmetPanel.load(built, all_endpoints=True)
    assert panel.predict(["C"])["error"].tolist() == [""]
    assert explain_endpoint(panel, ["C"], "alpha/logS").scores[0].shape == (1,)
