"""The Morgan-count random forest and the small-table benchmark: repeated splits, paired
against the forest, ensembles as runs, conformal coverage of the runs."""
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.baselines.forest import fit_forests, morgan_counts, predict_forests
from graphnorm.cli import main

TINY = ["--preset", "tiny", "--batch-size", "32", "--threads", "1", "--no-progress",
        "--checkpoint-every", "1000", "--no-descriptors"]


@pytest.fixture(scope="module")
def table(zinc_property_table, tmp_path_factory):
    path = tmp_path_factory.mktemp("small") / "mols.csv"
    zinc_property_table.head(300).to_csv(path, index=False)
    return path


def test_counts_and_forest_learn_a_count_target():
    smiles = ["C" * k + "O" for k in range(1, 40)]
    x = morgan_counts(smiles)
    assert x.shape == (39, 2048) and x.sum(1).min() > 0 and float(x.max()) > 1  # counts, not bits
    y = np.array([[s.count("C")] for s in smiles], dtype=float)
    pred = predict_forests("regression", fit_forests("regression", x[::2], y[::2], seed=0, threads=1),
                           x[1::2])
    assert np.abs(pred - y[1::2]).mean() < 0.25 * np.abs(y[1::2] - y[::2].mean()).mean()
    with pytest.raises(ValueError, match="cannot read SMILES 'C1CC'"):
        morgan_counts(["C1CC"])


def test_rf_needs_a_table(tmp_path, capsys):
    assert main(["train", "--dataset", "zinc-subset", "--model", "rf", "--out", str(tmp_path / "x")]) == 2
    assert "--model rf takes a user table" in capsys.readouterr().err


@pytest.mark.slow  # trains forests and graph models: ~35 CPU-s
def test_repeats_pair_models_on_each_split(table, cache_root, tmp_path):
    out = tmp_path / "bench"
    argv = ["benchmark", "--data", str(table), "--target-columns", "logp", "--split", "random",
            "--repeats", "2", "--models", "graphormer,rf", "--norms", "ln", "--max-epochs", "2",
            "--ensemble", "1",
            "--cache-root", str(cache_root), "--out", str(out), *TINY]
    assert main(argv) == 0
    runs = {p.parent.parent.name + "/" + p.parent.name: json.loads(p.read_text())
            for p in out.glob("runs/*/seed*/metrics.json")}
    assert set(runs) == {"ln/seed0", "ln/seed1", "rf/seed0", "rf/seed1"}
    splits = {k: json.loads((out / "runs" / k / "splits.json").read_text()) for k in runs}
    assert splits["ln/seed0"]["test"] == splits["rf/seed0"]["test"]  # same split per repeat
    assert splits["ln/seed0"]["test"] != splits["ln/seed1"]["test"]  # a new split each repeat
    assert runs["rf/seed1"]["config"]["split_seed"] == 1 and runs["rf/seed0"]["metric"] == "rmse"
    from graphnorm.inference.predict import load_predictor

    test = pd.read_csv(out / "runs" / "rf" / "seed0" / "predictions_test.csv.gz")
    saved = load_predictor(out / "runs" / "rf" / "seed0").predict(test.smiles.tolist()[:5])
    np.testing.assert_allclose(saved.prediction, test["pred:logp"][:5], rtol=1e-5)
    rmse = float(np.sqrt(((test["pred:logp"] - test["y:logp"]) ** 2).mean()))
    assert runs["rf/seed0"]["test_rmse"] == pytest.approx(rmse)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["baseline"] == "rf"
    ln = next(v for v in summary["variants"] if v["norm"] == "ln")
    assert ln["paired_seeds"] == 2 and ln["ensemble_seeds"] == 0  # splits differ: no seed ensemble
    assert "Δ test vs rf" in (out / "summary.md").read_text()
    assert main(["benchmark", "--dataset", "zinc-subset", "--repeats", "2", "--out", str(tmp_path / "z")]) == 2


@pytest.mark.slow  # trains an ensemble: ~5 CPU-s
def test_an_ensemble_is_one_benchmark_run_with_intervals(table, cache_root, tmp_path):
    out = tmp_path / "ens"
    argv = ["benchmark", "--data", str(table), "--target-columns", "logp", "tpsa", "--split",
            "random", "--repeats", "1", "--norms", "ln", "--max-epochs", "2", "--ensemble", "2",
            "--no-tree-member",  # two graph models only (the tree member: test_boosted.py)
            "--cache-root", str(cache_root), "--out", str(out), *TINY]
    assert main(argv) == 0
    run = out / "runs" / "ln" / "seed0"
    metrics = json.loads((run / "metrics.json").read_text())
    members = [json.loads((run / f"model_{k}" / "metrics.json").read_text()) for k in (0, 1)]
    assert metrics["ensemble"] == 2 and metrics["steps"] == sum(m["steps"] for m in members)
    assert (out / "curves.png").is_file()  # drawn from the first member's log
    test = pd.read_csv(run / "predictions_test.csv.gz")
    err = np.sqrt(((test["pred:logp"] - test["y:logp"]) ** 2).mean())
    assert metrics["per_target"]["test"]["logp"]["rmse"] == pytest.approx(err, rel=1e-5)

    from graphnorm.bench.intervals import run_interval_report
    from graphnorm.inference.predict import load_predictor

    report = run_interval_report([run / "model_0"], 0.8)["runs"][0]
    assert 0.0 <= report["logp"]["coverage"] <= 1.0 and report["logp"]["width"] > 0
    predictor = load_predictor(run)
    df = predictor.add_intervals(predictor.predict(["CCO", "C1CC"]), 0.8)
    assert list(df.columns[:5]) == ["smiles", "logp", "logp_lo", "logp_hi", "tpsa"]
    lo, mid, hi = df.loc[0, ["logp_lo", "logp", "logp_hi"]]
    assert lo < mid < hi and np.isnan(df.loc[1, "logp_lo"]) and df.loc[1, "error"]
    with pytest.raises(ValueError, match="--calibrate is for classification"):
        predictor.calibrate(df, "platt")
