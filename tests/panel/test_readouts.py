"""`graphnorm panel readouts` (RULE.md J): a one-table booster per judged endpoint, chosen
over the head on the selection half only, and the hybrid panel `graphnorm admet` predicts."""
import copy
import json
import shutil

import numpy as np
import pytest

from tiny_panel import make_tiny_panel
from graphnorm.explain.panel_attributions import explain_endpoint


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_panel(tmp_path_factory.mktemp("tiny"), descriptors="fast")


@pytest.fixture
def judged(tiny, tmp_path):
    """A copy of the tiny descriptor run, its regression and one binary endpoint judged."""
    folder, run, panel = tiny
    shutil.copytree(folder, tmp_path / "run")
    panel = copy.deepcopy(panel)
    for e in panel["endpoints"]:
        e["judged"] = e["task"] in ("alpha/logS", "beta/t1")
    (tmp_path / "run" / "panel.json").write_text(json.dumps(panel))
    return tmp_path / "run", run, panel


def _always(lo, hi):
    return lambda *a, **k: (lo, hi)


def test_each_judged_endpoint_gets_a_booster_on_its_training_molecules(judged, monkeypatch):
    from graphnorm.panel import readouts as R

    out, run, panel = judged
    rows = R.fit_readouts(run, out, progress=False)
    assert sorted(r["task"] for r in rows) == ["alpha/logS", "beta/t1"]
    corpus = run.corpus
    mol_of = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    train = set(run.corpus_rows(run.train_positions).tolist())
    for r in rows:
        t = corpus.task_names.index(r["task"])
        assert r["n_train"] == sum(1 for m, k in zip(mol_of, corpus.task) if k == t and m in train)
        entry = next(e for e in panel["endpoints"] if e["task"] == r["task"])
        if entry["score"] is not None:  # the head's R score is the panel's own
            assert r["report"]["head"] == pytest.approx(entry["score"], abs=1e-6)
        assert r["chosen"] == (r["select"]["lo"] > 0)  # S decides, R never does
        assert R.booster_file(out, r["number"]).is_file() == r["chosen"]

    import graphnorm.panel.readouts as module

    monkeypatch.setattr(module, "booster_estimator", lambda *a, **k: pytest.fail("refitted"))
    assert len(R.fit_readouts(run, out, progress=False)) == 2  # resumable


def test_readouts_of_other_networks_are_not_resumed(judged):
    """A panel rebuilt or a run trained further in place must not reuse the old choices."""
    from graphnorm.panel import readouts as R
    from graphnorm.panel.record import PanelFileError

    out, run, panel = judged
    rows = R.fit_readouts(run, out, progress=False)
    assert all(r["networks"] == [panel["checkpoint_sha256"][:16]] for r in rows)
    lines = (out / R.VARIANT_FILES[R.MORGAN][0]).read_text().splitlines()
    first = json.loads(lines[0])
    first["networks"] = ["0" * 16]
    (out / R.VARIANT_FILES[R.MORGAN][0]).write_text("\n".join([json.dumps(first)] + lines[1:]))
    with pytest.raises(PanelFileError, match=f"1 readouts \\(first {first['task']}\\)"):
        R.fit_readouts(run, out, progress=False)
    best = out / "best.ckpt"
    best.write_bytes(best.read_bytes() + b"\0")  # other weights than the panel was built on
    with pytest.raises(PanelFileError, match="best.ckpt is not the file it was built on"):
        R.fit_readouts(run, out, progress=False)


def test_a_run_without_descriptors_is_refused(tmp_path):
    from graphnorm.panel import readouts as R

    out, run, _ = make_tiny_panel(tmp_path)
    with pytest.raises(ValueError, match="descriptors"):
        R.fit_readouts(run, out, progress=False)


def test_the_budget_keeps_the_largest_gains_on_s():
    from graphnorm.panel.hybrid import within_budget

    def row(task, gain, size, chosen=True):
        return {"task": task, "chosen": chosen, "bytes": size,
                "select": {"head": 0.5, "booster": 0.5 + gain}}

    rows = [row("a", 0.01, 400), row("b", 0.20, 400), row("c", 0.10, 400), row("d", 0.5, 1, False)]
    assert [r["task"] for r in within_budget(rows, budget=800)] == ["b", "c"]
    assert [r["task"] for r in within_budget(rows, budget=10_000)] == ["b", "c", "a"]


@pytest.fixture
def hybrid(judged, monkeypatch):
    """The tiny run's hybrid panel, S made to choose the booster everywhere."""
    import graphnorm.stats.bootstrap as bootstrap
    from graphnorm.panel.hybrid import write_readout_panel

    out, run, panel = judged
    monkeypatch.setattr(bootstrap, "paired_interval", _always(0.01, 0.02))
    summary = write_readout_panel(run, out, progress=False)
    return out, run, panel, summary


def test_the_hybrid_panel_scores_a_replaced_endpoint_from_its_booster(hybrid):
    from graphnorm.panel.readouts import read_rows

    out, run, head_panel, summary = hybrid
    panel = json.loads((out / "panel.json").read_text())
    assert json.loads((out / "panel.head.json").read_text()) == head_panel
    rows = {r["task"]: r for r in read_rows(out)}
    replaced = {e["task"]: e for e in panel["endpoints"] if e.get("readout") == "booster"}
    assert set(replaced) == {"alpha/logS", "beta/t1"}
    for task, e in replaced.items():
        if e["score"] is not None:
            assert e["score"] == pytest.approx(rows[task]["report"]["booster"], abs=1e-6)
        before = next(h for h in head_panel["endpoints"] if h["task"] == task)
        assert e["head"]["score"] == before["score"]
    untouched = [e for e in panel["endpoints"] if e["task"] not in replaced]
    assert untouched == [e for e in head_panel["endpoints"] if e["task"] not in replaced]
    assert "2 judged endpoints fitted" in summary.read_text()

    # a rerun starts from the head's panel again: the same files
    from graphnorm.panel.hybrid import write_readout_panel

    before = (out / "panel.json").read_bytes(), (out / "readouts.json.xz").read_bytes()
    write_readout_panel(run, out, progress=False)
    assert ((out / "panel.json").read_bytes(), (out / "readouts.json.xz").read_bytes()) == before


def test_admet_predicts_replaced_endpoints_with_their_boosters(hybrid):
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.inference.panel_boosters import PanelBoosters
    from graphnorm.panel.boosters import morgan_counts

    out = hybrid[0]
    panel = AdmetPanel.load(out, all_endpoints=True)
    smiles = ["CCO", "not a smiles", "c1ccccc1O", "CCCl"]
    frame = panel.predict(smiles)
    assert frame["error"][1] and not frame["error"][0]
    table = panel.endpoints().set_index("task")
    assert table.loc["alpha/logS", "predictor"] == "booster"
    assert table.loc["alpha/toxic", "predictor"] == "head"
    ok = [0, 2, 3]
    graphs, _ = panel.predictor.featurize([smiles[i] for i in ok])
    view = panel.view(graphs, [smiles[i] for i in ok])  # featurize sorts by size
    logs = np.empty(3)
    logs[view.rows] = panel.boosters.predict(view)["alpha/logS"]
    assert np.allclose(frame["alpha/logS"][ok], logs)  # the booster's value, in its units
    # the boosters read the shared Morgan columns sparse: the same values as the dense rows
    est = panel.boosters.estimators["alpha/logS"][1]
    assert np.array_equal(panel.boosters.predict(view)["alpha/logS"], est.predict(view.base))
    assert np.isnan(frame["alpha/logS"][1])
    assert morgan_counts(["CCO"]).dtype == np.uint8
    assert isinstance(panel.boosters, PanelBoosters)


def test_a_booster_endpoint_is_explained_by_treeshap_over_its_morgan_atoms(hybrid):
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel.boosters import MORGAN_BITS, morgan_counts

    panel = AdmetPanel.load(hybrid[0], all_endpoints=True)
    smiles = ["c1ccccc1O", "not a smiles", "CC(=O)Oc1ccccc1C(=O)O"]
    got = explain_endpoint(panel, smiles, "alpha/logS", method="ig")  # the method does not apply
    assert got.method == "treeshap" and got.scores[1] is None and got.errors[1]
    for k in (0, 2):
        graphs, _ = panel.predictor.featurize([smiles[k]])
        phi = panel.boosters.contributions("alpha/logS", panel.view(graphs, [smiles[k]]))[0]
        present = morgan_counts([smiles[k]])[0] > 0
        assert len(got.scores[k]) == (6 + 1 if k == 0 else 13)  # one per heavy atom
        # the atoms share exactly what the molecule's present bits contribute
        assert got.scores[k].sum() == pytest.approx(phi[:MORGAN_BITS][present].sum(), abs=1e-9)
    assert list(dict.fromkeys(got.atoms["row"])) == ["row 1", "row 3"]  # in input order


def test_a_missing_or_foreign_bundle_is_refused(hybrid):
    from graphnorm.inference.admet_panel import AdmetPanel, PanelError

    out = hybrid[0]
    bundle = out / "readouts.json.xz"
    data = bundle.read_bytes()
    bundle.write_bytes(data[:-10] + b"0123456789")
    with pytest.raises(PanelError, match="not the bundle"):
        AdmetPanel.load(out, all_endpoints=True)
    bundle.unlink()
    with pytest.raises(PanelError, match="missing"):
        AdmetPanel.load(out, all_endpoints=True)


def test_a_hybrid_panel_ships_with_its_boosters_and_its_card_says_which(hybrid, tmp_path):
    from graphnorm.cli import main
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel.ship import ShipError, ship

    out = hybrid[0]
    panel = json.loads((out / "panel.json").read_text())
    for e in panel["endpoints"]:  # the tiny run holds up nowhere: the card lists shown ones
        e["shown"] = True
    (out / "panel.json").write_text(json.dumps(panel))
    assert main(["panel", "card", str(out), "--raw-dir", str(out.parent)]) == 0
    card = (out / "MODEL_CARD.md").read_text()
    assert "| predictor |" in card and " booster |" in card and " head |" in card
    assert "graphnorm panel readouts RUN" in card  # the rebuild names the step
    dest = tmp_path / "installed"
    ship(out, dest)
    assert (dest / "readouts.json.xz").read_bytes() == (out / "readouts.json.xz").read_bytes()
    assert AdmetPanel.load(dest, all_endpoints=True).boosters is not None
    (out / "readouts.json.xz").write_bytes(b"not the bundle")
    with pytest.raises(ShipError, match="boosters"):
        ship(out, tmp_path / "again")


def test_a_stored_booster_drops_report_only_lines_and_predicts_the_same():
    import lightgbm as lgb

    from graphnorm.baselines.booster_store import decode
    from graphnorm.panel.readouts import compact_model_text

    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 8))
    y = x[:, 0] - 2 * x[:, 1] ** 2 + rng.normal(scale=0.1, size=300)
    text = lgb.LGBMRegressor(n_estimators=20, verbose=-1).fit(x, y).booster_.model_to_string()
    compact = compact_model_text(text, x)
    assert len(compact) < 0.8 * len(text) and "split_gain=" not in compact
    small, full = decode(compact), decode(text)
    assert np.array_equal(small.predict(x), full.predict(x))
    # TreeSHAP reads the node counts: they stay, and the atom attributions with them
    assert np.array_equal(small.predict(x, pred_contrib=True), full.predict(x, pred_contrib=True))
    assert compact_model_text("0.25", x) == "0.25"  # a one-class rate is kept as it is


@pytest.fixture
def hybrid_backbone(judged, monkeypatch):
    """The tiny run's panel after J and K (RULE.md K), S made to choose every booster."""
    import graphnorm.stats.bootstrap as bootstrap
    from graphnorm.panel.hybrid import write_readout_panel

    out, run, panel = judged
    monkeypatch.setattr(bootstrap, "paired_interval", _always(0.01, 0.02))
    summary = write_readout_panel(run, out, progress=False, backbone=True)
    return out, run, summary


def test_a_backbone_booster_reads_the_network_less_its_own_output(hybrid_backbone):
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel.readouts import read_rows

    out, run, summary = hybrid_backbone
    k_rows = {r["task"]: r for r in read_rows(out, "backbone")}
    assert set(k_rows) == {"alpha/logS", "beta/t1"}
    assert all(r["against"] == "current" for r in k_rows.values())  # J's booster was there
    panel = json.loads((out / "panel.json").read_text())
    assert {e["task"]: e.get("features") for e in panel["endpoints"] if e.get("readout")} == {
        "alpha/logS": "backbone", "beta/t1": "backbone"}
    assert "## Boosters that also read the backbone" in summary.read_text()

    loaded = AdmetPanel.load(out, all_endpoints=True)
    smiles = ["CCO", "c1ccccc1O", "CCCl"]
    graphs, _ = loaded.predictor.featurize(smiles)
    view = loaded.view(graphs, smiles)
    tasks = list(run.corpus.task_names)
    width = 2048 + view.descriptors.shape[1] + view.embedding.shape[1] + len(tasks) - 1
    assert loaded.boosters.features("alpha/logS", view).shape == (3, width)
    # the endpoint's own output is the one column left out
    own = tasks.index("alpha/logS")
    x = loaded.boosters.features("alpha/logS", view)
    tail = x[:, -(len(tasks) - 1):]
    assert np.array_equal(tail, np.delete(view.outputs, own, axis=1))
    frame = loaded.predict(smiles)
    expect = np.empty(3)
    expect[view.rows] = loaded.boosters.predict(view)["alpha/logS"]
    assert np.allclose(frame["alpha/logS"], expect)


def test_a_long_input_is_predicted_slice_by_slice_with_the_same_rows(hybrid_backbone):
    from graphnorm.inference.admet_panel import AdmetPanel

    panel = AdmetPanel.load(hybrid_backbone[0], all_endpoints=True)
    smiles = ["CCO", "bad(", "c1ccccc1O", "CCCl", "", "CC(=O)Oc1ccccc1C(=O)O", "CCN"]
    whole = panel.predict(smiles)
    panel.predictor.rows_per_pass = 2  # four slices, one of them with two failures
    sliced = panel.predict(smiles)
    import pandas as pd

    # other batches, other float32 rounding: equal to 1e-5 (the domain distances are ~1e-3)
    pd.testing.assert_frame_equal(whole, sliced, atol=1e-5)
    assert sliced["error"][1] and sliced["error"][4] and not sliced["error"][0]
