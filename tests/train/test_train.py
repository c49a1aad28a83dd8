"""End-to-end training on a real ZINC-subset slice: artifacts, prediction, checkpoints."""
import json
import math

import pandas as pd
import pytest
import torch

from graphnorm.checkpoint import CheckpointError, load_checkpoint
from graphnorm.predict import load_predictor
from graphnorm.train.config import TrainConfig
from graphnorm.train.run import train


def tiny_config(raw_dir, cache_root, out, **kw) -> TrainConfig:
    base = dict(dataset="zinc-subset", preset="tiny", raw_dir=str(raw_dir), cache_root=str(cache_root),
                max_epochs=2, batch_size=64, limit_train=256, limit_eval=128, lr=1e-3,
                out=str(out), progress=False, checkpoint_every_n_steps=2)
    base.update(kw)
    return TrainConfig(**base)


@pytest.fixture(scope="module")
def tiny_run(raw_dir, cache_root, zinc_subset, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return out, train(tiny_config(raw_dir, cache_root, out))


def test_run_writes_all_artifacts(tiny_run):
    out, result = tiny_run
    for name in ("best.ckpt", "last.ckpt", "metrics.json", "learning_curve.png", "logs/metrics.csv"):
        assert (out / name).is_file(), name
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["epochs"] == 2 and saved["steps"] == 2 * 4
    assert math.isfinite(saved["val_mae"]) and math.isfinite(saved["test_mae"])
    assert saved["params"] > 0 and saved["train_graphs_per_s"] > 0
    assert len(saved["data_checksum"]) == 64 and saved["config"]["norm"] == "sep:bn+ln"


def test_metrics_json_matches_best_checkpoint(tiny_run, zinc_subset):
    out, result = tiny_run
    loaded = load_checkpoint(out / "best.ckpt")
    from torch.utils.data import Subset
    from graphnorm.graph import collate_graphs

    test = [zinc_subset["test"][i] for i in range(128)]
    pred = loaded.predict_batch(collate_graphs(test))
    y = torch.cat([d.y for d in test])
    assert float((pred - y).abs().mean()) == pytest.approx(result["test_mae"], rel=1e-4)


def test_predictor_rows_in_order_with_errors(tiny_run):
    out, _ = tiny_run
    predictor = load_predictor(out / "best.ckpt")
    df = predictor.predict(["CCO", "not a smiles", "", "c1ccccc1", "[U]"])
    assert list(df.columns) == ["smiles", "prediction", "error"]
    assert df.error.tolist()[0] == "" and df.error.tolist()[3] == ""
    assert "not a smiles" in df.error[1] and "empty" in df.error[2] and "[U]" in df.error[4]
    assert df.prediction[[1, 2, 4]].isna().all() and df.prediction[[0, 3]].notna().all()


def test_predict_refuses_molecules_rdkit_cannot_sanitize(tiny_run):
    """A five-valent carbon gets an error row with RDKit's reason, never a number."""
    out, _ = tiny_run
    bad = ["C(C)(C)(C)(C)C", "C#C#C"]
    df = load_predictor(out / "best.ckpt").predict(["CCO"] + bad)
    assert df.prediction[1:].isna().all() and df.prediction[0] == df.prediction[0]
    for i, s in enumerate(bad, 1):
        assert repr(s) in df.error[i] and "valence" in df.error[i]


def test_run_without_data_leaves_no_output_folder(tmp_path):
    from graphnorm.data import RawDataError

    (tmp_path / "empty").mkdir()
    cfg = tiny_config(tmp_path / "empty", tmp_path / "cache", tmp_path / "run")
    with pytest.raises(RawDataError, match="--raw-dir"):
        train(cfg)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]  # no run/, no cache/


def test_prediction_beyond_training_sizes_is_flagged(tiny_run, zinc_subset):
    out, _ = tiny_run
    predictor = load_predictor(out / "best.ckpt")
    from graphnorm.predict import ExtrapolationWarning
    from graphnorm.train.datamodule import graph_sizes

    largest = int(graph_sizes(zinc_subset["train"]).max())
    assert predictor.loaded.meta["train_domain"]["max_atoms"] <= largest  # a slice of train
    huge = "C" * (largest + 5)
    # rows are counted from 1, as a user counts them (df.attrs keys stay DataFrame positions)
    with pytest.warns(ExtrapolationWarning, match=f"row 2 .*{largest + 5} atoms"):
        df = predictor.predict(["CCO", huge])
    assert (df.error == "").all() and df.prediction.notna().all()
    assert list(df.attrs["warnings"]) == [1] and "extrapolation" in df.attrs["warnings"][1]


def test_prediction_alone_equals_prediction_in_batch(tiny_run):
    out, _ = tiny_run
    predictor = load_predictor(out / "best.ckpt")
    mols = ["CCO", "c1ccccc1", "CC(=O)Nc1ccc(O)cc1", "CCN(CC)CC", "O=C(O)c1ccccc1O"]
    together = predictor.predict(mols).prediction
    alone = [predictor.predict([m]).prediction[0] for m in mols]
    assert together.tolist() == pytest.approx(alone, abs=1e-5)


def test_checkpoint_errors_are_clear(tiny_run, tmp_path):
    out, _ = tiny_run
    with pytest.raises(CheckpointError, match="not found"):
        load_checkpoint(tmp_path / "missing.ckpt")
    broken = tmp_path / "broken.ckpt"
    broken.write_bytes((out / "best.ckpt").read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="cannot read"):
        load_checkpoint(broken)
    ckpt = torch.load(out / "best.ckpt", weights_only=True)
    ckpt["graphnorm"]["format"] = 99
    future = tmp_path / "future.ckpt"
    torch.save(ckpt, future)
    with pytest.raises(CheckpointError, match="format 99"):
        load_checkpoint(future)


def test_cli_predict_file_and_exit_codes(tiny_run, tmp_path):
    from graphnorm.cli import main

    out, _ = tiny_run
    smi = tmp_path / "mols.smi"
    smi.write_text("CCO ethanol\nxyz\n\nc1ccccc1\n")
    csv = tmp_path / "preds.csv"
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), "--input", str(smi),
                 "--output", str(csv)]) == 0
    df = pd.read_csv(csv, keep_default_na=False)
    assert df.smiles.tolist() == ["CCO", "xyz", "", "c1ccccc1"]
    assert (df.error != "").tolist() == [False, True, True, False]
    bad = tmp_path / "bad.smi"
    bad.write_text("xyz\nC1CC\n")
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), "--input", str(bad),
                 "--output", str(tmp_path / "b.csv")]) == 1
    empty = tmp_path / "empty.smi"
    empty.write_text("")
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), "--input", str(empty)]) == 2


def test_cli_predict_reports_extrapolation_on_stderr(tiny_run, capsys):
    from graphnorm.cli import main

    out, _ = tiny_run
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), "--smiles", "CCO", "C" * 90]) == 0
    captured = capsys.readouterr()
    assert "graphnorm predict: warning: argument 2" in captured.err and "90 atoms" in captured.err
    assert captured.out.splitlines()[0] == "smiles,prediction,error" and len(captured.out.splitlines()) == 3


def test_uniformity_weight_adds_the_term(raw_dir, cache_root, zinc_subset, tmp_path):
    result = train(tiny_config(raw_dir, cache_root, tmp_path, max_epochs=1, limit_train=128,
                               uniformity_weight=0.1, uniformity_on_tokens=True))
    log = pd.read_csv(tmp_path / "logs" / "metrics.csv")
    values = log["train/uniformity"].dropna()
    assert len(values) > 0 and (values <= 0).all() and (values >= -8).all()  # two L_U terms in [-4, 0]
    assert result["config"]["uniformity_weight"] == 0.1
