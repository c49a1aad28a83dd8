"""A quantity column read through a related one (graphnorm/panel/related.py): the map fitted on
training labels, the choice written into the panel, and the panel predicting and explaining
through it."""
import dataclasses
import json

import numpy as np
import pytest

from tiny_corpus import SMILES_A, SMILES_B, write_corpus

NK, PB = "netknowledge_admet", "pharmabench"
HUMAN, MOUSE = "quantity/clint_microsomal_human", "quantity/clint_microsomal_mouse"


def _species_corpus(tmp_path):
    """Human microsomal CLint from two sources, mouse from one (twice the human value + 1)."""
    root = tmp_path / "admet_corpus"
    n_a, n_b = len(SMILES_A), len(SMILES_B)
    write_corpus(root, NK, SMILES_A, {"microsomal_AZ-hLM": [0.1 * i + 0.5 for i in range(n_a)]},
                 {"microsomal_AZ-hLM": "regression"})
    write_corpus(root, PB, SMILES_B,
                 {"hum_mic_cl_reg": [0.15 * i for i in range(n_b)],
                  "mou_mic_cl_reg": [0.3 * i + 1.0 for i in range(n_b)]},
                 {"hum_mic_cl_reg": "regression", "mou_mic_cl_reg": "regression"})
    (root / "corpora.csv").write_text(f"corpus,rows\n{NK},{n_a}\n{PB},{n_b}\n")
    return root


@pytest.fixture
def species(tmp_path, monkeypatch):
    """(run folder with its panel built, the run): every endpoint judged and shown."""
    from tiny_panel import make_quantity_panel

    return make_quantity_panel(tmp_path, _species_corpus(tmp_path), monkeypatch)


def test_the_map_is_one_slope_and_an_intercept_per_source():
    from graphnorm.panel.related import fit_map

    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    source = np.repeat([0, 2], 20)  # source 1 has no training label
    y = 1.5 * x + np.where(source == 0, -1.0, 2.0)
    b, a = fit_map(x, y, source, 3)
    assert b == pytest.approx(1.5) and a[0] == pytest.approx(-1.0) and a[2] == pytest.approx(2.0)
    assert np.isnan(a[1])


def test_every_candidate_is_scored_and_a_chosen_one_is_written_into_the_panel(species,
                                                                               monkeypatch):
    from graphnorm.panel import Panel, related

    out, run = species
    before = Panel.read(out)
    assert before.endpoint(MOUSE).judged and before.endpoint(HUMAN).judged
    real = related.halves_scores

    def favour_mouse_through_human(y, candidate, current, part):  # the choice's plumbing
        scores = real(y, candidate, current, part)
        return dict(scores, lo=1.0, hi=2.0) if len(y) == mouse_labels else scores

    from graphnorm.panel.build import held_out_predictions

    mouse = run.corpus.task_names.index(f"{PB}/mou_mic_cl_reg")
    mouse_labels = int((~np.isnan(held_out_predictions(run, run.model)["y"][:, mouse])).sum())
    monkeypatch.setattr(related, "halves_scores", favour_mouse_through_human)
    panel = related.related_panel(run, out, progress=False)
    rows = [json.loads(line) for line in (out / related.ROWS_FILE).read_text().splitlines()]
    assert {(r["task"], r["via"]) for r in rows} == {(HUMAN, MOUSE), (MOUSE, HUMAN)}
    for r in rows:
        assert r["n_train"] > 0 and r["select"]["n"] + r["report"]["n"] > 0
    e = panel.endpoint(MOUSE)
    assert e.by_related and e.predictor == f"related: {e.via}"
    row = next(r for r in rows if r["task"] == MOUSE)
    assert e.via == before.endpoint(HUMAN).output and e.affine == (row["intercept"], row["slope"])
    assert e.output == before.endpoint(MOUSE).output  # the scale it shows is its own
    assert e.head["score_select"] == before.endpoint(MOUSE).score_select
    # the map, fitted independently: the panel's view of the human column on the mouse
    # column's training molecules (featurized from SMILES), against their mouse labels
    from graphnorm.inference.admet_panel import AdmetPanel

    corpus = run.corpus
    molecule = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    train = np.isin(molecule, run.corpus_rows(run.train_positions)) & (corpus.task == mouse)
    smiles = [corpus.smiles[m] for m in molecule[train]]
    human = AdmetPanel.load(out, all_endpoints=True).predict(smiles)[e.via].to_numpy()
    slope, intercept = np.polyfit(human, corpus.value[train], 1)
    assert row["slope"] == pytest.approx(slope, rel=1e-3, abs=1e-4)
    assert row["intercept"] == pytest.approx(intercept, rel=1e-3, abs=1e-4)
    back = Panel.read(out).endpoint(MOUSE)  # written, and it reads back
    assert (back.readout, back.via, back.affine, back.score) == (e.readout, e.via, e.affine,
                                                                 e.score)


def _with_related(out, a: float, b: float):
    """The panel of ``out`` with the mouse column read through the human one by (a, b)."""
    from graphnorm.panel import RELATED, Panel

    panel = Panel.read(out)
    human = panel.endpoint(HUMAN)
    entries = [dataclasses.replace(e, readout=RELATED, via=human.output, affine=(a, b))
               if e.task == MOUSE else e for e in panel.endpoints]
    panel.replace(endpoints=entries).write(out)


def test_the_panel_predicts_and_explains_through_the_related_column(species):
    from graphnorm.explain.panel_attributions import explain_endpoint
    from graphnorm.inference.admet_panel import AdmetPanel

    out, _ = species
    _with_related(out, 0.7, -1.3)
    panel = AdmetPanel.load(out, all_endpoints=True)
    assert panel.endpoints().set_index("task").loc[MOUSE, "predictor"].startswith("related: ")
    frame = panel.predict(["CCO", "c1ccccc1O", "CCCl"])
    human_output = panel.panel.endpoint(HUMAN).output
    assert np.allclose(frame[MOUSE], 0.7 - 1.3 * frame[human_output], atol=1e-5)
    mouse = explain_endpoint(panel, ["c1ccccc1O"], MOUSE, "occlusion").scores[0]
    human = explain_endpoint(panel, ["c1ccccc1O"], human_output, "occlusion").scores[0]
    assert np.allclose(mouse, -1.3 * human, atol=1e-6)
    from graphnorm.cli import main

    assert main(["panel", "card", str(out), "--raw-dir", str(out.parent)]) == 0
    assert f"`{MOUSE}` is read through `{human_output}`" in (out / "MODEL_CARD.md").read_text()
