"""Columns a one-table booster predicts, blended with the head (graphnorm/panel/blend.py,
RULE.md amendment of session 58): the choice on S, and a binary blend averaged on the logit
scale before its Platt scaling, in `admet` and in `explain`."""
import copy
import dataclasses
import json
import shutil

import numpy as np
import pytest

from tiny_panel import make_tiny_panel

LOGS, T1 = "alpha/logS", "beta/t1"  # the tiny run's regression and binary booster columns


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_panel(tmp_path_factory.mktemp("tiny"), descriptors="fast")


@pytest.fixture
def hybrid(tiny, tmp_path, monkeypatch):
    """A copy of the tiny run after `panel readouts`, S made to choose the booster for its
    regression and binary judged endpoints."""
    import graphnorm.stats.bootstrap as bootstrap
    from graphnorm.panel import build
    from graphnorm.panel.hybrid import write_readout_panel

    for name, value in (("MIN_SELECT", 1), ("MIN_REPORT", 1), ("MIN_CLASS", 0),
                        ("MIN_R2", -1e9), ("MIN_AUROC", 0.0)):
        monkeypatch.setattr(build, name, value)  # so that the tiny run's columns are judged
    folder, run, panel = tiny
    shutil.copytree(folder, tmp_path / "run")
    panel = copy.deepcopy(panel)
    for e in panel["endpoints"]:
        e["judged"] = e["task"] in (LOGS, T1)
    (tmp_path / "run" / "panel.json").write_text(json.dumps(panel))
    with monkeypatch.context() as m:
        m.setattr(bootstrap, "paired_interval", lambda *a, **k: (0.01, 0.02))
        write_readout_panel(run, tmp_path / "run", progress=False)
    return tmp_path / "run", run


def _s_says(monkeypatch, blend_minus_present: float):
    """The S scores the choice sees: the blend's, ``blend_minus_present`` above the present
    predictor's (the choice's plumbing, not its statistics)."""
    from graphnorm.panel import readouts

    real = readouts.paired_scores

    def fake(binary, y, blend, present):
        out = real(binary, y, blend, present)
        return dict(out, head=0.5, booster=0.5 + blend_minus_present)

    monkeypatch.setattr(readouts, "paired_scores", fake)


def test_booster_columns_at_least_as_high_on_s_are_blended_and_predicted_so(hybrid, monkeypatch):
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel import BLEND, Panel, platt_probability
    from graphnorm.panel.blend import blend_panel
    from graphnorm.panel.boosters import read_bundle

    out, run = hybrid
    before = Panel.read(out)
    assert {e.task for e in before.endpoints if e.by_booster} == {LOGS, T1}
    stored = read_bundle(out, before, "fast")
    _s_says(monkeypatch, 0.0)
    panel = blend_panel(run, out, (), progress=False)
    rows = {r["task"]: r for r in map(json.loads, (out / "blend.jsonl").read_text().splitlines())}
    assert set(rows) == {LOGS, T1} and all(r["kept"] and r["present"] == "booster"
                                           for r in rows.values())
    for task in (LOGS, T1):
        e = panel.endpoint(task)
        assert e.readout == BLEND and e.head == before.endpoint(task).head
    assert panel.endpoint(T1).platt is not None  # the blend's own Platt scale, fitted on S
    # the boosters blended are the ones the bundle held, not refitted
    assert read_bundle(out, panel, "fast") == stored and panel.booster_tasks() == [LOGS, T1]

    blended = AdmetPanel.load(out, all_endpoints=True)
    # the head alone, its binary column unscaled: its probability is sigmoid(head logit)
    raw = Panel.read(out).replace(endpoints=[
        dataclasses.replace(x, readout=None, features=None, platt=None) for x in panel.endpoints])
    smiles = ["CCO", "c1ccccc1O", "CCCl"]
    got = blended.predict(smiles)
    head = AdmetPanel(blended.loaded, raw, True).predict(smiles)
    graphs, _ = blended.predictor.featurize(smiles)
    view = blended.view(graphs, smiles)
    booster = {t: np.empty(3) for t in (LOGS, T1)}
    for t, values in blended.boosters.predict(view).items():
        booster[t][view.rows] = values  # the booster's value, a binary column's logit
    assert np.allclose(got[LOGS], 0.5 * (head[LOGS] + booster[LOGS]))
    z = np.log(head[T1] / (1 - head[T1]))
    a, b = panel.endpoint(T1).platt_scale
    assert np.allclose(got[T1], platt_probability(0.5 * (z + booster[T1]), a, b))


def test_booster_columns_lower_on_s_keep_their_booster(hybrid, monkeypatch):
    from graphnorm.panel import Panel
    from graphnorm.panel.blend import blend_panel

    out, run = hybrid
    before = Panel.read(out)
    _s_says(monkeypatch, -0.001)
    panel = blend_panel(run, out, (), progress=False)
    assert panel.endpoints == before.endpoints
    assert not any(json.loads(r)["kept"] for r in (out / "blend.jsonl").read_text().splitlines())


def test_a_quantity_column_is_guarded_and_any_other_column_chosen_on_s():
    from graphnorm.panel import Endpoint
    from graphnorm.panel.blend import kept_on_select

    def entry(output=None):
        return Endpoint(task="x", kind="regression", units="", n_select=5, n=5, judged=True,
                        metric="r2", score_select=0.5, score=0.5, shown=True, output=output)

    quantity, source = entry("pharmabench/logd_reg"), entry()
    lower = {"head": 0.6, "booster": 0.5, "lo": -0.2, "hi": 0.01}
    assert kept_on_select(quantity, lower)  # lower, but not surely worse: kept
    assert not kept_on_select(quantity, dict(lower, hi=-0.01))
    assert not kept_on_select(source, lower)
    assert kept_on_select(source, dict(lower, booster=0.6))
    assert not kept_on_select(source, dict(lower, booster=None))


def test_a_binary_blend_is_explained_by_half_of_each_in_calibrated_log_odds(hybrid, monkeypatch):
    from tiny_panel import explained_as_halves

    from graphnorm.panel.blend import blend_panel

    out, run = hybrid
    _s_says(monkeypatch, 0.0)
    blend_panel(run, out, (), progress=False)
    got, network = explained_as_halves(out, T1)
    assert got.meaning == network.meaning == "change of the calibrated logit (log-odds)"
