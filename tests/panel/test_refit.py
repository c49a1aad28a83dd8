"""`graphnorm panel refit HELD REFIT` (graphnorm/panel/refit.py): a held-out build's panel
carried to the same recipe trained on every row, its boosters and yardstick fitted again."""
import copy
import dataclasses
import json
import shutil

import numpy as np
import pytest

from tiny_panel import make_tiny_panel


def _always(lo, hi):
    return lambda *a, **k: (lo, hi)


@pytest.fixture(scope="module")
def held(tmp_path_factory):
    """The tiny descriptor run's hybrid panel (S made to choose the booster for two
    endpoints) and the same recipe trained on every row, in a folder of its own."""
    import torch

    import graphnorm.stats.bootstrap as bootstrap
    from graphnorm.panel.hybrid import write_readout_panel
    from graphnorm.pretrain import splits
    from graphnorm.pretrain.fit import train
    from graphnorm.pretrain.setup import PretrainRun

    tmp = tmp_path_factory.mktemp("refit")
    folder, run, panel = make_tiny_panel(tmp, descriptors="fast")
    panel = copy.deepcopy(panel)
    for e in panel["endpoints"]:
        e["judged"] = e["task"] in ("alpha/logS", "beta/t1")
    (folder / "panel.json").write_text(json.dumps(panel))
    keep = bootstrap.paired_interval
    bootstrap.paired_interval = _always(0.01, 0.02)
    try:
        write_readout_panel(run, folder, progress=False)
    finally:
        bootstrap.paired_interval = keep
    spec = dataclasses.replace(run.spec, val_percent=0, seed=1)
    keep, splits.HELD_TASK_MIN = splits.HELD_TASK_MIN, 100  # as the held run: every head trained
    try:
        every = PretrainRun(spec, tmp / "admet_corpus", cache=tmp / "cache", progress=False)
    finally:
        splits.HELD_TASK_MIN = keep
    out = tmp / "refit"
    out.mkdir()
    every.write_records(out)
    torch.manual_seed(1)
    train(every, out, 600, max_steps=4, eval_every=2, progress=False)
    return folder, run, out, every, tmp


def test_the_refit_carries_the_choices_and_refits_boosters_on_every_row(held, tmp_path,
                                                                       monkeypatch):
    import hashlib

    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel import Panel
    from graphnorm.panel import boosters as B
    from graphnorm.panel.refit import refit_panel

    folder, run, out, every, raw = held
    refit = tmp_path / "refit"
    shutil.copytree(out, refit)
    fitted = {}
    real = B.booster_estimator

    def counting(binary, transform, threads=1, model=None):
        est = real(binary, transform, threads, model)
        fit = est.fit

        def fit_and_count(x, y, **fit_params):  # e.g. init_score: a quantity's margins
            fitted[len(fitted)] = len(y)
            return fit(x, y, **fit_params)

        est.fit = fit_and_count
        return est

    monkeypatch.setattr(B, "booster_estimator", counting)
    before = Panel.read(folder)
    panel = refit_panel(folder, every, refit, progress=False)
    assert panel.endpoints == before.endpoints  # choices, scores, intervals, calibrations
    assert panel.refit_of == before.checkpoint_sha256
    assert panel.checkpoint_sha256 == hashlib.sha256(
        (refit / "best.ckpt").read_bytes()).hexdigest()
    assert Panel.read(refit) == panel
    corpus = every.corpus
    labels = sorted(int((corpus.task == corpus.task_names.index(t)).sum())
                    for t in before.booster_tasks())
    assert len(labels) == 2 and sorted(fitted.values()) == labels  # held-out molecules too
    trained_before = len(run.train_positions)
    assert len(every.train_positions) > trained_before
    assert panel.readouts_sha256 == hashlib.sha256(
        (refit / "readouts.json.xz").read_bytes()).hexdigest()
    frame = AdmetPanel.load(refit, all_endpoints=True).predict(["CCO", "c1ccccc1O"])
    assert np.isfinite(frame["alpha/logS"].astype(float)).all()


def test_the_yardstick_keeps_the_share_of_training_molecules_flagged():
    from graphnorm.panel import Domain, nearest_distance
    from graphnorm.panel.refit import carried_domain

    rng = np.random.default_rng(0)
    old = rng.normal(size=(400, 4))
    centroids = old[:8]
    distances = nearest_distance(old.astype(np.float32), centroids.astype(np.float32))
    held = Domain(centroids.tolist(), float(np.quantile(distances, 0.8)))
    new = 5.0 * rng.normal(size=(400, 4)).astype(np.float32)  # another model's scale
    domain = carried_domain(held, distances, new)
    share = np.mean(domain.distance(new) <= domain.threshold)
    assert share == pytest.approx(np.mean(distances <= held.threshold), abs=0.01)
    assert domain.threshold > held.threshold  # in the new model's units


def test_runs_that_are_not_a_held_build_and_its_refit_are_refused(held, tmp_path):
    from graphnorm.panel import Panel
    from graphnorm.panel.refit import RefitError, check_refit

    folder, run, out, every, raw = held
    panel = Panel.read(folder)
    sha = every.corpus.checksum()
    check_refit(run.spec, every.spec, panel, sha)  # accepted
    with pytest.raises(RefitError, match="holds 30 % of scaffolds out"):
        check_refit(run.spec, run.spec, panel, sha)
    with pytest.raises(RefitError, match="trained every row"):
        check_refit(every.spec, every.spec, panel, sha)
    wider = dataclasses.replace(every.spec, hidden=32)
    with pytest.raises(RefitError, match="hidden: 16 vs 32"):
        check_refit(run.spec, wider, panel, sha)
    with pytest.raises(RefitError, match="another corpus"):
        check_refit(run.spec, every.spec, panel, "0" * 64)
    with pytest.raises(RefitError, match="itself a refit"):
        check_refit(run.spec, every.spec, panel.replace(refit_of="ab" * 32), sha)
    from graphnorm.panel.refit import refit_panel

    with pytest.raises(RefitError, match="no pretrain.json, best.ckpt, panel.json"):
        refit_panel(tmp_path, every, out, progress=False)


def test_the_refits_card_says_whose_scores_it_reports(held, tmp_path):
    from graphnorm.panel.card import model_card
    from graphnorm.panel.refit import refit_panel

    folder, run, out, every, raw = held
    refit = tmp_path / "refit"
    shutil.copytree(out, refit)
    panel = refit_panel(folder, every, refit, progress=False)
    card = model_card(refit, raw)
    assert f"a refit of the held-out build `{panel.refit_of[:16]}" in card
    assert "Measured by the held-out build" in card and "graphnorm panel refit RUN REFIT" in card
    assert "lowest held-out loss" not in card


def test_the_command_carries_the_panel(held, tmp_path, monkeypatch, capsys):
    from graphnorm.cli import main
    from graphnorm.panel import Panel

    folder, run, out, every, raw = held
    refit = tmp_path / "refit"
    shutil.copytree(out, refit)
    monkeypatch.setenv("GRAPHNORM_CACHE", str(raw / "cache"))
    assert main(["panel", "refit", str(folder), str(refit), "--raw-dir", str(raw),
                 "--quiet"]) == 0
    assert "2 boosters refitted on every row" in capsys.readouterr().out
    assert Panel.read(refit).refit_of == Panel.read(folder).checkpoint_sha256
    assert main(["panel", "refit", str(refit), str(refit), "--raw-dir", str(raw),
                 "--quiet"]) == 2  # a refit is no held-out build: named, not a traceback
    assert "itself a refit" in capsys.readouterr().err
