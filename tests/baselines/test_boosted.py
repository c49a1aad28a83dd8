"""Boosted trees (``--model gbm``): the MapLight features, fitting in log units where the
labels ask for it, the saved model (LightGBM text, no pickle), and gbm as an ensemble member."""
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.baselines.boosted import fit_boosted, predict_boosted
from graphnorm.baselines.boosted_file import BOOSTED_FILE, load_boosted
from graphnorm.baselines.tree_member import TreeFileError
from graphnorm.tasks import log_transform_wanted
from graphnorm.chem.tabular import feature_matrix, width
from graphnorm.cli import main
from graphnorm.checkpoints import CheckpointError, checkpoint_files

# the small-table recipe's members, whatever `auto` picks for a table (RULE.md N)
TINY = ["--recipe", "small-table", "--preset", "tiny", "--batch-size", "32", "--threads", "1",
        "--no-progress", "--checkpoint-every", "1000", "--no-descriptors"]


def test_maplight_features_and_a_clear_error():
    x = feature_matrix("maplight", ["CCO", "c1ccccc1C(=O)O"])
    assert x.shape == (2, width("maplight")) and x.dtype == np.float32
    assert x[:, :1024].sum(1).min() > 0 and x[:, 1024:2048].sum(1).min() > 0  # ECFP, Avalon counts
    assert np.isfinite(x[:, :2048 + 315]).all()  # descriptors may be NaN (missing), never inf
    assert not np.isinf(x).any()
    with pytest.raises(ValueError, match="cannot read SMILES 'C1CC'"):
        feature_matrix("maplight", ["C1CC"])


def test_log_units_for_heavy_tailed_positive_labels():
    rng = np.random.default_rng(0)
    assert log_transform_wanted(10 ** rng.normal(1, 1, 200))  # half-life-like hours
    assert not log_transform_wanted(rng.normal(0, 1, 200))  # log units already
    assert not log_transform_wanted(np.r_[10 ** rng.normal(1, 1, 199), -1.0])  # not all positive


def test_boosters_learn_and_return_the_users_units():
    smiles = ["C" * k + "O" for k in range(1, 41)]
    x = feature_matrix("maplight", smiles)
    y = np.array([[10.0 ** (s.count("C") / 8)] for s in smiles])
    models = fit_boosted("regression", x[::2], y[::2], seed=0, threads=1, transforms=["log10"])
    pred = predict_boosted("regression", models, x[1::2], ["log10"])
    assert np.abs(np.log10(pred) - np.log10(y[1::2])).mean() < 0.5 * np.abs(
        np.log10(y[1::2]) - np.log10(y[::2]).mean()).mean()
    one_class = fit_boosted("binary", x, np.zeros((40, 1)), seed=0, threads=1)
    assert predict_boosted("binary", one_class, x[:3]).tolist() == [[0.0]] * 3


@pytest.fixture(scope="module")
def table(zinc_property_table, tmp_path_factory):
    path = tmp_path_factory.mktemp("gbm") / "mols.csv"
    zinc_property_table.head(300).to_csv(path, index=False)
    return path


def test_gbm_run_saves_a_model_predict_loads(table, cache_root, tmp_path):
    out = tmp_path / "gbm"
    assert main(["train", "--data", str(table), "--target-columns", "logp", "--model", "gbm",
                 "--recipe", "small-table", "--split", "random", "--metric", "mae",
                 "--cache-root", str(cache_root), "--out", str(out), "--threads", "1",
                 "--no-progress"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["model"] == "gbm" and metrics["metric"] == "mae" and metrics["features"]["set"] == "maplight"
    assert checkpoint_files(out) == [out / BOOSTED_FILE]
    from graphnorm.inference.predict import load_predictor

    test = pd.read_csv(out / "predictions_test.csv.gz")
    saved = load_predictor(out).predict(test.smiles.tolist()[:5] + ["C1CC"])
    np.testing.assert_allclose(saved.prediction[:5], test["pred:logp"][:5], rtol=1e-5)
    assert saved.error[5] and not saved.error[:5].any()
    assert metrics["test_mae"] == pytest.approx(float(np.abs(test["pred:logp"] - test["y:logp"]).mean()))


@pytest.mark.slow  # two gbm runs: ~8 CPU-s
def test_tree_refit_scores_validation_before_fitting_on_it(table, cache_root, tmp_path):
    """--tree-refit: validation is scored by the train-only fit (the same predictions as a run
    without it); the saved model and the test scores come from the fit on train + val."""
    from graphnorm.inference.predict import load_predictor

    runs = {}
    for flag in ("--no-tree-refit", "--tree-refit"):
        out = tmp_path / flag
        assert main(["train", "--data", str(table), "--target-columns", "logp", "--model", "gbm",
                     "--split", "random", "--metric", "mae", "--cache-root", str(cache_root),
                     "--out", str(out), "--threads", "1", "--no-progress", flag]) == 0
        runs[flag] = out
    plain, refit = (json.loads((runs[f] / "metrics.json").read_text())
                    for f in ("--no-tree-refit", "--tree-refit"))
    assert "refit" not in plain and refit["refit"]["splits"] == ["train", "val"]
    sizes = json.loads((runs["--tree-refit"] / "data_report.json").read_text())["split_sizes"]
    assert refit["refit"]["rows"] == sizes["train"] + sizes["val"]
    assert refit["val_mae"] == plain["val_mae"]
    val = [pd.read_csv(runs[f] / "predictions_val.csv.gz") for f in runs]
    np.testing.assert_array_equal(val[0]["pred:logp"], val[1]["pred:logp"])
    test = pd.read_csv(runs["--tree-refit"] / "predictions_test.csv.gz")
    assert not np.allclose(test["pred:logp"],
                           pd.read_csv(runs["--no-tree-refit"] / "predictions_test.csv.gz")["pred:logp"])
    saved = load_predictor(runs["--tree-refit"]).predict(test.smiles.tolist()[:5])
    np.testing.assert_allclose(saved.prediction, test["pred:logp"][:5], rtol=1e-5)
    # the saved model saw the validation rows: it fits them better than the train-only one
    held = val[0].smiles.tolist()
    err = [np.abs(load_predictor(runs[f]).predict(held).prediction - val[0]["y:logp"]).mean()
           for f in ("--no-tree-refit", "--tree-refit")]
    assert err[1] < err[0]


@pytest.mark.slow  # starts a Python process
def test_a_gbm_run_does_not_load_the_training_stack(table, cache_root, tmp_path):
    """A tree run writes the same provenance (graphnorm.provenance) without importing
    Lightning: seconds of start-up a gbm user does not pay."""
    import subprocess
    import sys

    out = tmp_path / "gbm"
    code = ("import sys; from graphnorm.cli import main; "
            f"rc = main(['train', '--data', {str(table)!r}, '--target-columns', 'logp', '--model', 'gbm', "
            f"'--split', 'random', '--cache-root', {str(cache_root)!r}, '--out', {str(out)!r}, "
            "'--threads', '1', '--no-progress']); "
            "print('lightning' in sys.modules, rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split()[-2:] == ["False", "0"], done.stdout + done.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["git_sha"] not in ("", None) and "cpus), 1 threads" in metrics["hardware"]


def test_bad_gbm_files_are_named(tmp_path):
    path = tmp_path / BOOSTED_FILE
    with pytest.raises(TreeFileError, match="not found"):
        load_boosted(path)
    path.write_text("{not json")
    with pytest.raises(TreeFileError, match="cannot read boosted-tree model.*retrain"):
        load_boosted(path)
    path.write_text(json.dumps({"format": 99, "boosters": []}))
    with pytest.raises(TreeFileError, match="gbm format 99"):
        load_boosted(path)
    path.write_text(json.dumps({"format": 1, "boosters": ["tree garbage"], "task": {},
                                "features": {"set": "maplight", "width": width("maplight")}}))
    with pytest.raises(TreeFileError, match="cannot read boosted-tree model"):
        load_boosted(path)
    path.write_text(json.dumps({"format": 1, "boosters": [], "task": {},
                                "features": {"set": "maplight", "width": 7, "rdkit": "1999"}}))
    with pytest.raises(TreeFileError, match="fitted on 7 features"):
        load_boosted(path)
    from graphnorm.checkpoints import load_member

    with pytest.raises(CheckpointError, match="fitted on 7 features"):
        load_member(path)


@pytest.mark.slow  # trains an ensemble: ~7 CPU-s
def test_gbm_as_the_tree_member_of_an_ensemble(table, cache_root, tmp_path):
    out = tmp_path / "pair"
    assert main(["train", "--data", str(table), "--target-columns", "qed_high", "--task",
                 "classification", "--split", "random", "--max-epochs", "2", "--tree-model",
                 "gbm", "--cache-root", str(cache_root), "--out", str(out), *TINY]) == 0
    assert [p.relative_to(out).as_posix() for p in checkpoint_files(out)] == [
        "model_0/best.ckpt", f"gbm/{BOOSTED_FILE}"]
    files = [pd.read_csv(out / d / "predictions_test.csv.gz") for d in ("model_0", "gbm", ".")]
    np.testing.assert_allclose(files[2]["pred:qed_high"],
                               (files[0]["pred:qed_high"] + files[1]["pred:qed_high"]) / 2, atol=1e-5)
    assert json.loads((out / "gbm" / "metrics.json").read_text())["model"] == "gbm"
    assert json.loads((out / "ensemble.json").read_text())["member_average"] == "mean"
    _the_members_files_score_as_the_members_predict(out)


@pytest.mark.slow  # trains an ensemble: ~5 CPU-s
def test_an_ensembles_members_compute_each_molecules_descriptors_once(table, tmp_path, monkeypatch):
    """On an empty cache the Graphormer's descriptor inputs and gbm's MapLight vectors of an
    ensemble come from one computation per molecule (graphnorm.train.ensemble opens
    ``shared_by_smiles``): the EState indices, shared by both, once per molecule."""
    import graphnorm.chem.descriptor_values as dv

    calls = []
    estate = dv._GROUPS["MaxEStateIndex"]
    monkeypatch.setitem(dv._GROUPS, "MaxEStateIndex", lambda mol: calls.append(1) or estate(mol))
    small = tmp_path / "mols.csv"
    pd.read_csv(table).head(60).to_csv(small, index=False)
    out = tmp_path / "pair"
    assert main(["train", "--data", str(small), "--target-columns", "logp", "--split", "random",
                 "--max-epochs", "1", "--tree-model", "gbm", "--cache-root", str(tmp_path / "cache"),
                 "--out", str(out), *[a for a in TINY if a != "--no-descriptors"]]) == 0
    assert len(json.loads((out / "ensemble.json").read_text())["member_files"]) >= 2
    assert len(calls) == 60


@pytest.mark.slow  # trains ensembles: ~5 CPU-s
def test_log_odds_averaging_is_recorded_and_predict_follows_it(table, cache_root, tmp_path):
    """--member-average logodds (the admet recipe's): the ensemble's files, its scores and
    ``predict`` (with its calibration on validation) all average the members' log-odds."""
    from scipy.special import expit, logit

    from graphnorm.inference.predict import load_predictor

    out = tmp_path / "logodds"
    assert main(["train", "--data", str(table), "--target-columns", "qed_high", "--task",
                 "classification", "--split", "random", "--max-epochs", "2", "--tree-model",
                 "gbm", "--tree-weight", "0.7", "--member-average", "logodds",
                 "--cache-root", str(cache_root), "--out", str(out), *TINY]) == 0
    report = json.loads((out / "ensemble.json").read_text())
    assert report["member_average"] == "logodds" and report["member_weights"] == [0.3, 0.7]
    files = [pd.read_csv(out / d / "predictions_test.csv.gz") for d in ("model_0", "gbm", ".")]
    p = [np.clip(f["pred:qed_high"].to_numpy(), 1e-6, 1 - 1e-6) for f in files[:2]]
    pooled = expit(0.3 * logit(p[0]) + 0.7 * logit(p[1]))
    np.testing.assert_allclose(files[2]["pred:qed_high"], pooled, atol=1e-5)
    assert np.abs(pooled - (0.3 * p[0] + 0.7 * p[1])).max() > 1e-3  # not the plain mean
    predictor = load_predictor(out)
    got = predictor.predict(files[2]["smiles"].tolist()[:8])
    np.testing.assert_allclose(got.prediction, files[2]["pred:qed_high"][:8], atol=1e-5)
    assert set(predictor.calibrators("platt")) == {"prediction"}
    report["member_average"] = "geometric"  # a newer format: named, not guessed
    (out / "ensemble.json").write_text(json.dumps(report))
    with pytest.raises(CheckpointError, match="member average 'geometric'"):
        load_predictor(out)


def _the_members_files_score_as_the_members_predict(out):
    """The ensemble reads its members' own prediction files instead of featurizing the split's
    molecules again for the trees: the same report either way, and a missing file or rows
    that differ fall back to predicting."""
    from graphnorm.train import ensemble
    from graphnorm.train.config import TrainConfig

    cfg = TrainConfig.from_dict(json.loads((out / "ensemble.json").read_text())["config"])
    files = checkpoint_files(out)
    read = ensemble.member_predictions(files, "test", ["qed_high"])
    assert read is not None and read[0].shape[0] == 2
    from_files = ensemble.evaluate_ensemble(cfg)
    kept = ensemble.member_predictions
    try:
        ensemble.member_predictions = lambda *args: None
        predicted = ensemble.evaluate_ensemble(cfg)
    finally:
        ensemble.member_predictions = kept
    # the files hold the float32 predictions exactly: the same numbers, not nearly
    assert from_files["ensemble"] == predicted["ensemble"]
    assert from_files["mean_std"] == predicted["mean_std"]
    test = out / "gbm" / "predictions_test.csv.gz"
    frame = pd.read_csv(test)
    frame.iloc[::-1].to_csv(test, index=False)  # another row order
    assert ensemble.member_predictions(files, "test", ["qed_high"]) is None
    test.unlink()
    assert ensemble.member_predictions(files, "test", ["qed_high"]) is None
    assert ensemble.member_predictions(files, "val", ["qed_high"]) is not None


def test_tree_weight_is_chosen_on_validation():
    import torch

    from graphnorm.train.member_weights import fit_tree_weight

    y = torch.linspace(0, 1, 50).reshape(-1, 1)
    good, noise = y + 0.01, torch.rand(50, 1) * 5
    assert fit_tree_weight("rmse", torch.stack([good, noise]), y, [False, True]).tolist() == [1.0, 0.0]
    w = fit_tree_weight("rmse", torch.stack([noise, good]), y, [False, True])
    assert w.tolist() == [0.0, 1.0]
    w = fit_tree_weight("rmse", torch.stack([y + 0.2, y + 0.2, y - 0.2]), y, [False, False, True])
    assert w.sum().item() == pytest.approx(1.0) and w[2].item() == pytest.approx(0.5)  # cancels the bias


@pytest.mark.slow  # trains an ensemble: ~5 CPU-s
def test_regression_default_weights_gbm_on_validation(table, cache_root, tmp_path):
    out = tmp_path / "stacked"
    assert main(["train", "--data", str(table), "--target-columns", "logp", "--split", "random",
                 "--max-epochs", "2", "--ensemble", "1", "--cache-root", str(cache_root),
                 "--out", str(out), *TINY]) == 0
    report = json.loads((out / "ensemble.json").read_text())
    weights = report["member_weights"]
    assert len(weights) == 2 and sum(weights) == pytest.approx(1.0)
    assert [p.relative_to(out).as_posix() for p in checkpoint_files(out)] == [
        "model_0/best.ckpt", f"gbm/{BOOSTED_FILE}"]
    files = [pd.read_csv(out / d / "predictions_test.csv.gz") for d in ("model_0", "gbm", ".")]
    np.testing.assert_allclose(files[2]["pred:logp"], weights[0] * files[0]["pred:logp"]
                               + weights[1] * files[1]["pred:logp"], atol=1e-4)
    from graphnorm.inference.predict import load_predictor

    smiles = files[2]["smiles"].tolist()[:6]
    both = load_predictor(out).predict(smiles)
    np.testing.assert_allclose(both.prediction, files[2]["pred:logp"][:6], atol=1e-4)
    lo = load_predictor(out).add_intervals(both, 0.8)  # conformal on the weighted validation mean
    assert (lo["prediction_hi"] > lo["prediction"]).all()
    from graphnorm.checkpoints import load_checkpoint

    # one graph model beside its tree member: --init-from and embed take that model
    assert load_checkpoint(out).path == out / "model_0" / "best.ckpt"
