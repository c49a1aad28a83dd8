"""Quantity columns predicted by the head and a booster, half each (graphnorm/panel/blend.py):
the guard on S, the panel and bundle it writes, and the panel predicting and explaining
through the blend."""
import dataclasses
import json

import numpy as np
import pytest

from tiny_corpus import SMILES_A, SMILES_B, write_corpus

NK, PB = "netknowledge_admet", "pharmabench"
LOGD = "quantity/logd74"


def _logd_corpus(tmp_path):
    """logD7.4 from two sources, on scales one unit apart."""
    root = tmp_path / "admet_corpus"
    n_a, n_b = len(SMILES_A), len(SMILES_B)
    write_corpus(root, NK, SMILES_A, {"lipophilicity_AZ-lipo": [0.2 * i - 1 for i in range(n_a)]},
                 {"lipophilicity_AZ-lipo": "regression"})
    write_corpus(root, PB, SMILES_B, {"logd_reg": [0.25 * i for i in range(n_b)]},
                 {"logd_reg": "regression"})
    (root / "corpora.csv").write_text(f"corpus,rows\n{NK},{n_a}\n{PB},{n_b}\n")
    return root


@pytest.fixture
def logd(tmp_path, monkeypatch):
    """(run folder with its panel built, the run): every endpoint judged and shown."""
    from tiny_panel import make_quantity_panel

    return make_quantity_panel(tmp_path, _logd_corpus(tmp_path), monkeypatch, "fast")


def _guard_says(monkeypatch, hi: float):
    """The S interval's upper end the blend sees (the guard's plumbing, not its statistics)."""
    from graphnorm.panel import readouts

    real = readouts.paired_scores
    monkeypatch.setattr(readouts, "paired_scores",
                        lambda *a: dict(real(*a), lo=hi - 1.0, hi=hi))


def test_a_blend_not_worse_on_s_is_written_with_its_booster_and_predicts_half_and_half(
        logd, monkeypatch):
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.inference.panel_boosters import PanelBoosters
    from graphnorm.panel import BLEND, Panel
    from graphnorm.panel.blend import blend_panel
    from graphnorm.panel.boosters import read_bundle

    out, run = logd
    before = Panel.read(out).endpoint(LOGD)
    assert before.judged and before.readout is None
    _guard_says(monkeypatch, 0.5)
    panel = blend_panel(run, out, ["logd74"], progress=False)
    row = json.loads((out / "blend.jsonl").read_text())
    assert row["task"] == LOGD and row["kept"] and row["present"] == "head"
    e = panel.endpoint(LOGD)
    assert e.readout == BLEND and e.predictor == "head + booster" and e.output == before.output
    assert e.head == {"score_select": before.score_select, "score": before.score,
                      "shown": before.shown}
    written = Panel.read(out)
    assert written.endpoint(LOGD).readout == BLEND and written.booster_tasks() == [LOGD]
    assert written.readouts_sha256 == panel.readouts_sha256 is not None
    # the panel predicts the mean of what the head and the booster predict
    blended = AdmetPanel.load(out, all_endpoints=True)
    head_only = Panel.read(out).replace(endpoints=[
        dataclasses.replace(x, readout=None, features=None) for x in panel.endpoints])
    boosters = PanelBoosters(read_bundle(out, panel, "fast"))
    smiles = ["CCOC", "c1ccccc1CC", "not a smiles"]
    got = blended.predict(smiles)[LOGD].to_numpy()
    head = AdmetPanel(blended.loaded, head_only, True).predict(smiles)[LOGD].to_numpy()
    graphs, _ = blended.predictor.featurize(smiles[:2], ["", ""])
    booster = boosters.predict(blended.view(graphs, smiles[:2]))[LOGD]
    assert np.allclose(got[:2], 0.5 * (head[:2] + booster)) and np.isnan(got[2])
    assert not np.allclose(got[:2], head[:2])


def test_a_blend_worse_on_s_leaves_the_column_as_it_was(logd, monkeypatch):
    from graphnorm.panel import Panel
    from graphnorm.panel.blend import blend_panel

    out, run = logd
    before = Panel.read(out)
    _guard_says(monkeypatch, -0.1)
    panel = blend_panel(run, out, ["logd74"], progress=False)
    assert not json.loads((out / "blend.jsonl").read_text())["kept"]
    assert panel.endpoint(LOGD) == before.endpoint(LOGD) and panel.booster_tasks() == []


def test_a_blend_is_explained_by_half_the_network_and_half_the_booster(logd, monkeypatch):
    from tiny_panel import explained_as_halves

    from graphnorm.panel.blend import blend_panel

    out, run = logd
    _guard_says(monkeypatch, 0.5)
    blend_panel(run, out, ["logd74"], progress=False)
    explained_as_halves(out, LOGD)


def test_unknown_quantities_and_a_second_blend_are_refused(logd, monkeypatch):
    from graphnorm.panel.blend import blend_panel, blend_targets
    from graphnorm.panel import Panel

    out, run = logd
    with pytest.raises(ValueError, match="unknown quantities.*'logP'"):
        blend_targets(Panel.read(out), ["logP"])
    _guard_says(monkeypatch, 0.5)
    blend_panel(run, out, ["logd74"], progress=False)
    with pytest.raises(ValueError, match="blends already"):
        blend_panel(run, out, ["logd74"], progress=False)
    from graphnorm.panel.related import related_panel

    with pytest.raises(ValueError, match="comes before `panel blend`"):
        related_panel(run, out, progress=False)


def test_the_card_names_the_blended_columns_and_the_gbm_line_leaves_them_out():
    from graphnorm.panel import BLEND, Endpoint
    from graphnorm.panel.card import _blend_lines

    def entry(task, readout=None, output=None):
        return Endpoint(task=task, kind="regression", units="", n_select=5, n=5, judged=True,
                        metric="r2", score_select=0.5, score=0.5, shown=True, readout=readout,
                        output=output)

    blend = entry(LOGD, BLEND, f"{PB}/logd_reg")
    head = entry("quantity/solubility", output=f"{PB}/water_sol_reg")
    source = entry(f"{NK}/CYP1A2", BLEND)
    assert blend.predictor == "head + booster" and head.predictor == "head"
    lines = _blend_lines([blend, head])
    assert len(lines) == 1 and "1 quantity columns" in lines[0] and f"`{LOGD}`" in lines[0]
    assert "solubility" not in lines[0] and _blend_lines([head]) == []
    both = _blend_lines([blend, source, head])
    assert len(both) == 2 and both[0] == lines[0] and both[1].startswith("- 1 more columns")


def test_a_run_without_descriptors_is_refused_by_name(tmp_path, monkeypatch):
    from tiny_panel import make_quantity_panel

    from graphnorm.panel.blend import blend_panel

    out, run = make_quantity_panel(tmp_path, _logd_corpus(tmp_path), monkeypatch)
    with pytest.raises(ValueError, match=f"{out}: a blend's booster reads the backbone's "
                                         "descriptors, and this run has none"):
        blend_panel(run, out, ["logd74"], progress=False)
