"""Positive, heavy-tailed regression targets are fitted in log10 units and predicted in the
user's: the rule, the scaling and its inverse, and a run that records and uses it."""
import numpy as np
import pandas as pd
import pytest
import torch

from graphnorm.checkpoints import load_checkpoint
from graphnorm.cli import main
from graphnorm.tasks import CLASSIFICATION, LOG10, REGRESSION, log_transform_wanted, target_transforms


def test_the_rule_takes_positive_skewed_labels_only():
    rng = np.random.default_rng(0)
    half_life = np.exp(rng.normal(1.0, 1.5, 500))  # hours: a few huge values
    assert log_transform_wanted(half_life)
    assert not log_transform_wanted(rng.normal(0, 1, 500))  # symmetric
    assert not log_transform_wanted(np.append(half_life, -1.0))  # a non-positive label
    assert not log_transform_wanted(np.array([np.nan, 2.0]))  # too few labels
    ys = np.stack([half_life, rng.normal(0, 1, 500)], 1)
    assert target_transforms(REGRESSION, ys) == [LOG10, None]
    assert target_transforms(REGRESSION, ys[:, 1:]) is None
    assert target_transforms(CLASSIFICATION, (ys > 1).astype(float)) is None


def test_scaling_in_log_units_and_back():
    y = torch.tensor([[1.0, -2.0], [10.0, 0.5], [1000.0, 3.0], [float("nan"), 1.0]])
    transforms = [LOG10, None]
    mean, std = REGRESSION.scaling(y, transforms)
    assert mean[0] == pytest.approx(np.mean([0.0, 1.0, 3.0]))  # of log10(y), NaN left out
    assert mean[1] == pytest.approx(float(y[:, 1].mean()))
    mean, std = torch.tensor(mean), torch.tensor(std)
    fitted = torch.stack([torch.log10(y[:, 0]), y[:, 1]], 1)
    raw = (fitted - mean) / std  # a perfect model's output
    back = REGRESSION.in_units(raw, mean, std, transforms)
    assert torch.allclose(back[:3], y[:3], rtol=1e-5) and torch.allclose(back[:, 1], y[:, 1])
    assert float(REGRESSION.loss(raw, y, mean, std, "l1", transforms)) == pytest.approx(0.0, abs=1e-6)
    # without the transform the same output means something else
    assert not torch.allclose(REGRESSION.in_units(raw, mean, std)[:3, 0], y[:3, 0])


TINY = ["--preset", "tiny", "--batch-size", "32", "--lr", "1e-3", "--threads", "1", "--no-progress",
        "--checkpoint-every", "1000", "--max-epochs", "2", "--ensemble", "1", "--no-tree-member",
        "--split", "random", "--task", "regression"]


@pytest.mark.slow  # trains: ~5 CPU-s
def test_a_heavy_tailed_target_trains_in_log_units(zinc_property_table, cache_root, tmp_path):
    df = zinc_property_table.head(200).copy()
    df["half_life"] = 10 ** (df["tpsa"] / 30.0)  # positive, spans orders of magnitude
    path = tmp_path / "hl.csv"
    df[["smiles", "half_life"]].to_csv(path, index=False)
    runs = {}
    for mode in ("auto", "none"):
        out = tmp_path / mode
        assert main(["train", "--data", str(path), "--target-columns", "half_life",
                     "--target-transform", mode, "--cache-root", str(cache_root),
                     "--out", str(out), *TINY]) == 0
        runs[mode] = load_checkpoint(out / "best.ckpt")
    logged, raw = runs["auto"], runs["none"]
    assert logged.task["target_transforms"] == [LOG10] and "target_transforms" not in raw.task
    # scaled in log10 units: the mean of log10(half-life), not of hours
    assert float(logged.target_mean[0]) == pytest.approx(
        float(np.log10(df["half_life"]).mean()), abs=0.3)
    assert float(raw.target_mean[0]) > 10 * float(logged.target_mean[0])
    preds = pd.read_csv(tmp_path / "auto" / "predictions_test.csv.gz")
    pred = preds[[c for c in preds.columns if c.startswith("pred")][0]]
    assert (pred > 0).all()  # 10 ** x: predictions in the user's (positive) units
