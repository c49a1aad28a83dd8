"""End-to-end training on a real ZINC-subset slice: artifacts and metrics (prediction:
tests/inference/test_predict.py; checkpoints: tests/train/test_checkpoint.py)."""
import json
import math

import pandas as pd
import pytest
import torch

from tiny_runs import tiny_config
from graphnorm.checkpoints import load_checkpoint
from graphnorm.train.run import train


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
    from graphnorm.graph import collate_graphs

    test = [zinc_subset["test"][i] for i in range(128)]
    pred = loaded.predict_batch(collate_graphs(test))
    y = torch.cat([d.y for d in test])
    assert float((pred - y).abs().mean()) == pytest.approx(result["test_mae"], rel=1e-4)


def test_run_keeps_its_split_predictions_in_split_order(tiny_run, zinc_subset):
    out, result = tiny_run
    for split in ("val", "test"):
        df = pd.read_csv(out / f"predictions_{split}.csv.gz")
        assert list(df.columns) == ["smiles", "y:target", "pred:target"]
        assert df.smiles.tolist() == [zinc_subset[split][i].smiles for i in range(len(df))]
        mae = (df["pred:target"] - df["y:target"]).abs().mean()
        assert mae == pytest.approx(result[f"{split}_mae"], rel=1e-4)  # the file is what was scored


def test_run_without_data_leaves_no_output_folder(tmp_path):
    from graphnorm.data import RawDataError

    (tmp_path / "empty").mkdir()
    cfg = tiny_config(tmp_path / "empty", tmp_path / "cache", tmp_path / "run")
    with pytest.raises(RawDataError, match="--raw-dir"):
        train(cfg)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]  # no run/, no cache/


def test_uniformity_weight_adds_the_term(raw_dir, cache_root, zinc_subset, tmp_path):
    result = train(tiny_config(raw_dir, cache_root, tmp_path, max_epochs=1, limit_train=128,
                               uniformity_weight=0.1, uniformity_on_tokens=True))
    log = pd.read_csv(tmp_path / "logs" / "metrics.csv")
    values = log["train/uniformity"].dropna()
    assert len(values) > 0 and (values <= 0).all() and (values >= -8).all()  # two L_U terms in [-4, 0]
    assert result["config"]["uniformity_weight"] == 0.1


def test_validation_every_few_steps(raw_dir, cache_root, zinc_subset, tmp_path):
    # 128 graphs in batches of 32: 4 steps an epoch; every 8 steps = every 2nd epoch, and 3
    # epochs round up to 4, so epochs 2 and 4 are validated and nothing else
    result = train(tiny_config(raw_dir, cache_root, tmp_path, max_epochs=None, max_steps=12,
                               val_every_steps=8, limit_train=128, batch_size=32))
    log = pd.read_csv(tmp_path / "logs" / "metrics.csv")
    validated = sorted(log.dropna(subset=[f"val/{result['metric']}"])["epoch"].unique())
    assert validated == [1, 3] and result["epochs"] == 4 and result["best_epoch"] in (2, 4)


def test_patience_stops_and_every_validation_is_kept(raw_dir, cache_root, zinc_subset, tmp_path):
    # lr 1e-30 (below float32 rounding) and LayerNorm only: the weights never change, so the
    # 2nd validation is no better than the 1st and patience 1 ends the run there (of 4 epochs)
    result = train(tiny_config(raw_dir, cache_root, tmp_path, max_epochs=4, limit_train=128,
                               batch_size=32, lr=1e-30, end_lr=1e-31, norm="ln", patience=1,
                               keep_checkpoints=True))
    assert result["stopped_by"] == "patience" and result["epochs"] == 2 and result["steps"] == 8
    kept = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert kept == ["step=4.ckpt", "step=8.ckpt"]
    assert load_checkpoint(tmp_path / "checkpoints" / "step=4.ckpt").epoch == 0


def test_patience_is_validations_or_a_share_of_them():
    from graphnorm.train.config import TrainConfig

    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match="patience must be"):
            TrainConfig(patience=bad)
    assert TrainConfig(patience=3).patience_validations(10) == 3
    assert TrainConfig().patience_validations(10) is None
    # 345 steps of 23 a batch-epoch, validated every ~25 steps (1 epoch): 15 validations
    assert TrainConfig(patience=0.3, max_epochs=15, val_every_steps=25).patience_validations(23) == 4
    # 28 epochs of 6 steps, validated every 4 epochs: 7 validations -> 2
    assert TrainConfig(patience=0.3, max_epochs=28, val_every_steps=25).patience_validations(6) == 2
    assert TrainConfig(patience=0.01, max_epochs=28).patience_validations(6) == 1  # at least 1
    # a time budget alone leaves the number of validations open: no stopping (train warns)
    assert TrainConfig(patience=0.3, max_time="5m", max_epochs=-1).patience_validations(6) is None
    assert TrainConfig(patience=2, max_time="5m", max_epochs=-1).patience_validations(6) == 2
