"""The model registry: every model kind is one `ModelKind` entry in `MODEL_KINDS`.

An entry says what the kind is (its name, what users read), where its code lives (``code``:
an object in the kind's own module, imported on first use so that ``--help`` stays fast),
how a run of it is saved (``model_file``, ``member_dir``) and what it supports (explain,
embed, attention rollout, conformal intervals, ensemble membership). Training, checkpoints,
ensembles, benchmarks, ``predict`` and the CLI ask an entry (or a loaded member's ``kind``)
instead of branching on names; ``tests/test_model_registry.py`` keeps it so.

- graph kinds (``graphormer``, ``gine``, ``gin-vn``): ``code`` has ``config_class``,
  ``config(**fields)``, ``build(fields) -> nn.Module`` and ``run_fields(train_config)``;
  a model config dict carries ``"model"`` plus that class's fields, travels in ``hparams``
  and checkpoints, and `build_model` rebuilds it (configs without ``"model"``, from before
  the baselines, are Graphormers). Saved as a Lightning checkpoint (``best.ckpt``).
- tree kinds (``rf``, ``gbm``): ``code`` is a `graphnorm.baselines.tree_member.TreeKind`
  (feature set, fit, predict, save, load); fitted on SMILES features of a user table, saved
  in their own file, an ensemble member in their own folder.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatch
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Optional

if TYPE_CHECKING:  # torch is imported where a model is built, so the CLI's --help stays fast
    from torch import nn

from graphnorm.run_folder import BEST_CHECKPOINT


# Model shapes by name (``--preset``); a preset sets fields of the model's config class.
GRAPHORMER_PRESETS = {
    "slim": {},  # GraphormerConfig's defaults: Graphormer-slim, 12 layers x 80, 8 heads
    # a CPU-budget model for MolHIV benchmarks: a third of slim's depth, ~4x faster
    "small": dict(num_layers=4, hidden=64, ffn_hidden=64, heads=8),
    # the CPU recipes' model (train/recipes.py): small with a wider FFN
    "fast": dict(num_layers=4, hidden=64, ffn_hidden=128, heads=8),
    # a small model for smoke tests and quick CPU experiments
    "tiny": dict(num_layers=2, hidden=32, ffn_hidden=32, heads=4),
}
GNN_PRESETS = {
    "base": {},  # GNNConfig's defaults: the reference GINE, 4 layers x 150
    "tiny": dict(num_layers=2, hidden=32),
}


@dataclass(frozen=True)
class ModelKind:
    name: str  # what --model takes and run records store
    label: str  # what users read in messages
    code: str  # "module:object" in the kind's own module (see the module docstring)
    tree: bool = False  # fitted on SMILES features: no graph, no Lightning, no torch weights
    presets: Mapping[str, dict] = field(default_factory=dict)  # graph kinds: --preset
    default_preset: Optional[str] = None
    model_file: str = BEST_CHECKPOINT  # what `predict` loads from a run folder
    also_reads: tuple = ()  # other file names (patterns) its loader takes
    member_dir: Optional[str] = None  # a tree kind's folder as an ensemble member
    explain: bool = False  # per-atom scores (explain, serve's drawings)
    embed: bool = False  # graph embeddings (embed, analyze)
    attention: bool = False  # attention maps: explain's attention rollout
    intervals: bool = True  # conformal intervals / calibration from its validation predictions
    ensemble_member: bool = True  # may be averaged with other members
    norm_variants: bool = False  # its runs vary over --norms (benchmark rows named by norm)
    paired_baseline: bool = False  # when benchmarked, the others are paired against it

    def implementation(self):
        """The object in the kind's own module that fits/builds, saves and loads it."""
        module, attr = self.code.split(":")
        return getattr(import_module(module), attr)

    @property
    def config_class(self):
        return self.implementation().config_class

    def reads_file(self, path) -> bool:
        """Whether ``path`` is a model file of this kind (by its name)."""
        name = Path(path).name
        return any(fnmatch(name, p) for p in (self.model_file, *self.also_reads))


_GRAPH = dict(explain=True, embed=True)
MODEL_KINDS = {k.name: k for k in (
    ModelKind("graphormer", "Graphormer", "graphnorm.graph.kind:GRAPHORMER",
              presets=GRAPHORMER_PRESETS, default_preset="slim", attention=True,
              norm_variants=True, **_GRAPH),
    ModelKind("gine", "GINE", "graphnorm.baselines.gnn:GINE", presets=GNN_PRESETS,
              default_preset="base", **_GRAPH),
    ModelKind("gin-vn", "GIN with a virtual node", "graphnorm.baselines.gnn:GIN_VN",
              presets=GNN_PRESETS, default_preset="base", **_GRAPH),
    ModelKind("rf", "random forest on Morgan counts", "graphnorm.baselines.forest_file:FOREST",
              tree=True, model_file="forest.skops", also_reads=("*.skops",), member_dir="forest",
              paired_baseline=True),
    ModelKind("gbm", "LightGBM on MapLight features", "graphnorm.baselines.boosted_file:BOOSTED",
              tree=True, model_file="gbm.json", member_dir="gbm"),
)}
DEFAULT_MODEL = "graphormer"  # a model config without "model" (older checkpoints) is one

MODEL_NAMES = tuple(n for n, k in MODEL_KINDS.items() if not k.tree)  # torch, `build_model`
TREE_MODELS = tuple(n for n, k in MODEL_KINDS.items() if k.tree)  # --tree-model
RUNNABLE_MODELS = tuple(MODEL_KINDS)  # what `train --model` / `benchmark --models` take
PRESETS = {n: MODEL_KINDS[n].presets for n in MODEL_NAMES}
DEFAULT_PRESET = {n: MODEL_KINDS[n].default_preset for n in MODEL_NAMES}


def model_kind(name: Optional[str]) -> ModelKind:
    """The entry of ``name`` (None: the default model), or a ValueError listing the kinds."""
    name = DEFAULT_MODEL if name is None else name
    if name not in MODEL_KINDS:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODEL_KINDS)}")
    return MODEL_KINDS[name]


def tree_kind(name: str) -> ModelKind:
    """The entry of a tree kind (``--tree-model``), refusing graph kinds."""
    kind = MODEL_KINDS.get(name)
    if kind is None or not kind.tree:
        trees = (n for n, k in MODEL_KINDS.items() if k.tree)
        raise ValueError(f"unknown tree model {name!r}; choose from {', '.join(trees)}")
    return kind


def kind_of_file(path) -> Optional[ModelKind]:
    """The tree kind whose saved model ``path`` is (by file name), else None (a graph
    checkpoint: its kind is in its model config)."""
    return next((k for k in MODEL_KINDS.values() if k.tree and k.reads_file(path)), None)


def tree_member_files(run: Path) -> list[Path]:
    """The tree members of an ensemble folder, in registry order."""
    return [run / k.member_dir / k.model_file for k in MODEL_KINDS.values()
            if k.tree and (run / k.member_dir / k.model_file).is_file()]


def preset_fields(name: str, preset: str | None) -> dict:
    """The config fields of a model's preset (None: the model's default preset)."""
    preset = preset or DEFAULT_PRESET[name]
    if preset not in PRESETS[name]:
        raise ValueError(f"unknown preset {preset!r} for model {name}; choose from "
                         f"{', '.join(sorted(PRESETS[name]))}")
    return dict(PRESETS[name][preset])


def presets_help(mark_default: bool = True) -> str:
    """'graphormer slim (default) | small | tiny; gine/gin-vn base (default) | tiny'
    (``mark_default=False``: without the "(default)" marks)."""
    groups: dict = {}
    for name in MODEL_NAMES:
        groups.setdefault(id(PRESETS[name]), []).append(name)
    parts = []
    for names in groups.values():
        table, default = PRESETS[names[0]], DEFAULT_PRESET[names[0]]
        shown = [f"{p} (default)" if p == default and mark_default else p for p in table]
        parts.append(f"{'/'.join(names)} {' | '.join(shown)}")
    return "; ".join(parts)


def split_model_config(config: dict) -> tuple[str, dict]:
    """(a graph kind's name, the model's own fields) of a model config dict."""
    fields = dict(config)
    name = fields.pop("model", DEFAULT_MODEL)
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)}")
    return name, fields


def build_model(config: dict) -> nn.Module:
    name, fields = split_model_config(config)
    return MODEL_KINDS[name].implementation().build(fields)
