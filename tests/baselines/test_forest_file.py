"""The forest's saved model (forest.skops + forest.json) and the forest as an ensemble member:
train writes it, predict loads it alone or averaged with graph models, explain and embed say
what they cannot do with it."""
import collections
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.baselines.forest import fit_forests, morgan_counts, predict_forests
from graphnorm.baselines.forest_file import (FOREST_FILE, FOREST_META, ForestFileError, load_forest,
                                             save_forest)
from graphnorm.cli import main
from graphnorm.checkpoints import CheckpointError, checkpoint_files, load_checkpoint

TINY = ["--preset", "tiny", "--batch-size", "32", "--threads", "1", "--no-progress",
        "--checkpoint-every", "1000", "--no-descriptors"]
SMILES = ["C" * k + "O" for k in range(1, 30)] + ["c1ccccc1" + "C" * k for k in range(1, 30)]
TASK = {"task_type": "binary", "metric": "rocauc", "num_tasks": 2, "targets": ["alcohol", "long"]}


def _saved(tmp_path):
    x = morgan_counts(SMILES)
    y = np.array([[s.endswith("O"), s.count("C") > 15] for s in SMILES], dtype=float)
    y[:3, 1] = np.nan  # a target labelled on fewer rows
    forests = fit_forests("binary", x, y, seed=0, threads=1)
    path = save_forest(tmp_path, forests, TASK, {"radius": 2, "bits": 2048}, {}, seed=0)
    return path, predict_forests("binary", forests, x)


@pytest.mark.slow  # fits a forest: ~20-40 s on 2 cores
def test_a_saved_forest_predicts_as_it_did(tmp_path):
    path, before = _saved(tmp_path)
    forest = load_forest(path)
    after = forest.predict_smiles(SMILES).double().numpy()
    np.testing.assert_allclose(after, before, atol=1e-6)
    assert forest.targets == ["alcohol", "long"] and forest.featurizer is None
    assert after[:29, 0].mean() > 0.9 and after[29:, 0].mean() < 0.1  # it learned the alcohols


@pytest.mark.slow  # fits a forest: ~10-20 s on 2 cores
def test_bad_forest_files_are_named_and_refused(tmp_path):
    path, _ = _saved(tmp_path)
    meta = json.loads((tmp_path / FOREST_META).read_text())
    (tmp_path / FOREST_META).write_text(json.dumps(dict(meta, format=99)))
    with pytest.raises(ForestFileError, match="forest format 99"):
        load_forest(path)
    (tmp_path / FOREST_META).unlink()
    with pytest.raises(ForestFileError, match="forest.json is missing"):
        load_forest(path)
    (tmp_path / FOREST_META).write_text(json.dumps(meta))
    path.write_bytes(path.read_bytes()[:2000])  # a truncated copy
    with pytest.raises(ForestFileError, match="cannot read forest .*scikit-learn"):
        load_forest(path)
    import skops.io as sio

    sio.dump({"forests": [collections.Counter(a=1)]}, path)  # a type no forest holds
    with pytest.raises(ForestFileError, match="collections.Counter.*not loaded"):
        load_forest(path)
    with pytest.raises(CheckpointError, match="is a tree model: predict takes it"):
        load_checkpoint(path)


@pytest.fixture(scope="module")
def forest_ensemble(zinc_property_table, cache_root, tmp_path_factory):
    """A classification table trained by the small-table recipe: Graphormer + forest."""
    root = tmp_path_factory.mktemp("cls")
    zinc_property_table.head(300).to_csv(root / "mols.csv", index=False)
    out = root / "run"
    assert main(["train", "--data", str(root / "mols.csv"), "--target-columns", "qed_high",
                 "--task", "classification", "--split", "random", "--max-epochs", "2",
                 "--recipe", "small-table", "--cache-root", str(cache_root), "--out", str(out), *TINY]) == 0
    return out


@pytest.mark.slow  # trains an ensemble with a forest: ~20 CPU-s
def test_classification_tables_average_the_graphormer_and_the_forest(forest_ensemble):
    out = forest_ensemble
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["tree_member"] is True and metrics["ensemble"] == 2
    assert [p.relative_to(out).as_posix() for p in checkpoint_files(out)] == [
        "model_0/best.ckpt", f"forest/{FOREST_FILE}"]
    files = [pd.read_csv(out / d / "predictions_test.csv.gz") for d in ("model_0", "forest", ".")]
    np.testing.assert_allclose(files[2]["pred:qed_high"],
                               (files[0]["pred:qed_high"] + files[1]["pred:qed_high"]) / 2, atol=1e-5)

    from graphnorm.inference.predict import load_predictor

    smiles = files[2]["smiles"].tolist()[:8] + ["not a smiles"]
    both = load_predictor(out).predict(smiles)
    graph, forest = (load_predictor(out / d).predict(smiles) for d in ("model_0", "forest"))
    np.testing.assert_allclose(both.prediction[:8], (graph.prediction[:8] + forest.prediction[:8]) / 2,
                               atol=1e-5)
    # the saved forest gives the run's own test predictions back
    np.testing.assert_allclose(forest.prediction[:8], files[1]["pred:qed_high"][:8], atol=1e-5)
    assert both.error[8] and np.isnan(both.prediction_std[8])
    calibrated = load_predictor(out).calibrate(both, "platt")  # fitted on the pair's validation
    assert calibrated.prediction[:8].between(0, 1).all()


@pytest.mark.slow  # the same ensemble as the test above
def test_explain_scores_the_graph_members_and_says_so(forest_ensemble):
    from graphnorm.explain.explainer import load_explainer

    ex = load_explainer(forest_ensemble, method="occlusion")
    assert len(ex.graph_members) == 1 and "tree member" in ex.note
    result = ex.explain(["CCO", "c1ccccc1O"])
    assert result.molecules.error.eq("").all() and len(result.scores[0]) == 3
    assert np.isnan(result.atoms["std"]).all()  # one graph model: no spread of atom scores
    with pytest.raises(CheckpointError, match="tree model .*: it scores fingerprint counts"):
        load_explainer(forest_ensemble / "forest")


def test_tree_member_needs_graph_models_on_a_table(tmp_path, capsys):
    assert main(["train", "--dataset", "zinc-subset", "--tree-member", "--out",
                 str(tmp_path / "z")]) == 2
    assert "--tree-member takes a user table" in capsys.readouterr().err
    assert not (tmp_path / "z").exists()


def test_a_forest_run_from_before_forests_were_saved_is_named(tmp_path):
    (tmp_path / "metrics.json").write_text(json.dumps({"model": "rf"}))
    with pytest.raises(CheckpointError, match="random forest on Morgan counts run .--model rf. from before its models were saved.*train it again"):
        checkpoint_files(tmp_path)


@pytest.mark.slow  # fits a forest: ~25-35 s on 2 cores
def test_a_forest_alone_is_served_without_drawings(tmp_path):
    from graphnorm.inference.predict import Predictor
    from graphnorm.serve.service import PredictionService

    path, before = _saved(tmp_path)
    service = PredictionService(Predictor(load_forest(path)))
    info = service.info()
    assert info["attribution_method"] is None and "no per-atom" in info["attribution_note"]
    rows = service.predict([SMILES[0], "C1CC"])["rows"]
    assert rows[0]["alcohol"] == pytest.approx(before[0, 0], abs=1e-6) and rows[1]["error"]
    with pytest.raises(ValueError, match="random forest.*no atom attributions"):
        service.draw([SMILES[0]])
