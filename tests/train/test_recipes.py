"""Named recipes: what train builds without a config, how flags and files override, and the
size rules (data, graphnorm/train/recipe_rules.py) that fit a recipe to the user's table."""
import dataclasses

import pytest

from graphnorm.train.config import TrainConfig
from graphnorm.train.plan import step_budget
from graphnorm.train.recipe_rules import AtLeast, SizeRule, apply_size_rules
from graphnorm.train.recipes import RECIPE_BOOK, RECIPES, apply_recipe, table_size_rules
from resolved import resolved


def _cfg(argv):
    return resolved(["train", *argv])


def _rule(recipe: str, key: str) -> SizeRule:
    """The shipped size rule of ``recipe`` that sets ``key``."""
    (rule,) = [r for r in RECIPE_BOOK[recipe].size_rules if key in r.set]
    return rule


def _rows(rule: SizeRule) -> int:
    """The row count at which ``rule`` switches (its ``rows`` condition's bound)."""
    (bound,) = [c.value for c in rule.conditions if c.name == "rows"]
    return bound


ADMET_LONG = _rule("admet", "max_steps")  # admet: at least this many steps on large tables
ADMET_LONG_ROWS = _rows(ADMET_LONG)
ENSEMBLE = _rule("small-table", "ensemble")  # small-table: an ensemble on small tables
ST = ["--recipe", "small-table"]  # what the small-table tests train, whatever auto picks


def _table(folder, rows: int) -> str:
    """A regression table of ``rows`` rows (the recipes' size rules read its length)."""
    path = folder / f"t{rows}.csv"
    path.write_text("smiles,y\n" + "CCO,1.5\n" * rows)
    return str(path)


def test_auto_picks_by_the_data():
    assert _cfg(["--data", "mols.csv"]).recipe == "admet"  # RULE.md N and Q
    table = _cfg(["--data", "mols.csv", *ST])
    assert table.featurizer == {"descriptors": True}
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
    small = tmp_path / "small.csv"
    small.write_text("smiles,y\n" + "CCO,1.5\n" * 50)  # regression under 1,000 rows
    cfg = _cfg(["--data", str(small), "--recipe", "admet"])
    assert cfg.recipe == "admet" and cfg.featurizer == {"descriptors": True}
    assert (cfg.tree_member, cfg.tree_model, cfg.tree_weight) == (True, "gbm", "0.7")
    assert cfg.tree_features == "maplight+admet" and cfg.tree_refit is True
    assert _cfg(["--data", str(small), "--recipe", "admet", "--no-tree-refit"]).tree_refit is False
    assert _cfg(["--data", str(small), *ST]).tree_refit is False  # not measured there
    assert cfg.member_average == "logodds"  # classification: the members' mean log-odds
    assert _cfg(["--data", str(small), "--recipe", "admet", "--member-average", "mean"]
                ).member_average == "mean"
    assert _cfg(["--data", str(small), *ST]).member_average == "mean"  # a forest's 0/1 would rule
    assert cfg.ensemble == 1  # no small-table size rule: one Graphormer, not three
    assert (cfg.max_steps, cfg.min_epochs) == (RECIPES["admet"]["max_steps"], 15)
    assert cfg.patience == RECIPES["admet"]["patience"] > 0  # stops early on small tables
    assert _cfg(["--data", str(small), "--recipe", "admet", "--patience", "5"]).patience == 5
    flags = _cfg(["--data", str(small), "--recipe", "admet", "--tree-weight", "val:equal",
                  "--no-tree-member"])
    assert flags.tree_weight == "val:equal" and flags.tree_member is False


def test_the_admet_recipe_has_3_blocks_below_the_long_rows(tmp_path):
    layers = _rule("admet", "model.num_layers")
    assert _rows(layers) == ADMET_LONG_ROWS  # the two sides of one boundary
    small, large = _table(tmp_path, ADMET_LONG_ROWS - 1), _table(tmp_path, ADMET_LONG_ROWS)
    assert layers.set["model.num_layers"] == 3
    # the recipe fine-tunes its backbone (RULE.md M), whose depth is its own; from scratch 3
    default = _cfg(["--data", small, "--recipe", "admet"])
    assert default.init_from == "admet" and not default.model
    assert _cfg(["--data", small, "--recipe", "admet", "--init-from", "none"]).model == {"num_layers": 3}
    assert "num_layers" not in (_cfg(["--data", large, "--recipe", "admet", "--init-from",
                                      "none"]).model or {})
    # a depth the user sets is kept on either side; a named preset or a baseline comes whole
    own = tmp_path / "own.yaml"
    own.write_text(f"data: {large}\nrecipe: admet\nmodel:\n  num_layers: 2\n  hidden: 96\n")
    assert _cfg(["--config", str(own)]).model == {"num_layers": 2, "hidden": 96}
    # another width is another model: the backbone steps aside, and a scratch run's rules apply
    own.write_text(f"data: {small}\nrecipe: admet\nmodel:\n  hidden: 96\n")
    wider = _cfg(["--config", str(own)])
    assert wider.model == {"num_layers": 3, "hidden": 96} and wider.init_from is None
    assert not (_cfg(["--data", small, "--recipe", "admet", "--preset", "small"]).model or {})
    assert "num_layers" not in (_cfg(["--data", small, "--recipe", "admet", "--model", "gine"]).model or {})
    # a backbone fixes the depth: fine-tuning copies every one of its blocks
    tuned = _cfg(["--data", small, "--recipe", "admet", "--init-from", "runs/pretrained"])
    assert "num_layers" not in (tuned.model or {}) and tuned.init_from == "runs/pretrained"
    # --init-from none is from scratch: the measured 3 blocks, as with no backbone at all
    scratch = _cfg(["--data", small, "--recipe", "admet", "--init-from", "none"])
    assert scratch.model == {"num_layers": 3} and scratch.init_from is None


def test_the_admet_recipe_trains_longer_on_large_tables(tmp_path):
    large, small = _table(tmp_path, ADMET_LONG_ROWS), _table(tmp_path, ADMET_LONG_ROWS - 1)
    cfg = _cfg(["--data", large, "--recipe", "admet"])
    steps = ADMET_LONG.set["max_steps"].value
    assert (cfg.max_steps, cfg.min_epochs) == (steps, 15) and steps > RECIPES["admet"]["max_steps"]
    weight = _rule("admet", "tree_weight").set["tree_weight"]
    assert cfg.tree_weight == weight != RECIPES["admet"]["tree_weight"]
    assert cfg.patience is None  # no early stopping where it was not measured
    assert _cfg(["--data", large, "--recipe", "admet", "--patience", "3"]).patience == 3
    short = _cfg(["--data", small, "--recipe", "admet"])
    assert (short.max_steps, short.tree_weight) == (RECIPES["admet"]["max_steps"], RECIPES["admet"]["tree_weight"])
    assert _cfg(["--data", large, "--recipe", "admet", "--tree-weight", "0.5"]).tree_weight == "0.5"
    assert _cfg(["--data", large, "--recipe", "admet", "--max-steps", "300"]).max_steps == 300
    epochs = _cfg(["--data", large, "--recipe", "admet", "--max-epochs", "4"])
    assert (epochs.max_steps, epochs.max_epochs) == (None, 4)
    # the small-table recipe keeps its own length on the same table
    assert _cfg(["--data", large, *ST]).max_steps == RECIPES["small-table"]["max_steps"]


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
    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    small.write_text("smiles,y\n" + "CCO,1.5\n" * (_rows(ENSEMBLE) - 1))  # not 0/1: regression
    large.write_text("smiles,y\n" + "CCO,1.5\n" * _rows(ENSEMBLE))
    assert _cfg(["--data", str(small), *ST]).ensemble == ENSEMBLE.set["ensemble"] > 1
    assert _cfg(["--data", str(large), *ST]).ensemble == 1
    assert _cfg(["--data", str(small), *ST, "--ensemble", "1"]).ensemble == 1  # explicit wins
    assert _cfg(["--data", str(small), *ST, "--model", "gin-vn"]).ensemble == 1
    assert _cfg(["--data", str(small), "--recipe", "cpu-fast"]).ensemble == 1
    assert _cfg(["--data", str(tmp_path / "missing.csv"), *ST]).ensemble == 1  # fails later, named


def test_classification_tables_add_the_forest(tmp_path):
    small = tmp_path / "small.csv"
    small.write_text("smiles,y\n" + "CCO,1\n" * 50)
    cls = ["--data", str(small), *ST, "--task", "classification"]
    cfg = _cfg(cls)
    assert cfg.tree_member is True and cfg.ensemble == 1  # the measured pair, not 3 + forest
    assert cfg.tree_model == "rf" and _cfg(["--data", str(small), *ST]).tree_member is True  # 0/1
    assert _cfg(cls + ["--no-tree-member"]).tree_member is False  # explicit wins
    assert _cfg(cls + ["--ensemble", "3"]).ensemble == 3
    assert _cfg(cls + ["--model", "gin-vn"]).tree_member is False
    assert _cfg(["--data", str(small), "--task", "classification", "--recipe", "cpu-fast"]
                ).tree_member is False
    assert cfg.tree_weight == "equal"
    reg = ["--data", str(small), *ST, "--task", "regression"]
    cfg = _cfg(reg)  # boosted trees, weighted on validation
    assert (cfg.tree_member, cfg.tree_model, cfg.tree_weight) == (True, "gbm", "val:equal")
    assert _cfg(reg + ["--tree-model", "rf"]).tree_model == "rf"  # explicit wins
    assert _cfg(reg + ["--tree-weight", "equal"]).tree_weight == "equal"
    assert _cfg(reg + ["--no-tree-member"]).tree_member is False


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
    return ["--data", str(table), "--target-columns", "y", *ST]


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


# ---- the size rules: one interpreter, recipes as data ---------------------------------------

TOY = (SizeRule(when=("rows < 100", "task == classification"), unless_given=("preset",),
                set={"ensemble": 5, "model.num_layers": 2}),
       SizeRule(when=("rows >= 100",), set={"max_steps": AtLeast(50), "patience": None}))
BASE = {"task": "classification", "ensemble": 1, "max_steps": 10, "patience": 3,
        "model": {"hidden": 8}}


def test_size_rules_set_what_their_conditions_select():
    assert apply_size_rules(TOY, BASE, {}, 99) == dict(BASE, ensemble=5,
                                                       model={"hidden": 8, "num_layers": 2})
    assert apply_size_rules(TOY, BASE, {}, 100) == dict(BASE, max_steps=50, patience=None)
    regression = dict(BASE, task="regression")
    assert apply_size_rules(TOY, regression, {}, 99) == regression
    assert apply_size_rules(TOY, dict(BASE, max_steps=80), {}, 100)["max_steps"] == 80  # at least
    assert BASE["model"] == {"hidden": 8}  # the input is not edited


def test_size_rules_keep_what_the_user_gave():
    # a key the user gave is kept; the rule's other keys still apply
    ensemble = apply_size_rules(TOY, dict(BASE, ensemble=2), {"ensemble": 2}, 99)
    assert ensemble == dict(BASE, ensemble=2, model={"hidden": 8, "num_layers": 2})
    own = {"model": {"num_layers": 4}}
    depth = apply_size_rules(TOY, dict(BASE, **own), own, 99)
    assert depth == dict(BASE, ensemble=5, model={"num_layers": 4})
    # a key of unless_given skips the whole rule; None counts as not given
    assert apply_size_rules(TOY, BASE, {"preset": "small"}, 99) == BASE
    assert apply_size_rules(TOY, BASE, {"preset": None}, 99)["ensemble"] == 5
    assert apply_size_rules(TOY, BASE, {"patience": 3, "max_steps": 10}, 100) == BASE


def test_size_rules_read_the_values_before_any_rule():
    flip = (SizeRule(when=("task == classification",), set={"task": "regression"}),
            SizeRule(when=("task == regression",), set={"ensemble": 9}))
    assert apply_size_rules(flip, BASE, {}, 10) == dict(BASE, task="regression")
    assert apply_size_rules(flip[::-1], BASE, {}, 10) == dict(BASE, task="regression")


@pytest.mark.parametrize("condition", ["rows<1000", "rows ~ 1000", "rows < many",
                                       "task < classification", "rows < 1000 rows"])
def test_a_misspelt_condition_fails_where_the_rule_is_written(condition):
    with pytest.raises(ValueError, match="size rule condition"):
        SizeRule(when=(condition,), set={"ensemble": 3})


def test_the_shipped_rules_name_config_fields():
    known = {f.name: f for f in dataclasses.fields(TrainConfig)}
    for name, recipe in RECIPE_BOOK.items():
        assert set(recipe.values) <= set(known), name
        for rule in recipe.size_rules:
            keys = [*rule.set, *rule.unless_given, *(c.name for c in rule.conditions)]
            for key in keys:
                head = key.split(".")[0]
                assert head == "rows" or head in known, (name, key)
                if "." in key:  # a key inside a dict block (model, featurizer)
                    assert known[head].default_factory is dict, (name, key)
    # resolve reads the table exactly for the recipes with rules
    from graphnorm.train.recipes import SIZED_RECIPES
    assert SIZED_RECIPES == ("small-table", "admet")


@pytest.mark.parametrize("rows", [ADMET_LONG_ROWS - 1, ADMET_LONG_ROWS])
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_the_admet_rules_switch_at_one_table_size(rows, task):
    # from scratch, where the depth rule applies (a backbone fixes the depth: above)
    merged = apply_recipe({"data": "t.csv", "task": task, "init_from": "none"}, "admet")
    out = table_size_rules(merged, {"data": "t.csv", "task": task, "init_from": "none"}, rows)
    large = rows >= ADMET_LONG_ROWS
    assert _rows(_rule("admet", "tree_weight")) == ADMET_LONG_ROWS
    assert ("num_layers" in out.get("model", {})) is not large
    assert out["patience"] == (None if large else RECIPES["admet"]["patience"])
    assert out["max_steps"] == (ADMET_LONG.set["max_steps"].value if large
                                else RECIPES["admet"]["max_steps"])
    assert out["ensemble"] == 1  # the small-table ensemble rule is not admet's
    gine = dict(merged, model_name="gine")  # a baseline: the rules are the Graphormer's
    assert table_size_rules(gine, {}, rows) == gine


@pytest.mark.parametrize("rows", [_rows(ENSEMBLE) - 1, _rows(ENSEMBLE)])
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_the_small_table_rules_by_task_and_size(rows, task):
    merged = apply_recipe({"data": "t.csv", "task": task}, "small-table")
    cfg = TrainConfig.from_dict(table_size_rules(merged, {"data": "t.csv", "task": task}, rows))
    regression = task == "regression"
    small = regression and rows < _rows(ENSEMBLE)
    assert cfg.ensemble == (ENSEMBLE.set["ensemble"] if small else 1)
    assert cfg.tree_member is True
    assert (cfg.tree_model, cfg.tree_weight) == (
        ("gbm", "val:equal") if regression else ("rf", "equal"))
    # a forest member the user asked for comes as asked: no gbm, no fitted weight
    given = {"data": "t.csv", "task": task, "tree_member": True}
    cfg = TrainConfig.from_dict(table_size_rules(dict(merged, tree_member=True), given, rows))
    assert (cfg.tree_model, cfg.tree_weight) == ("rf", "equal")


def test_a_tree_model_alone_under_a_recipe_drops_the_member_and_the_backbone(tmp_path):
    small = _table(tmp_path, 50)
    gbm = _cfg(["--data", small, "--recipe", "admet", "--model", "gbm"])
    assert (gbm.model_name, gbm.tree_member, gbm.init_from) == ("gbm", False, None)
    assert gbm.tree_features == "maplight+admet"  # gbm reads the recipe's features itself
    rf = _cfg(["--data", small, "--recipe", "admet", "--model", "rf"])
    assert (rf.tree_member, rf.init_from, rf.tree_features) == (False, None, None)  # Morgan only
    # a graph baseline keeps the recipe's tree member (its backbone steps aside: another model)
    gine = _cfg(["--data", small, "--recipe", "admet", "--model", "gine"])
    assert gine.tree_member is True and gine.init_from is None
