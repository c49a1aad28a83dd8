"""Config resolution (graphnorm/train/resolve.py): defaults < recipe < file < flags < the rules
that follow the data; pure; recipes defined once, the config files that name them holding
nothing of their own recipe."""
from pathlib import Path

import pandas as pd
import pytest

from graphnorm.data.table import MoleculeTable
from graphnorm.train import recipes
from graphnorm.train.config import TrainConfig, read_yaml
from graphnorm.train.resolve import resolve_config

CONFIGS = Path(__file__).resolve().parents[2] / "experiments" / "configs"


def _table(labels):
    frame = pd.DataFrame({"smiles": ["CCO"] * len(labels), "y": [str(v) for v in labels]})
    return MoleculeTable(Path("t.csv"), frame, "smiles", [f"line {k + 2}" for k in range(len(frame))])


def test_layers_in_order():
    assert resolve_config({}, {}) == TrainConfig()  # an empty file: defaults, no recipe
    auto = resolve_config(None, {})  # no file: the recipe for the data (ZINC: cpu-fast)
    assert (auto.recipe, auto.preset, auto.batch_size) == ("cpu-fast", "fast", 64)
    file = resolve_config({"recipe": "cpu-fast", "batch_size": 32}, {})
    assert (file.preset, file.batch_size) == ("fast", 32)  # the file over its recipe
    flags = resolve_config({"recipe": "cpu-fast", "batch_size": 32}, {"batch_size": 16, "lr": None})
    assert (flags.batch_size, flags.lr) == (16, 1e-3)  # flags over the file; None: not given
    assert resolve_config(None, {"recipe": "slim"}).preset is None


def test_dict_blocks_merge_key_by_key_across_layers():
    cfg = resolve_config({"featurizer": {"max_hops": 3}, "max_dist": 9, "recipe": "small-table",
                          "data": "t.csv"}, {"featurizer": {"fingerprint_bits": 8}})
    assert cfg.featurizer == {"descriptors": True, "max_hops": 3, "max_dist": 9,
                              "fingerprint_bits": 8}
    assert list(cfg.featurizer) == ["descriptors", "max_hops", "max_dist", "fingerprint_bits"]


def test_data_rules_come_last_and_explicit_values_win():
    table = _table([1.5, 2.5, 3.5])
    notes = []
    cfg = resolve_config(None, {"data": "t.csv", "recipe": "small-table"},
                         read_table=lambda path, col: table, note=notes.append)
    members = next(r.set["ensemble"] for r in recipes.RECIPE_BOOK["small-table"].size_rules
                   if "ensemble" in r.set)
    assert (cfg.task, cfg.ensemble, cfg.tree_model, cfg.tree_weight) == (
        "regression", members, "gbm", "val:equal") and members > 1
    assert notes == ["--task auto: y hold numbers, so this fits a regression"]
    cfg = resolve_config({"ensemble": 1}, {"data": "t.csv", "recipe": "small-table",
                                           "tree_weight": "equal"},
                         read_table=lambda path, col: table)
    assert (cfg.ensemble, cfg.tree_weight) == (1, "equal")
    classes = resolve_config(None, {"data": "t.csv", "recipe": "small-table"},
                             read_table=lambda p, c: _table([0, 1, 1]))
    assert (classes.task, classes.tree_member, classes.ensemble) == ("classification", True, 1)


def test_pure_without_a_reader_and_quiet_on_a_table_it_cannot_read(capsys):
    plain = resolve_config(None, {"data": "missing.csv", "recipe": "small-table"})
    assert (plain.task, plain.ensemble, plain.tree_member) == ("auto", 1, False)

    def broken(path, column):
        raise FileNotFoundError(path)

    # the run reads the table again and fails there with the reader's own message
    assert resolve_config(None, {"data": "missing.csv", "recipe": "small-table"},
                          read_table=broken) == plain
    assert capsys.readouterr().out == ""


def test_every_config_file_resolves():
    for path in sorted(CONFIGS.glob("*.yaml")):
        assert isinstance(resolve_config(read_yaml(path), {}), TrainConfig), path


# the config files that name a recipe for its dataset (`make train`, the results' COMMANDs)
RECIPE_FILES = {"zinc_subset_fast.yaml": ("cpu-fast", "zinc-subset"),
                "molhiv_fast.yaml": ("molhiv-fast", "ogbg-molhiv")}


@pytest.mark.parametrize("file", sorted(RECIPE_FILES))
def test_recipe_files_train_their_recipe_and_repeat_none_of_it(file):
    """A file naming a recipe trains the recipe's values (with `make train`'s flags too) and
    writes none of them again: the recipe is defined once, in recipes.py."""
    name, dataset = RECIPE_FILES[file]
    values = read_yaml(CONFIGS / file)
    assert (values["recipe"], values["dataset"]) == (name, dataset)
    assert not set(values) & set(recipes.RECIPES[name]), "a value of the recipe written again"
    cfg = resolve_config(values, {"norm": "sep:bn+bn", "max_time": "2m30s", "seed": 0})
    assert (cfg.recipe, cfg.dataset, cfg.max_time) == (name, dataset, "2m30s")
    assert {k: getattr(cfg, k) for k in recipes.RECIPES[name]} == recipes.RECIPES[name]
