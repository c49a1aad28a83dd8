"""Renamed config keys and flags are still read (issue 57): forest_member / forest_model, and
--forest-member / --forest-model, are today's tree_member / tree_model. Config files, the
config an older run stored (metrics.json, ensemble.json) and old command lines mean what they
meant; an old and a new name with different values are refused, naming both."""
import argparse
import json
from pathlib import Path

import pandas as pd
import pytest

from graphnorm.cli import build_parser
from graphnorm.data.table import MoleculeTable
from graphnorm.run_folder import read_metrics
from graphnorm.train.cli import config_flags
from graphnorm.train.config import RENAMED_KEYS, TrainConfig, read_yaml
from graphnorm.train.resolve import resolve_config

OLD = {"forest_member": True, "forest_model": "gbm"}
NEW = {"tree_member": True, "tree_model": "gbm"}


def _table(labels):
    frame = pd.DataFrame({"smiles": ["CCO"] * len(labels), "y": [str(v) for v in labels]})
    return MoleculeTable(Path("t.csv"), frame, "smiles", [f"line {k + 2}" for k in range(len(frame))])


def _yaml(path: Path, values: dict) -> Path:
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in values.items()))
    return path


def test_renamed_keys_are_fields_and_old_names_are_not():
    names = {f.name for f in TrainConfig.__dataclass_fields__.values()}
    assert set(RENAMED_KEYS.values()) <= names and not set(RENAMED_KEYS) & names


def test_an_old_config_file_resolves_as_the_new_keys(tmp_path):
    base = {"data": "t.csv", "split": "random", "ensemble": 1}
    old = read_yaml(_yaml(tmp_path / "old.yaml", dict(base, **OLD)))
    new = read_yaml(_yaml(tmp_path / "new.yaml", dict(base, **NEW)))
    assert "forest_member" in old  # read as written; resolution folds it
    cfg = resolve_config(new, {})
    assert (cfg.tree_member, cfg.tree_model) == (True, "gbm")
    assert resolve_config(old, {}) == cfg
    # flags still go over the file's old key
    assert resolve_config(old, {"tree_member": False}).tree_member is False
    # an old file's explicit member wins over the small-table recipe's rule, as a new one does
    table = _table([1.5, 2.5, 3.5])  # regression: the rule would set gbm and val:equal
    asked = {"recipe": "small-table", "data": "t.csv", "forest_member": True, "forest_model": "rf"}
    cfg = resolve_config(asked, {}, read_table=lambda p, c: table)
    assert (cfg.tree_member, cfg.tree_model, cfg.tree_weight) == (True, "rf", "equal")
    assert cfg == resolve_config({"recipe": "small-table", "data": "t.csv", "tree_member": True,
                                  "tree_model": "rf"}, {}, read_table=lambda p, c: table)


def test_a_stored_config_reads_as_the_new_keys(tmp_path):
    """The config an older run stored (metrics.json's and ensemble.json's ``config``: a
    TrainConfig.to_dict() with the old names) makes the same TrainConfig."""
    stored = TrainConfig(data="t.csv", ensemble=2, **NEW).to_dict()
    old = dict(stored)
    for old_key, new_key in RENAMED_KEYS.items():
        old[old_key] = old.pop(new_key)
    assert TrainConfig.from_dict(old) == TrainConfig.from_dict(stored)
    assert TrainConfig.from_dict(old).tree_model == "gbm"
    # an old ensemble's metrics.json (forest_member beside ensemble, its config's old keys)
    record = {"dataset": "t.csv", "seed": 0, "metric": "rmse", "val_rmse": 0.5, "test_rmse": 0.6,
              "ensemble": 2, "members_test": [0.7, 0.8], "model": "graphormer",
              "forest_member": True, "config": old}
    (tmp_path / "metrics.json").write_text(json.dumps(record))
    read = read_metrics(tmp_path)
    assert read["forest_member"] is True  # the file as written
    assert TrainConfig.from_dict(read["config"]) == TrainConfig.from_dict(stored)


@pytest.mark.parametrize("old_key,new_key,old_value,new_value", [
    ("forest_member", "tree_member", True, False),
    ("forest_model", "tree_model", "rf", "gbm")])
def test_an_old_and_a_new_key_with_different_values_are_refused(tmp_path, old_key, new_key,
                                                                old_value, new_value):
    both = {old_key: old_value, new_key: new_value}
    with pytest.raises(ValueError, match=rf"{old_key} and {new_key} .*{old_key}: .*{new_key}: "):
        TrainConfig.from_dict(both)
    with pytest.raises(ValueError, match=rf"{old_key} and {new_key}"):
        resolve_config(read_yaml(_yaml(tmp_path / "both.yaml", both)), {})
    # the same value under both names is one setting given twice, not a conflict
    same = TrainConfig.from_dict({old_key: new_value, new_key: new_value})
    assert getattr(same, new_key) == new_value


def _flags(argv):
    return config_flags(build_parser().parse_args(["train", "--data", "t.csv", *argv]))


def test_old_flags_are_hidden_aliases_of_the_new_ones():
    assert _flags(["--forest-member", "--forest-model", "gbm"]) == _flags(
        ["--tree-member", "--tree-model", "gbm"]) == {"data": "t.csv", **NEW}
    assert _flags(["--no-forest-member"])["tree_member"] is False
    assert _flags(["--no-forest-member"]) == _flags(["--no-tree-member"])
    sub = build_parser()._subparsers._group_actions[0].choices["train"]
    text = sub.format_help()
    assert "--tree-member" in text and "--tree-model" in text and "forest-m" not in text
    hidden = {o for a in sub._actions if a.help == argparse.SUPPRESS for o in a.option_strings}
    assert {"--forest-member", "--no-forest-member", "--forest-model"} <= hidden
    assert not {a.dest for a in sub._actions} & set(RENAMED_KEYS)  # they set the new fields
