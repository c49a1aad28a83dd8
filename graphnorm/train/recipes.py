"""Named training recipes: what ``graphnorm train`` trains when no ``--config`` says otherwise.

A recipe is a set of TrainConfig values that were measured to win for a kind of data; a
config file's values and command-line flags replace them one by one. ``auto`` (the default of
``train`` and ``benchmark`` without ``--config``) picks by the data:

- a user table (``--data``): ``small-table``, the recipe measured on tables of hundreds to a
  few thousand molecules (``experiments/results/small_tables/``);
- ``ogbg-molhiv``: ``molhiv-fast`` (``experiments/configs/molhiv_fast.yaml``);
- ZINC: ``cpu-fast`` (``experiments/configs/zinc_subset_fast.yaml``; it beat GINE and the
  paper's Graphormer-slim at equal CPU time).

``slim`` is the paper's GPU recipe (Graphormer-slim, 12 x 80, TrainConfig's defaults). A
config file without a ``recipe:`` key means what it always meant: its values over
TrainConfig's defaults.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from graphnorm.models import DEFAULT_MODEL
from graphnorm.tasks import CLASSIFICATION

# The fast Graphormer of the CPU recipes: 4 blocks x 64 with a GINE branch, random-walk PE,
# [VNode] + pooled atoms at the head, BatchNorm on both channels (sep:bn+bn), no dropout.
_CPU_FAST = dict(preset="fast", norm="sep:bn+bn", readout="vnode+sum", rwpe_steps=16,
                 local_mp="gine", batch_size=64, lr=1.0e-3, end_lr=1.0e-9, weight_decay=0.01,
                 warmup_fraction=0.06, dropout=0.0, attention_dropout=0.0)

RECIPES: dict[str, dict[str, Any]] = {
    "slim": {},
    "cpu-fast": dict(_CPU_FAST),
    "molhiv-fast": dict(_CPU_FAST, readout="vnode+mean", max_epochs=20, bucket_pool=16,
                        dropout=0.1),
    # RDKit descriptors at the head, squared error, 1,500 steps, at least 15 epochs
    "small-table": dict(_CPU_FAST, featurizer={"descriptors": True}, loss="mse", max_steps=1500,
                        min_epochs=15),
}
# The evidence behind every value below is docs/results/defaults.md ("How the defaults were
# chosen"), section by recipe; a value changes only by a rule written before the runs.
# admet: a small-table Graphormer of ADMET_LAYERS blocks that stops after ADMET_PATIENCE of its
# validations pass without a better score, averaged (log-odds on classification) with gbm on
# MapLight + the ADMET boosters' predictions at weight 0.7, refitted on train + validation
# once validation is scored; BatchNorm statistics from the training batches' own moments.
ADMET_PATIENCE, ADMET_LAYERS = 0.3, 3
RECIPES["admet"] = dict(RECIPES["small-table"], max_steps=150, min_epochs=15, val_every_steps=25,
                        recalibrate_source="training",
                        patience=ADMET_PATIENCE, ensemble=1, forest_member=True,
                        forest_model="gbm", tree_weight="0.7", tree_features="maplight+admet",
                        tree_refit=True, member_average="logodds")
RECIPE_NAMES = ("auto",) + tuple(RECIPES)
# admet on tables of ADMET_LONG_ROWS rows or more: at least ADMET_LONG_STEPS steps, 4 blocks,
# the gbm weight fitted on validation under the one-standard-error rule toward 0.7
ADMET_LONG_ROWS, ADMET_LONG_STEPS, ADMET_LONG_TREE_WEIGHT = 2500, 1500, "val:0.7"
# the recipes whose choices follow the user's table (`table_size_rules`): resolve reads the
# table for these
SIZED_RECIPES = ("small-table", "admet")

# small-table, regression: tables below this many rows train an ensemble of ENSEMBLE_MEMBERS
# models (seeds seed..seed+2 on one split) unless --ensemble says otherwise
ENSEMBLE_BELOW_ROWS, ENSEMBLE_MEMBERS = 1000, 3

# keys whose explicit value makes a recipe's training length moot
_LENGTH_KEYS = ("max_epochs", "max_time", "total_steps")


def _given(values: dict, keys) -> bool:
    """Whether the user set any of ``keys`` (file or flag; None = not given)."""
    return any(values.get(k) is not None for k in keys)


def auto_recipe(values: dict) -> str:
    """The recipe ``auto`` stands for, given the run's data."""
    if values.get("data"):
        return "small-table"
    if values.get("dataset") == "ogbg-molhiv":
        return "molhiv-fast"
    return "cpu-fast"


def table_size_rules(merged: dict, values: dict, rows: int) -> dict:
    """The recipes' choices that follow the table (``rows``, its task), for the Graphormer;
    explicit values are kept. admet: 3 blocks on small tables, a longer run and a fitted gbm
    weight on large ones (`_admet_sized`).
    small-table:

    - classification: the Graphormer and the Morgan-count forest, one member each, averaged
      (``forest_member``);
    - regression: the boosted trees (``forest_model="gbm"``) as one more member, weighted on
      the validation split under the one-standard-error rule toward one member's share
      (``tree_weight="val:equal"``, graphnorm/train/member_weights.py): the fitted weight
      moves only where validation tells it apart from the equal share (the plain fit
      overfits small validation splits: docs/results/defaults.md);
    - regression below `ENSEMBLE_BELOW_ROWS` rows: an ensemble of `ENSEMBLE_MEMBERS`
      Graphormers, where it paid (FreeSolv).
    """
    if merged.get("model_name") not in (None, DEFAULT_MODEL):
        return merged
    if merged.get("recipe") == "admet":
        return _admet_sized(merged, values, rows)
    if merged.get("recipe") != "small-table":
        return merged
    out = dict(merged)
    if merged.get("task") == CLASSIFICATION.name:
        return out if _given(values, ("forest_member",)) else dict(out, forest_member=True)
    if not _given(values, ("forest_member",)):
        out["forest_member"] = True
        for key, value in (("forest_model", "gbm"), ("tree_weight", "val:equal")):
            if not _given(values, (key,)):
                out[key] = value
    if rows < ENSEMBLE_BELOW_ROWS and not _given(values, ("ensemble",)):
        out["ensemble"] = ENSEMBLE_MEMBERS
    return out


def _admet_sized(merged: dict, values: dict, rows: int) -> dict:
    """The admet recipe by table size. Below `ADMET_LONG_ROWS` rows: a Graphormer of
    `ADMET_LAYERS` blocks. From there: the preset's 4 blocks (3 were measured on the small
    tables only), at least `ADMET_LONG_STEPS` steps (still at least 15 epochs), the gbm weight
    fitted on validation (`ADMET_LONG_TREE_WEIGHT`) and no early stopping (measured on the
    small tables only; the large ones were mostly best at their last validation). An explicit
    length (steps, epochs, time), weight, patience, preset, block count or backbone is kept."""
    if rows < ADMET_LONG_ROWS:
        # a backbone (--init-from) fixes the depth: fine-tuning copies every block
        if (_given(values, ("preset", "init_from")) or "num_layers" in (merged.get("model") or {})):
            return merged
        return dict(merged, model={**(merged.get("model") or {}), "num_layers": ADMET_LAYERS})
    out = dict(merged)
    if not _given(values, ("patience",)):
        out["patience"] = None
    if not _given(values, _LENGTH_KEYS + ("max_steps",)):
        out["max_steps"] = max(merged.get("max_steps") or 0, ADMET_LONG_STEPS)
    if not _given(values, ("tree_weight",)):
        out["tree_weight"] = ADMET_LONG_TREE_WEIGHT
    return out


# TrainConfig fields that shape the model a recipe's backbone (``init_from``) was trained as
_SHAPE_FIELDS = ("model_name", "preset", "norm", "sep_slots", "rwpe_steps", "local_mp")
NO_INIT = "none"  # --init-from none: from scratch, whatever the recipe says


def recipe_backbone(cfg) -> Optional[str]:
    """The backbone (``init_from``) of ``cfg``'s recipe, if it names one."""
    return RECIPES.get(cfg.recipe or "", {}).get("init_from")


def backbone_conflicts(cfg) -> list[str]:
    """Why the recipe's backbone (``cfg.init_from``) cannot start this run: the settings the
    user changed away from the model it was trained as ("norm: ln", ...); [] when it fits."""
    from .init_from import ADDABLE_AT_HEAD  # inputs a fine-tuning run may add at the head

    recipe = RECIPES.get(cfg.recipe or "", {})
    shape = dict(model_name="graphormer", sep_slots="all", **{k: recipe[k] for k in _SHAPE_FIELDS
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
    merged = dict(base)
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    merged["recipe"] = name
    return merged
