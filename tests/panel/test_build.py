"""The ADMET panel: which endpoints are shown (graphnorm/panel/build.py) and what
``graphnorm admet`` predicts from it (graphnorm/inference/admet_panel.py)."""
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from graphnorm.panel import build as P
from tiny_panel import make_tiny_panel


def test_conformal_halfwidth_is_the_finite_sample_quantile():
    r = np.arange(1, 20, dtype=float)  # n = 19: ceil(0.9 * 20) = 18th smallest
    assert P.conformal_halfwidth(r) == 18.0
    assert P.conformal_halfwidth(-r) == 18.0
    assert math.isinf(P.conformal_halfwidth(np.ones(5)))  # too few rows for 90 %


def _rows(n, rng):
    return rng.random(n) < 0.5


def test_an_endpoint_is_shown_on_the_selection_half_and_scored_on_the_report_half():
    rng = np.random.default_rng(0)
    n = 400
    select = _rows(n, rng)
    y = (rng.random(n) < 0.3).astype(float)
    good = y * 2 + rng.normal(0, 1, n)  # clearly better than chance
    shown = P.endpoint("c/t", True, y, good, select)
    assert shown.shown and shown.score_select >= P.MIN_AUROC
    have = ~select
    from sklearn.metrics import roc_auc_score

    assert shown.score == pytest.approx(roc_auc_score(y[have], good[have]))
    assert shown.n == int(have.sum()) and shown.n_select == int(select.sum())
    noise = rng.normal(0, 1, n)
    assert not P.endpoint("c/t", True, y, noise, select).shown
    few = np.where(np.arange(n) < 30, y, np.nan)  # under MIN_SELECT labels
    assert not P.endpoint("c/t", True, few, good, select).shown
    assert not P.endpoint("c/t", True, few, good, select).judged and shown.judged
    assert P.endpoint("c/t", True, y, noise, select).judged  # judged, and not shown
    # regression: R² in its units; an interval from the report half's residuals
    x = rng.normal(5, 2, n)
    fit = P.endpoint("c/r", False, x, x + rng.normal(0, 0.5, n), select, "log units")
    assert fit.shown and fit.units == "log units" and 0.3 < fit.halfwidth < 2.0
    assert not P.endpoint("c/r", False, x, rng.normal(5, 2, n), select).shown


def test_binary_probabilities_are_platt_scaled_on_the_selection_half():
    rng = np.random.default_rng(2)
    n = 2000
    y = (rng.random(n) < 0.3).astype(float)
    true_logit = np.where(y == 1, 1.0, -1.0) + rng.normal(0, 1, n)
    z = 4 * true_logit + 3  # a ranking model, badly overconfident and shifted
    select = _rows(n, rng)
    fit = P.calibrated(y[select], z[select], y[~select], z[~select])
    a, b = fit["platt"]
    assert 0 < a < 1  # it shrinks the overconfident logits
    assert fit["ece"] < 0.05 < fit["ece_uncalibrated"]
    # one class on S: nothing to fit, the raw probabilities are kept and judged
    one = P.calibrated(np.zeros(20), z[:20], y[~select], z[~select])
    assert "platt" not in one and one["ece"] == one["ece_uncalibrated"]
    entry = P.endpoint("c/t", True, y, z, select)
    assert entry.platt == pytest.approx((a, b)) and entry.ece == pytest.approx(fit["ece"])
    assert entry.to_dict()["platt"] == list(entry.platt)  # the file keeps a list


def test_the_far_from_training_yardstick_flags_outliers():
    rng = np.random.default_rng(1)
    train = rng.normal(0, 1, (600, 4)).astype(np.float32)
    near = rng.normal(0, 1, (200, 4)).astype(np.float32)
    domain = P.domain_yardstick(train, near)
    far = np.full((3, 4), 25.0, dtype=np.float32)
    assert (domain.distance(far) > domain.threshold).all()
    assert (domain.distance(near) > domain.threshold).mean() < 0.1


@pytest.fixture
def panel_folder(tmp_path):
    return make_tiny_panel(tmp_path)


def test_the_panel_predicts_every_endpoint_in_units_with_errors_per_row(panel_folder):
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.inference.admet_panel import AdmetPanel, PanelError

    out, run, panel = panel_folder
    assert {e["task"] for e in panel["endpoints"]} == set(run.corpus.task_names)
    assert panel["held_out_molecules"] == len(run.held_out_positions)
    assert not any(e["shown"] for e in panel["endpoints"])  # a 4-step model on 22 molecules
    with pytest.raises(PanelError, match="no endpoint"):
        AdmetPanel.load(out)
    model = AdmetPanel.load(out, all_endpoints=True)  # ... but --all shows every endpoint
    frame = model.predict(["c1ccccc1O", "not a smiles", "CCO"])
    assert frame["error"].tolist()[0] == "" and "not a smiles" not in frame["error"][0]
    assert frame["error"][1] != "" and np.isnan(frame.loc[1, "alpha/logS"])
    # the values are the model's outputs in units: standardized logS back with the scaling
    loaded = load_checkpoint(out / "best.ckpt")
    t = loaded.targets.index("alpha/logS")
    from graphnorm.inference.predict import Predictor

    graphs, _ = Predictor(loaded).featurize(["c1ccccc1O"])
    from graphnorm.graph.collate import collate_graphs

    with torch.no_grad():
        z = loaded.model.eval()(collate_graphs([graphs[0][1]]))[0, t].item()
    expect = z * loaded.target_std.reshape(-1)[t].item() + loaded.target_mean.reshape(-1)[t].item()
    assert frame.loc[0, "alpha/logS"] == pytest.approx(expect, abs=1e-4)
    assert 0.0 <= frame.loc[0, "beta/t1"] <= 1.0  # binary: a probability
    assert frame.loc[0, "alpha/logS_lo"] <= frame.loc[0, "alpha/logS"] <= frame.loc[0, "alpha/logS_hi"]
    assert frame["far_from_training"][1] is None and frame["far_from_training"][0] in (True, False)


def test_a_molecule_outside_what_the_panel_learned_is_predicted_with_a_warning(panel_folder):
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.pretrain.data import MAX_ATOMS

    out, _, _ = panel_folder
    # a pre-training checkpoint records the largest molecule its corpus kept
    assert load_checkpoint(out / "best.ckpt").meta["train_domain"]["max_atoms"] == MAX_ATOMS
    frame = AdmetPanel.load(out, all_endpoints=True).predict(
        ["CCO", "[*]CC", "C" * (MAX_ATOMS + 1), "[H][H]"])
    assert frame["warning"][0] == "" and frame["error"][0] == ""
    assert "wildcard" in frame["warning"][1] and not np.isnan(frame.loc[1, "alpha/logS"])
    assert frame["warning"][2].startswith(f"{MAX_ATOMS + 1} atoms, more than any training "
                                          f"molecule ({MAX_ATOMS})")
    assert "no heavy atoms" in frame["error"][3] and frame["warning"][3] == ""


def test_the_shipped_panel_flags_molecules_larger_than_its_corpus_kept():
    from graphnorm.inference.admet_panel import CORPUS_MAX_ATOMS, AdmetPanel

    panel = AdmetPanel.load()  # its checkpoints predate the record: the corpus's limit then
    assert "max_atoms" not in panel.loaded.meta["train_domain"]
    assert panel.max_atoms == CORPUS_MAX_ATOMS == 100


def test_the_panel_shows_the_platt_scaled_probability(panel_folder):
    from graphnorm.inference.admet_panel import AdmetPanel

    out, _, _ = panel_folder
    record = json.loads((out / "panel.json").read_text())
    entry = next(e for e in record["endpoints"] if e["task"] == "beta/t1")

    def predicted(platt):
        entry.pop("platt", None)
        if platt:
            entry["platt"] = platt
        (out / "panel.json").write_text(json.dumps(record))
        return AdmetPanel.load(out, all_endpoints=True).predict(["c1ccccc1O"])

    before, after = predicted(None), predicted([0.5, -1.0])  # raw sigmoid(z), then scaled
    p = before.loc[0, "beta/t1"]
    z = np.log(p / (1 - p))
    assert after.loc[0, "beta/t1"] == pytest.approx(1 / (1 + np.exp(-(0.5 * z - 1.0))), abs=1e-5)
    assert after.loc[0, "alpha/logS"] == pytest.approx(before.loc[0, "alpha/logS"])
    with warnings.catch_warnings():  # a steep scale saturates quietly (no overflow warning)
        warnings.simplefilter("error")
        steep = predicted([1e4, -1e4 * (z + 1)]).loc[0, "beta/t1"]
    assert steep == pytest.approx(0.0, abs=1e-12)
    predicted(None)


def test_a_panel_of_another_checkpoint_is_refused(panel_folder):
    from graphnorm.cli import main
    from graphnorm.inference.admet_panel import AdmetPanel, PanelError

    out, _, _ = panel_folder
    assert main(["admet", "--model", str(out), "--all", "--smiles", "CCO",
                 "--output", str(out / "p.csv")]) == 0
    assert pd.read_csv(out / "p.csv")["smiles"].tolist() == ["CCO"]
    record = json.loads((out / "panel.json").read_text())
    record["checkpoint_sha256"] = "0" * 64
    (out / "panel.json").write_text(json.dumps(record))
    with pytest.raises(PanelError, match="best.ckpt is not the file it was built on"):
        AdmetPanel.load(out)
    (out / "panel.json").write_text("{")
    with pytest.raises(PanelError, match="not a panel file"):
        AdmetPanel.load(out)


def test_the_model_card_is_written_from_the_run_records(panel_folder, capsys):
    from graphnorm.cli import main
    from graphnorm.panel.card import CARD_FILE

    out, run, panel = panel_folder
    import os

    raw = str(out.parent)  # the tiny corpus lies beside the run
    assert main(["panel", "card", str(out), "--raw-dir", raw]) == 0
    card = (out / CARD_FILE).read_text()
    assert "| alpha |" in card and "| beta |" in card  # one row per corpus, licence unknown
    assert "warning: no meta.json under" in capsys.readouterr().err  # and the user is told
    assert f"0 of {len(panel['endpoints'])} trained endpoints held up" in card
    rebuild = next(line for line in card.splitlines() if line.startswith("graphnorm pretrain --out RUN --norm"))
    assert rebuild.endswith("--max-steps 4") and "--batch-size 4" in rebuild
    assert "gbm" not in card.split("## Endpoints")[1]  # no versus_gbm.jsonl: no gbm column
    assert "continued on" not in card
    # an endpoint's one-gbm verdict (versus_gbm.jsonl) is named beside its score
    shown = dict(panel, endpoints=[dict(e, shown=e["task"] == "alpha/logS") for e in panel["endpoints"]])
    (out / "panel.json").write_text(json.dumps(shown))
    (out / "versus_gbm.jsonl").write_text(json.dumps({"task": "alpha/logS", "single_table": 0.5,
                                                      "verdict": "single_table"}) + "\n")
    assert main(["panel", "card", str(out), "--raw-dir", raw]) == 0
    card = (out / CARD_FILE).read_text()
    assert "| alpha/logS |" in card and "| 0.500 (better) |" in card
    assert ("of the 1 shown endpoints the network's head alone predicts, the head is "
            "better on 0, gbm on 1") in card
    (out / "versus_gbm.jsonl").unlink()
    (out / "panel.json").write_text(json.dumps(panel))
    log = out / "log.jsonl"  # the run continued on a GPU: the card says from where on
    last = json.loads(log.read_text().splitlines()[-1])
    log.write_text(log.read_text() + json.dumps(dict(last, step=6, device="cuda")) + "\n")
    assert main(["panel", "card", str(out), "--raw-dir", raw]) == 0
    assert "from step 6 on come from a run continued on `cuda`" in (out / CARD_FILE).read_text()
    (out / "panel.json").unlink()
    assert main(["panel", "card", str(out), "--raw-dir", raw]) == 2
    assert os.path.exists(out / CARD_FILE)


def test_a_card_of_a_build_that_read_tdc_says_it_starts_no_training(panel_folder):
    """A product build (--with-tdc-tables) learned TDC test molecules: its card must not offer
    it as a `train` start, and names where the TDC tables come from and their licence."""
    from graphnorm.cli import main
    from graphnorm.panel.card import CARD_FILE
    from graphnorm.pretrain.corpus import TDC_CORPUS

    out, run, panel = panel_folder
    raw = str(out.parent)
    spec_file, data_file = out / "pretrain.json", out / "data.json"
    spec, data = spec_file.read_text(), data_file.read_text()
    try:
        assert main(["panel", "card", str(out), "--raw-dir", raw]) == 0
        card = (out / CARD_FILE).read_text()
        assert "A starting point for fine-tuning" in card and "Not a starting point" not in card
        assert "kept (`--keep-tdc`)" in card  # the tiny run keeps TDC molecules
        spec_file.write_text(json.dumps(dict(json.loads(spec), tdc_tables=True, exclude_tdc=False)))
        record = json.loads(data)
        record["sources"] = dict(record.get("sources", {}), **{TDC_CORPUS: "0" * 64})
        data_file.write_text(json.dumps(record))
        assert main(["panel", "card", str(out), "--raw-dir", raw]) == 0
        card = (out / CARD_FILE).read_text()
        assert "Not a starting point for `train`" in card
        assert "A starting point for fine-tuning" not in card
        assert "left out because they are in a TDC ADMET table" not in card
        assert "the TDC ADMET tables among them" in card
        assert f"| {TDC_CORPUS} | TDC ADMET group" in card and "CC BY 4.0" in card
    finally:
        spec_file.write_text(spec)
        data_file.write_text(data)


def test_the_rebuild_flags_make_the_same_spec():
    import argparse

    from graphnorm.pretrain.cli import add_pretrain_args, spec_from_args
    from graphnorm.panel.rebuild import rebuild_flags
    from graphnorm.pretrain.spec import PretrainSpec

    p = argparse.ArgumentParser()
    add_pretrain_args(p)
    for spec in (PretrainSpec(), PretrainSpec(descriptors="fast", held_out_tasks=False,
                                              val_percent=15, batch_size=2048, lr=2e-3),
                 PretrainSpec(descriptors=True, exclude_tdc=False, corpora=("a", "b"),
                              sampling="task", num_layers=6, hidden=96, ffn_hidden=192),
                 PretrainSpec(exclude_tdc=False, tdc_tables=True,
                              leave_out=("a/logd", "tdc/lipophilicity_astrazeneca"))):
        flags = rebuild_flags(spec.to_dict()).split()
        assert spec_from_args(p.parse_args(["--out", "x", *flags])) == spec, flags
    # a warm start (the product build's): the flag, and the schedule goes on from its steps
    from graphnorm.pretrain.cli import _steps_trained

    warm = PretrainSpec(exclude_tdc=False, init_from="admet",
                        schedule_offset=_steps_trained("admet"))
    flags = rebuild_flags(warm.to_dict()).split()
    assert "--init-from" in flags and spec_from_args(p.parse_args(["--out", "x", *flags])) == warm


def test_without_a_model_the_shipped_panel_is_read_or_its_absence_named(panel_folder, monkeypatch):
    import graphnorm.pretrained as shipped
    from graphnorm.inference.admet_panel import AdmetPanel, PanelError

    out, _, _ = panel_folder
    monkeypatch.setattr(shipped, "ADMET_PANEL", str(out.parent / "nothing-here"))
    with pytest.raises(PanelError, match="ships no ADMET panel"):
        AdmetPanel.load()
    monkeypatch.setattr(shipped, "ADMET_PANEL", str(out))  # an absolute path wins the join
    assert len(AdmetPanel.load(all_endpoints=True).entries) == 4
