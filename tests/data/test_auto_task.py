"""``--task auto`` (the default): a 0/1 target trains a classifier and says so; numbers
train a regression; an explicit --task wins."""
import json

import pandas as pd
import pytest

from graphnorm.cli import main
from graphnorm.data.table import read_table
from graphnorm.data.table_dataset import TableSpec, auto_task, load_table_dataset

TINY = ["--preset", "tiny", "--batch-size", "32", "--threads", "1", "--no-progress",
        "--checkpoint-every", "1000", "--no-descriptors", "--max-epochs", "1"]


@pytest.fixture()
def tables(tmp_path):
    smiles = ["C" * k + "O" for k in range(1, 41)]
    pd.DataFrame({"smiles": smiles, "active": [k % 2 for k in range(40)]}).to_csv(
        tmp_path / "cls.csv", index=False)
    pd.DataFrame({"smiles": smiles, "y": [k * 0.5 for k in range(40)]}).to_csv(
        tmp_path / "reg.csv", index=False)
    return tmp_path


def test_auto_task_reads_the_labels(tables):
    assert auto_task(read_table(tables / "cls.csv"), [])[0] == "classification"
    assert auto_task(read_table(tables / "reg.csv"), [])[0] == "regression"
    splits = load_table_dataset(TableSpec(str(tables / "cls.csv"), split="random"),
                                root=tables / "cache", progress=False)
    assert splits.info["task_type"] == "binary" and splits.info["metric"] == "rocauc"


def test_train_on_a_01_target_reports_roc_auc(tables, capsys):
    out = tables / "run"
    assert main(["train", "--data", str(tables / "cls.csv"), "--split", "random",
                 "--no-tree-member", "--cache-root", str(tables / "cache"), "--out", str(out),
                 *TINY]) == 0
    assert "every label of active is 0 or 1" in capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["metric"] == "rocauc" and metrics["config"]["task"] == "classification"
    forced = tables / "forced"
    assert main(["train", "--data", str(tables / "cls.csv"), "--task", "regression", "--split",
                 "random", "--ensemble", "1", "--cache-root", str(tables / "cache"),
                 "--out", str(forced), *TINY]) == 0
    assert json.loads((forced / "metrics.json").read_text())["metric"] == "rmse"
