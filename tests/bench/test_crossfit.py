"""Cross-fitted validation scores (graphnorm/bench/crossfit.py) and the validation trace they
read (graphnorm/train/val_trace.py)."""
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.bench.crossfit import crossfit_run, folds_of
from graphnorm.run_folder import RunRecord
from graphnorm.train.val_trace import TRACE_FILE, TraceError, read_trace

SMILES = ([f"c1ccc(cc1){'C' * k}O" for k in range(1, 13)] +
          [f"C1CCNCC1{'C' * k}N" for k in range(1, 13)] + ["C" * k + "O" for k in range(1, 13)])


def _fake_run(folder, preds, y, metric="rmse", steps=None):
    """A single graph run's folder: a record and a trace of ``preds`` [S, N, 1]."""
    folder.mkdir(parents=True, exist_ok=True)
    RunRecord(metric, 0, 0.0, None, config={"tree_weight": "equal"}).write(folder)
    steps = np.arange(1, len(preds) + 1) * 10 if steps is None else steps
    np.savez_compressed(folder / TRACE_FILE, steps=steps, preds=preds.astype(np.float32),
                        y=y.astype(np.float32), smiles=np.array(SMILES[:preds.shape[1]]))
    return folder


def test_each_fold_is_scored_by_the_step_the_other_fold_chose(tmp_path):
    fold = folds_of(SMILES)
    assert np.bincount(fold).tolist() == [18, 18]  # dealt out evenly
    y = np.arange(len(SMILES), dtype=float)[:, None]
    # step 10 is exact on fold 0 and off by 5 on fold 1; step 20 the other way round
    a = np.where(fold[:, None] == 0, y, y + 5.0)
    b = np.where(fold[:, None] == 1, y, y + 5.0)
    result = crossfit_run(_fake_run(tmp_path / "run", np.stack([a, b]), y))
    # fold 1 is chosen for by fold 0 rows (step 10), which is off by 5 on fold 1, and so on
    assert result.crossfit == pytest.approx(5.0, abs=1e-5)
    assert result.steps == [[20], [10]]
    # on all rows the better step is the one exact on the larger fold
    larger = int(np.argmax(np.bincount(fold)))
    assert result.plain == pytest.approx(5.0 * np.sqrt(np.mean(fold != larger)), abs=1e-5)
    assert sum(result.fold_sizes) == len(SMILES) and not result.weights_refitted


def test_a_step_good_on_both_folds_loses_nothing(tmp_path):
    y = np.linspace(0, 1, len(SMILES))[:, None]
    noisy = y + np.random.default_rng(0).normal(0, 0.3, y.shape)
    result = crossfit_run(_fake_run(tmp_path / "run", np.stack([noisy, y, noisy]), y))
    assert result.crossfit == pytest.approx(0.0, abs=1e-6) == result.plain
    assert result.steps == [[20], [20]]


def test_folds_deal_each_class_evenly_and_do_not_follow_row_order():
    y = np.array([1.0] * 6 + [0.0] * 30)
    fold = folds_of(SMILES, y)
    assert np.bincount(fold[y == 1]).tolist() == [3, 3]
    assert np.bincount(fold[y == 0]).tolist() == [15, 15]
    order = np.random.default_rng(1).permutation(len(SMILES))
    again = folds_of([SMILES[i] for i in order], y[order])
    assert (again == fold[order]).all()


def test_a_tree_model_alone_needs_no_trace(tmp_path):
    folder = tmp_path / "gbm"
    folder.mkdir()
    RunRecord("rocauc", 0, 0.81, None, model="gbm", config={"model_name": "gbm"}).write(folder)
    result = crossfit_run(folder)
    assert result.crossfit == result.plain == pytest.approx(0.81) and result.steps == []


def test_a_run_without_a_trace_is_named(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    RunRecord("rmse", 0, 0.0, None, config={}).write(folder)
    with pytest.raises(TraceError, match="--trace-validation"):
        crossfit_run(folder)
    (folder / TRACE_FILE).write_bytes(b"not a zip")
    with pytest.raises(TraceError, match="not a readable"):
        read_trace(folder)


def test_an_ensemble_trace_matches_its_predictions_and_its_recorded_score(
        zinc_property_table, cache_root, tmp_path):
    """End to end: a graph member traced at every validation, with a tree member: the trace at
    the best step is the member's written validation predictions, and the plain score the
    cross-fit recomputes is the ensemble's recorded validation score."""
    from graphnorm.run_folder import read_record
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.ensemble import train_ensemble

    table = tmp_path / "t.csv"
    zinc_property_table.head(160)[["smiles", "qed_high"]].to_csv(table, index=False)
    out = tmp_path / "ens"
    train_ensemble(TrainConfig(
        data=str(table), split="scaffold", task="classification", preset="tiny", max_steps=12,
        val_every_steps=3, batch_size=32, tree_member=True, tree_model="rf",
        tree_weight="0.6", member_average="logodds", trace_validation=True, out=str(out),
        cache_root=str(cache_root), threads=1, progress=False, checkpoint_every_n_steps=1000))
    trace = read_trace(out / "model_0")
    assert len(trace["steps"]) >= 3 and (np.diff(trace["steps"]) > 0).all()
    written = pd.read_csv(out / "model_0" / "predictions_val.csv.gz")
    assert list(trace["smiles"]) == written["smiles"].tolist()
    hits = [np.allclose(p[:, 0], written["pred:qed_high"], atol=1e-5) for p in trace["preds"]]
    assert any(hits)  # best.ckpt's predictions are one of the traced validations
    result = crossfit_run(out)
    assert result.plain == pytest.approx(read_record(out).val, abs=1e-6)
    assert all(s in trace["steps"] for fold in result.steps for s in fold)
    assert 0.0 <= result.crossfit <= 1.0
    # at the run's own weights the same score; with the tree alone, the tree's validation score
    assert crossfit_run(out, weights=[0.4, 0.6]).plain == pytest.approx(result.plain, abs=1e-9)
    tree_only = crossfit_run(out, weights=[0.0, 1.0])
    assert tree_only.plain == tree_only.crossfit == pytest.approx(
        json.loads((out / "forest" / "metrics.json").read_text())["val_rocauc"], abs=1e-6)
    assert crossfit_run(out, weights=[1.0, 0.0]).plain != pytest.approx(result.plain, abs=1e-9)
    with pytest.raises(ValueError, match="2 members"):
        crossfit_run(out, weights=[1.0])


def _suite_run(suite, task, seed, val, metric="mae", test=None, trace=None):
    folder = suite / task / "runs" / "admet" / f"seed{seed}"
    folder.mkdir(parents=True)
    RunRecord(metric, seed, val, test, config={"tree_weight": "equal"}).write(folder)
    if trace is not None:
        y = np.zeros((len(SMILES), 1))
        np.savez_compressed(folder / TRACE_FILE, steps=np.array([5]), preds=trace[None],
                            y=y, smiles=np.array(SMILES))


def test_two_suites_are_compared_by_the_written_rule(tmp_path):
    from graphnorm.bench.tdc_versus import CROSSFIT_BELOW_ROWS, versus, versus_markdown

    group = tmp_path / "group"
    for task, rows in (("caco2_wang", CROSSFIT_BELOW_ROWS - 1),
                       ("lipophilicity_astrazeneca", CROSSFIT_BELOW_ROWS)):
        (group / task).mkdir(parents=True)
        pd.DataFrame({"Drug": ["C"] * rows, "Y": 0.0}).to_csv(group / task / "train_val.csv")
    a, b = tmp_path / "a", tmp_path / "b"
    for seed in range(3):
        # small table: the recorded val score is ignored, the trace's cross-fit is read
        _suite_run(a, "caco2_wang", seed, 9.0, trace=np.full((len(SMILES), 1), 0.1 + seed / 100))
        _suite_run(b, "caco2_wang", seed, 0.0, trace=np.full((len(SMILES), 1), 0.5))
        # large table: plain validation; B better by less than a seed's spread
        _suite_run(a, "lipophilicity_astrazeneca", seed, 0.50 + 0.1 * seed)
        _suite_run(b, "lipophilicity_astrazeneca", seed, 0.48 + 0.1 * seed)
    table = versus(a, b, group).set_index("task")
    assert table.loc["caco2_wang", "score"] == "cross-fitted"
    assert table.loc["caco2_wang", "a_mean"] == pytest.approx(0.11, abs=1e-6)
    assert table.loc["caco2_wang", "verdict"] == "A"  # lower MAE, beyond the seeds' spread
    assert table.loc["lipophilicity_astrazeneca", "score"] == "validation"
    assert table.loc["lipophilicity_astrazeneca", "verdict"] == "tied"
    assert "A better on 1 of 2 tasks, B better on 0, tied on 1" in versus_markdown(
        table.reset_index(), "a", "b")
    from graphnorm.cli import main

    report = tmp_path / "versus.json"
    assert main(["compare", str(a), str(b), "--suite", "tdc-admet", "--split", "val",
                 "--tdc-dir", str(group), "--json", str(report)]) == 0
    assert {r["task"]: r["verdict"] for r in pd.read_json(report).to_dict("records")} == {
        "caco2_wang": "A", "lipophilicity_astrazeneca": "tied"}
    assert main(["compare", str(a), str(b), "--suite", "tdc-admet"]) == 2  # test: refused
    _suite_run(b, "caco2_wang", 3, 0.0, test=0.4)  # a --final run in a selection comparison
    with pytest.raises(ValueError, match="scored on test"):
        versus(a, b, group)


def test_the_trace_appends_replaces_after_a_resume_and_survives_damage(tmp_path):
    from types import SimpleNamespace

    import torch

    from graphnorm.train.val_trace import ValidationTrace

    trace = ValidationTrace(tmp_path)
    module = SimpleNamespace(last_validation=None)

    def validate(step, value):
        module.last_validation = (torch.full((2, 1), value), torch.zeros(2, 1), ["CCO", None])
        trace.on_validation_end(SimpleNamespace(sanity_checking=False, global_step=step,
                                                world_size=1), module)

    validate(5, 1.0)
    validate(10, 2.0)
    validate(10, 3.0)  # resumed from step 5's checkpoint: step 10 again replaces the first
    got = read_trace(tmp_path)
    assert got["steps"].tolist() == [5, 10] and got["preds"][:, 0, 0].tolist() == [1.0, 3.0]
    assert got["smiles"].tolist() == ["CCO", ""]
    (tmp_path / TRACE_FILE).write_bytes(b"damaged")
    with pytest.warns(UserWarning, match="starting the trace again"):
        validate(15, 4.0)
    assert read_trace(tmp_path)["steps"].tolist() == [15]


def test_the_paired_rule_sees_a_steady_gain_that_the_seed_spread_hides(tmp_path):
    from graphnorm.bench.tdc_versus import CROSSFIT_BELOW_ROWS, versus, versus_markdown

    group = tmp_path / "group"
    for task in ("lipophilicity_astrazeneca", "solubility_aqsoldb"):
        (group / task).mkdir(parents=True)
        pd.DataFrame({"Drug": ["C"] * CROSSFIT_BELOW_ROWS, "Y": 0.0}).to_csv(
            group / task / "train_val.csv")
    a, b = tmp_path / "a", tmp_path / "b"
    split_effect = [0.0, 0.3, -0.2, 0.5, 0.1]  # each seed's split moves both arms alike
    for seed, shift in enumerate(split_effect):
        # lipophilicity (MAE): A lower by 0.02 +- 0.005 on every seed
        _suite_run(a, "lipophilicity_astrazeneca", seed, 0.60 + shift - 0.02 - 0.005 * (seed % 2))
        _suite_run(b, "lipophilicity_astrazeneca", seed, 0.60 + shift)
        if seed < 4:  # solubility: A better on each of 4 seeds, but 4 < 5 seeds is tied
            _suite_run(a, "solubility_aqsoldb", seed, 0.7 + shift - 0.1)
            _suite_run(b, "solubility_aqsoldb", seed, 0.7 + shift)
    spread = versus(a, b, group).set_index("task")
    assert spread.loc["lipophilicity_astrazeneca", "verdict"] == "tied"  # rule B cannot see it
    paired = versus(a, b, group, rule="paired").set_index("task")
    lipo = paired.loc["lipophilicity_astrazeneca"]
    assert lipo["verdict"] == "A"
    d = np.array([0.02 + 0.005 * (s % 2) for s in range(5)])  # signed: higher is better
    half = 2.776 * d.std(ddof=1) / np.sqrt(5)
    assert lipo["d_mean"] == pytest.approx(d.mean()) and lipo["d_low"] == pytest.approx(
        d.mean() - half, abs=1e-4)
    assert paired.loc["solubility_aqsoldb", "verdict"] == "tied"
    # B better beyond the interval when the arms swap
    assert versus(b, a, group, rule="paired").set_index("task").loc[
        "lipophilicity_astrazeneca", "verdict"] == "B"
    assert "rule paired" in versus_markdown(paired.reset_index(), "a", "b")
    with pytest.raises(ValueError, match="rule 'median'"):
        versus(a, b, group, rule="median")
