"""Named training recipes: what ``graphnorm train`` trains when no ``--config`` says otherwise.

A recipe is data (`Recipe`, graphnorm/train/recipe_rules.py): TrainConfig values that were
measured to win for a kind of data, and size rules that fit them to the user's table
(`table_size_rules`, applied by config resolution once the table is read). A config file's
values and command-line flags replace the values one by one, and the rules keep what the user
gave. ``auto`` (the default of ``train`` and ``benchmark`` without ``--config``) picks by the
data:

- a user table (``--data``): ``small-table``, the recipe measured on tables of hundreds to a
  few thousand molecules;
- ``ogbg-molhiv``: ``molhiv-fast``;
- ZINC: ``cpu-fast`` (it beat GINE and the paper's Graphormer-slim at equal CPU time).

``admet`` is the TDC ADMET board's default (``--recipe admet``); ``slim`` is the paper's GPU
recipe (Graphormer-slim, 12 x 80, TrainConfig's defaults). ``experiments/configs/
zinc_subset_fast.yaml`` and ``molhiv_fast.yaml`` name cpu-fast and molhiv-fast
(``recipe: NAME``) with their dataset. A config file without a ``recipe:`` key means what it
always meant: its values over TrainConfig's defaults.

The evidence behind every value and rule is docs/results/defaults.md ("How the defaults were
chosen"), a section per recipe; a value changes only by the rule written there.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from graphnorm.models import DEFAULT_MODEL
from graphnorm.tasks import CLASSIFICATION

from .recipe_rules import AtLeast, Recipe, SizeRule, apply_size_rules, is_given

# keys whose explicit value makes a recipe's training length moot
_LENGTH_KEYS = ("max_epochs", "max_time", "total_steps")

# The fast Graphormer of the CPU recipes: 4 blocks x 64 with a GINE branch, random-walk PE,
# [VNode] + pooled atoms at the head, BatchNorm on both channels (sep:bn+bn), no dropout.
_CPU_FAST = dict(preset="fast", norm="sep:bn+bn", readout="vnode+sum", rwpe_steps=16,
                 local_mp="gine", batch_size=64, lr=1.0e-3, end_lr=1.0e-9, weight_decay=0.01,
                 warmup_fraction=0.06, dropout=0.0, attention_dropout=0.0)
# RDKit descriptors at the head, squared error, 1,500 steps, at least 15 epochs
_SMALL_TABLE = dict(_CPU_FAST, featurizer={"descriptors": True}, loss="mse", max_steps=1500,
                    min_epochs=15)

RECIPE_BOOK: dict[str, Recipe] = {
    "slim": Recipe({}),
    "cpu-fast": Recipe(_CPU_FAST),
    "molhiv-fast": Recipe(dict(_CPU_FAST, readout="vnode+mean", max_epochs=20, bucket_pool=16,
                               dropout=0.1)),
    "small-table": Recipe(_SMALL_TABLE, size_rules=(
        # classification: the Graphormer and the Morgan-count forest, one member each
        SizeRule(when=(f"task == {CLASSIFICATION.name}",), set={"tree_member": True}),
        # regression: the boosted trees as one more member, weighted on validation under the
        # one-standard-error rule toward one member's share (graphnorm/train/member_weights.py;
        # the plain fit overfits small validation splits)
        SizeRule(when=(f"task != {CLASSIFICATION.name}",), unless_given=("tree_member",),
                 set={"tree_member": True, "tree_model": "gbm", "tree_weight": "val:equal"}),
        # small regression tables: an ensemble of 3 Graphormers (seeds seed..seed+2, one split)
        SizeRule(when=(f"task != {CLASSIFICATION.name}", "rows < 1000"), set={"ensemble": 3}),
    )),
    # one small-table Graphormer that stops early, averaged (log-odds on classification) with
    # gbm on MapLight + the ADMET boosters' predictions at weight 0.7, refitted on train +
    # validation; BatchNorm statistics from the training batches' own moments; fine-tuned
    # from the shipped ADMET backbone (RULE.md M: helps on the corpus hold-outs and the ASAP
    # time split, neutral on TDC validation; `--init-from none` trains from scratch)
    "admet": Recipe(dict(_SMALL_TABLE, max_steps=150, min_epochs=15, val_every_steps=25,
                         recalibrate_source="training", patience=0.3, ensemble=1,
                         tree_member=True, tree_model="gbm", tree_weight="0.7",
                         tree_features="maplight+admet", tree_refit=True,
                         member_average="logodds", init_from="admet"), size_rules=(
        # 3 blocks were measured on the small tables only, from scratch; a preset or a
        # backbone (--init-from: fine-tuning copies every block) fixes the depth, and
        # `--init-from none` is from scratch, so it keeps the 3 blocks
        SizeRule(when=("rows < 2500", "init_from == none"), unless_given=("preset",),
                 set={"model.num_layers": 3}),
        # early stopping was measured on the small tables only (the large ones were mostly
        # best at their last validation); the gbm weight fitted on validation toward 0.7
        SizeRule(when=("rows >= 2500",), set={"patience": None, "tree_weight": "val:0.7"}),
        # at least 1,500 steps (still at least 15 epochs), unless the user gave a length
        SizeRule(when=("rows >= 2500",), unless_given=_LENGTH_KEYS,
                 set={"max_steps": AtLeast(1500)}),
    )),
}
# each recipe's values by name (the CLI's help, apply_recipe)
RECIPES: dict[str, dict[str, Any]] = {name: dict(r.values) for name, r in RECIPE_BOOK.items()}
RECIPE_NAMES = ("auto",) + tuple(RECIPES)
# the recipes whose choices follow the user's table: resolve reads the table for these
SIZED_RECIPES = tuple(name for name, r in RECIPE_BOOK.items() if r.size_rules)


def _given(values: dict, keys) -> bool:
    """Whether the user set any of ``keys`` (file or flag; None = not given)."""
    return any(is_given(values, k) for k in keys)


def auto_recipe(values: dict) -> str:
    """The recipe ``auto`` stands for, given the run's data. A user's table gets ``admet``,
    fine-tuned from the shipped backbone (experiments/results/pretrain/RULE.md N and Q)."""
    if values.get("data"):
        return "admet"
    if values.get("dataset") == "ogbg-molhiv":
        return "molhiv-fast"
    return "cpu-fast"


def table_size_rules(merged: dict, values: dict, rows: int) -> dict:
    """``merged`` (recipe, file and flags) after its recipe's size rules on a table of
    ``rows`` rows (`recipe_rules.apply_size_rules`); ``values``: what the user gave, which
    the rules keep. The rules were measured with the Graphormer: under another model
    (``--model gine``) the values stay as they are."""
    recipe = RECIPE_BOOK.get(merged.get("recipe") or "")
    if recipe is None or merged.get("model_name") not in (None, DEFAULT_MODEL):
        return merged
    return apply_size_rules(recipe.size_rules, merged, values, rows)


# TrainConfig fields that shape the model a recipe's backbone (``init_from``) was trained as
SHAPE_FIELDS = ("model_name", "preset", "norm", "sep_slots", "rwpe_steps", "local_mp")
NO_INIT = "none"  # --init-from none: from scratch, whatever the recipe says


def recipe_backbone(cfg) -> Optional[str]:
    """The backbone (``init_from``) of ``cfg``'s recipe, if it names one."""
    return RECIPES.get(cfg.recipe or "", {}).get("init_from")


def backbone_conflicts(cfg) -> list[str]:
    """Why the recipe's backbone (``cfg.init_from``) cannot start this run: the settings the
    user changed away from the model it was trained as ("norm: ln", ...); [] when it fits."""
    from .init_from import ADDABLE_AT_HEAD  # inputs a fine-tuning run may add at the head

    recipe = RECIPES.get(cfg.recipe or "", {})
    shape = dict(model_name="graphormer", sep_slots="all", **{k: recipe[k] for k in SHAPE_FIELDS
                                                              if k in recipe})
    out = [f"{k}: {getattr(cfg, k)}" for k, v in shape.items() if getattr(cfg, k) != v]
    out += [f"model: {k}" for k, v in sorted((cfg.model or {}).items())
            if not (k.endswith("_at") and k[:-3] in ADDABLE_AT_HEAD and v == "head")]
    out += [f"featurizer: {k}" for k in sorted(cfg.featurizer or {}) if k not in ADDABLE_AT_HEAD
            and (cfg.featurizer[k] != recipe.get("featurizer", {}).get(k))]
    return out


def settle_backbone(cfg, given: bool, note: Optional[Callable[[str], None]] = None):
    """The run's ``init_from`` after the recipe: ``--init-from none`` clears it; a backbone
    the recipe chose (``given`` False) steps aside, with a note, when the user's settings
    build another model (`backbone_conflicts`); one the user named is kept (and refused by
    name in init_from.py if it does not fit). ``note`` receives the note (default: printed);
    config resolution (train/resolve.py) applies this rule last, the run plans
    (train/plan.py) again to each benchmark run and hpopt trial they derive from it."""
    import dataclasses

    if cfg.init_from == NO_INIT:
        return dataclasses.replace(cfg, init_from=None)
    if given or not cfg.init_from:
        return cfg
    conflicts = backbone_conflicts(cfg)
    if conflicts:
        (note or print_note)(f"the {cfg.recipe} recipe's backbone {cfg.init_from} fits its "
                              f"own model only ({'; '.join(conflicts)} differ): training "
                              "from scratch")
        return dataclasses.replace(cfg, init_from=None)
    return cfg


def print_note(text: str) -> None:
    """How a rule's note reaches the command line's user."""
    print(f"[graphnorm] {text}", flush=True)


# what a recipe adds around its graph members: nothing of it applies to a tree model alone
_MEMBER_KEYS = ("tree_member", "tree_model", "tree_weight", "tree_refit", "member_average",
                "init_from")


def _trees_alone(base: dict, model_name: str) -> None:
    """``--model gbm`` or ``rf`` under a recipe: the trees are the model, so the recipe's tree
    member, its weight and its backbone go; its tree features stay where the kind reads them."""
    from graphnorm.models import MODEL_KINDS

    if model_name not in MODEL_KINDS or not MODEL_KINDS[model_name].tree:
        return  # a graph baseline keeps the member; an unknown name fails by name later
    for key in _MEMBER_KEYS:
        base.pop(key, None)
    if "tree_features" in base:
        base["tree_features"] = features_it_reads(model_name, base["tree_features"])


def features_it_reads(tree_model: str, features: Optional[str]) -> Optional[str]:
    """A recipe's ``tree_features`` for the tree model ``tree_model`` trained alone: kept
    where that kind reads them, else None (its own set: ``rf`` reads Morgan counts only)."""
    from graphnorm.models import tree_kind

    reads = tree_kind(tree_model).implementation()
    return features if features in (None, reads.feature_set, *reads.also_reads) else None


def apply_recipe(values: dict, recipe: Optional[str]) -> dict:
    """``values`` (a config file's keys and the flags given) over the recipe's; None: no
    recipe, ``values`` as they are. Dict blocks (``featurizer``, ``model``) merge key by key.
    The result records the recipe it resolved to (``recipe``)."""
    if recipe is None:
        return dict(values)
    name = auto_recipe(values) if recipe == "auto" else recipe
    if name not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; choose from {', '.join(RECIPE_NAMES)}")
    base = {k: (dict(v) if isinstance(v, dict) else v) for k, v in RECIPES[name].items()}
    if _given(values, _LENGTH_KEYS):
        base.pop("max_steps", None)  # an explicit epoch or time budget decides the length
    if _given(values, _LENGTH_KEYS + ("max_steps",)):
        base.pop("min_epochs", None)  # --max-steps 10 means 10 steps, unless --min-epochs too
    if values.get("model_name") not in (None, DEFAULT_MODEL):  # a baseline keeps its own shape
        for key in ("preset", "readout", "rwpe_steps", "local_mp"):
            base.pop(key, None)
        _trees_alone(base, values["model_name"])
    merged = dict(base)
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    merged["recipe"] = name
    return merged
