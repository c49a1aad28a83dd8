"""Named recipes: what train builds without a config, and how flags and files override."""
import pytest

from graphnorm.train.plan import step_budget
from graphnorm.train.recipes import RECIPES, apply_recipe
from resolved import resolved


def _cfg(argv):
    return resolved(["train", *argv])


def _table(folder, rows: int) -> str:
    """A regression table of ``rows`` rows (the recipes' size rules read its length)."""
    path = folder / f"t{rows}.csv"
    path.write_text("smiles,y\n" + "CCO,1.5\n" * rows)
    return str(path)


def test_auto_picks_by_the_data():
    table = _cfg(["--data", "mols.csv"])
    assert table.recipe == "small-table" and table.featurizer == {"descriptors": True}
    assert table.preset == "fast" and table.max_steps == RECIPES["small-table"]["max_steps"]
    assert table.loss == RECIPES["small-table"].get("loss", "l1")
    assert table.min_epochs == RECIPES["small-table"]["min_epochs"]
    # an explicit step budget means what it says, unless --min-epochs is given too
    assert _cfg(["--data", "m.csv", "--max-steps", "10"]).min_epochs is None
    both = _cfg(["--data", "m.csv", "--max-steps", "400", "--min-epochs", "15"])
    assert (both.max_steps, both.min_epochs) == (400, 15)
    zinc = _cfg(["--dataset", "zinc-subset", "--max-time", "5m"])
    assert zinc.recipe == "cpu-fast" and zinc.preset == "fast" and zinc.local_mp == "gine"
    assert zinc.max_steps is None  # the time budget decides the length
    assert _cfg(["--dataset", "ogbg-molhiv"]).recipe == "molhiv-fast"


def test_the_admet_recipe_is_one_graphormer_and_gbm_on_the_boosters(tmp_path):
    from graphnorm.train.recipes import ADMET_PATIENCE

    small = tmp_path / "small.csv"
    small.write_text("smiles,y\n" + "CCO,1.5\n" * 50)  # regression under 1,000 rows
    cfg = _cfg(["--data", str(small), "--recipe", "admet"])
    assert cfg.recipe == "admet" and cfg.featurizer == {"descriptors": True}
    assert (cfg.forest_member, cfg.forest_model, cfg.tree_weight) == (True, "gbm", "0.7")
    assert cfg.tree_features == "maplight+admet" and cfg.tree_refit is True
    assert _cfg(["--data", str(small), "--recipe", "admet", "--no-tree-refit"]).tree_refit is False
    assert _cfg(["--data", str(small)]).tree_refit is False  # small-table: not measured there
    assert cfg.member_average == "logodds"  # classification: the members' mean log-odds
    assert _cfg(["--data", str(small), "--recipe", "admet", "--member-average", "mean"]
                ).member_average == "mean"
    assert _cfg(["--data", str(small)]).member_average == "mean"  # a forest's 0/1 would rule
    assert cfg.ensemble == 1  # no small-table size rule: one Graphormer, not three
    assert (cfg.max_steps, cfg.min_epochs) == (RECIPES["admet"]["max_steps"], 15)
    assert cfg.patience == ADMET_PATIENCE  # the Graphormer stops early on small tables
    assert _cfg(["--data", str(small), "--recipe", "admet", "--patience", "5"]).patience == 5
    flags = _cfg(["--data", str(small), "--recipe", "admet", "--tree-weight", "val:equal",
                  "--no-forest-member"])
    assert flags.tree_weight == "val:equal" and flags.forest_member is False


def test_the_admet_recipe_has_3_blocks_below_the_long_rows(tmp_path):
    from graphnorm.train.recipes import ADMET_LAYERS, ADMET_LONG_ROWS

    small, large = _table(tmp_path, ADMET_LONG_ROWS - 1), _table(tmp_path, ADMET_LONG_ROWS)
    assert ADMET_LAYERS == 3 and _cfg(["--data", small, "--recipe", "admet"]).model == {"num_layers": 3}
    assert "num_layers" not in (_cfg(["--data", large, "--recipe", "admet"]).model or {})
    # a depth the user sets is kept on either side; a named preset or a baseline comes whole
    own = tmp_path / "own.yaml"
    own.write_text(f"data: {large}\nrecipe: admet\nmodel:\n  num_layers: 2\n  hidden: 96\n")
    assert _cfg(["--config", str(own)]).model == {"num_layers": 2, "hidden": 96}
    own.write_text(f"data: {small}\nrecipe: admet\nmodel:\n  hidden: 96\n")
    assert _cfg(["--config", str(own)]).model == {"num_layers": 3, "hidden": 96}
    assert not (_cfg(["--data", small, "--recipe", "admet", "--preset", "small"]).model or {})
    assert "num_layers" not in (_cfg(["--data", small, "--recipe", "admet", "--model", "gine"]).model or {})
    # a backbone fixes the depth: fine-tuning copies every one of its blocks
    tuned = _cfg(["--data", small, "--recipe", "admet", "--init-from", "runs/pretrained"])
    assert "num_layers" not in (tuned.model or {}) and tuned.init_from == "runs/pretrained"


def test_the_admet_recipe_trains_longer_on_large_tables(tmp_path):
    from graphnorm.train.recipes import ADMET_LONG_ROWS, ADMET_LONG_STEPS, ADMET_LONG_TREE_WEIGHT

    large, small = _table(tmp_path, ADMET_LONG_ROWS), _table(tmp_path, ADMET_LONG_ROWS - 1)
    cfg = _cfg(["--data", large, "--recipe", "admet"])
    assert (cfg.max_steps, cfg.min_epochs) == (ADMET_LONG_STEPS, 15)
    assert cfg.tree_weight == ADMET_LONG_TREE_WEIGHT != RECIPES["admet"]["tree_weight"]
    assert cfg.patience is None  # no early stopping where it was not measured
    assert _cfg(["--data", large, "--recipe", "admet", "--patience", "3"]).patience == 3
    short = _cfg(["--data", small, "--recipe", "admet"])
    assert (short.max_steps, short.tree_weight) == (RECIPES["admet"]["max_steps"], RECIPES["admet"]["tree_weight"])
    assert _cfg(["--data", large, "--recipe", "admet", "--tree-weight", "0.5"]).tree_weight == "0.5"
    assert _cfg(["--data", large, "--recipe", "admet", "--max-steps", "300"]).max_steps == 300
    epochs = _cfg(["--data", large, "--recipe", "admet", "--max-epochs", "4"])
    assert (epochs.max_steps, epochs.max_epochs) == (None, 4)
    # the small-table recipe keeps its own length on the same table
    assert _cfg(["--data", large]).max_steps == RECIPES["small-table"]["max_steps"]


def test_flags_override_the_recipe_and_slim_is_the_paper():
    cfg = _cfg(["--data", "m.csv", "--no-descriptors", "--batch-size", "16", "--max-epochs", "3"])
    assert cfg.featurizer["descriptors"] is False and cfg.batch_size == 16
    assert _cfg(["--data", "m.csv", "--descriptors", "fast"]).featurizer["descriptors"] == "fast"
    assert _cfg(["--data", "m.csv", "--descriptors"]).featurizer["descriptors"] is True
    assert _cfg(["--data", "m.csv", "--descriptors", "rdkit2d"]).featurizer["descriptors"] is True
    assert cfg.max_steps is None and cfg.max_epochs == 3 and cfg.min_epochs is None
    slim = _cfg(["--dataset", "zinc-subset", "--recipe", "slim"])
    assert slim.preset is None and slim.norm == "sep:bn+ln" and slim.batch_size == 256
    gine = _cfg(["--dataset", "zinc-subset", "--model", "gine"])
    assert gine.preset is None and gine.local_mp is None  # a baseline keeps its own shape


def test_a_config_file_is_its_own_recipe(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("dataset: zinc-subset\nbatch_size: 32\n")
    cfg = _cfg(["--config", str(path)])
    assert cfg.recipe is None and cfg.preset is None and cfg.batch_size == 32
    path.write_text("recipe: cpu-fast\nbatch_size: 32\n")
    cfg = _cfg(["--config", str(path)])
    assert cfg.recipe == "cpu-fast" and cfg.preset == "fast" and cfg.batch_size == 32
    with pytest.raises(ValueError, match="unknown recipe"):
        apply_recipe({}, "fastest")


def test_small_tables_get_an_ensemble(tmp_path):
    from graphnorm.train.recipes import ENSEMBLE_BELOW_ROWS, ENSEMBLE_MEMBERS

    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    small.write_text("smiles,y\n" + "CCO,1.5\n" * (ENSEMBLE_BELOW_ROWS - 1))  # not 0/1: regression
    large.write_text("smiles,y\n" + "CCO,1.5\n" * ENSEMBLE_BELOW_ROWS)
    assert _cfg(["--data", str(small)]).ensemble == ENSEMBLE_MEMBERS
    assert _cfg(["--data", str(large)]).ensemble == 1
    assert _cfg(["--data", str(small), "--ensemble", "1"]).ensemble == 1  # explicit wins
    assert _cfg(["--data", str(small), "--model", "gin-vn"]).ensemble == 1
    assert _cfg(["--data", str(small), "--recipe", "cpu-fast"]).ensemble == 1
    assert _cfg(["--data", str(tmp_path / "missing.csv")]).ensemble == 1  # fails later, named


def test_classification_tables_add_the_forest(tmp_path):
    small = tmp_path / "small.csv"
    small.write_text("smiles,y\n" + "CCO,1\n" * 50)
    cls = ["--data", str(small), "--task", "classification"]
    cfg = _cfg(cls)
    assert cfg.forest_member is True and cfg.ensemble == 1  # the measured pair, not 3 + forest
    assert cfg.forest_model == "rf" and _cfg(["--data", str(small)]).forest_member is True  # auto: 0/1
    assert _cfg(cls + ["--no-forest-member"]).forest_member is False  # explicit wins
    assert _cfg(cls + ["--ensemble", "3"]).ensemble == 3
    assert _cfg(cls + ["--model", "gin-vn"]).forest_member is False
    assert _cfg(cls + ["--recipe", "cpu-fast"]).forest_member is False
    assert cfg.tree_weight == "equal"
    reg = ["--data", str(small), "--task", "regression"]
    cfg = _cfg(reg)  # boosted trees, weighted on validation
    assert (cfg.forest_member, cfg.forest_model, cfg.tree_weight) == (True, "gbm", "val:equal")
    assert _cfg(reg + ["--forest-model", "rf"]).forest_model == "rf"  # explicit wins
    assert _cfg(reg + ["--tree-weight", "equal"]).tree_weight == "equal"
    assert _cfg(reg + ["--no-forest-member"]).forest_member is False


def test_step_budget_becomes_epochs():
    from graphnorm.train.config import TrainConfig

    assert step_budget(TrainConfig(max_steps=100), 8).max_epochs == 13
    assert step_budget(TrainConfig(max_steps=100, max_epochs=2), 8).max_epochs == 2
    # a config's large epoch limit (the slim recipe's 10000) does not hide the step budget
    assert step_budget(TrainConfig(max_steps=10, max_epochs=10000), 1).max_epochs == 10
    assert step_budget(TrainConfig(max_steps=100, max_time="1m"), 8).max_epochs is None
    # min_epochs raises the budget of a large table (8 steps an epoch) and not of a small one
    assert step_budget(TrainConfig(max_steps=100, min_epochs=20), 8).max_epochs == 20
    assert step_budget(TrainConfig(max_steps=100, min_epochs=2), 8).max_epochs == 13
    assert step_budget(TrainConfig(max_steps=100, min_epochs=20, max_epochs=5), 8).max_epochs == 5
    with pytest.raises(ValueError, match="min_epochs"):
        TrainConfig(min_epochs=0)
    with pytest.raises(ValueError, match="max_steps"):
        TrainConfig(max_steps=0)


def test_validation_interval_in_whole_epochs():
    from graphnorm.train.config import TrainConfig

    cfg = TrainConfig(max_steps=100, val_every_steps=50)
    assert cfg.val_every_epochs(6) == 8 and cfg.val_every_epochs(64) == 1
    # 17 epochs of 6 steps round up to 3 intervals of 8 epochs: the last epoch is validated
    assert step_budget(cfg, 6).max_epochs == 24
    # an explicit epoch limit is rounded up the same way (TDC ppbr: 31 steps an epoch)
    assert step_budget(TrainConfig(max_epochs=15, val_every_steps=50), 31).max_epochs == 16
    assert step_budget(TrainConfig(max_epochs=15, val_every_steps=50), 64).max_epochs == 15
    assert TrainConfig(max_steps=100).val_every_epochs(6) == 1
    with pytest.raises(ValueError, match="val_every_steps"):
        TrainConfig(val_every_steps=0)
    with pytest.raises(ValueError, match="loss"):
        TrainConfig(loss="huber")


@pytest.fixture
def recipe_with_backbone(monkeypatch, tmp_path):
    """The small-table recipe as it would read with a shipped backbone in it."""
    monkeypatch.setitem(RECIPES, "small-table", dict(RECIPES["small-table"], init_from="zinc250k"))
    table = tmp_path / "t.csv"
    table.write_text("smiles,y\nCCO,1\nCCN,2\n")
    return ["--data", str(table), "--target-columns", "y"]


def test_a_recipe_backbone_starts_the_default_run(recipe_with_backbone):
    assert _cfg(recipe_with_backbone).init_from == "zinc250k"
    assert _cfg(recipe_with_backbone + ["--descriptors-at", "head", "--lr", "3e-4"]).init_from == "zinc250k"


@pytest.mark.parametrize("flags, named", [(["--norm", "ln"], "norm: ln"),
                                          (["--preset", "small"], "preset: small"),
                                          (["--model", "gin-vn"], "model_name: gin-vn"),
                                          (["--fingerprint-bits", "2048"], "featurizer: fingerprint_bits")])
def test_a_recipe_backbone_steps_aside_for_another_model(recipe_with_backbone, capsys, flags, named):
    assert _cfg(recipe_with_backbone + flags).init_from is None
    out = capsys.readouterr().out
    assert named in out and "training from scratch" in out


def test_init_from_none_and_a_named_checkpoint_are_the_users(recipe_with_backbone):
    assert _cfg(recipe_with_backbone + ["--init-from", "none"]).init_from is None
    # one the user names is kept: init_from.py refuses it by name if it does not fit
    assert _cfg(recipe_with_backbone + ["--init-from", "runs/pre", "--norm", "ln"]).init_from == "runs/pre"
