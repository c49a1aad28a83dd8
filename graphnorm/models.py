"""Model registry: a model config dict (``"model"`` key + that model's fields) -> nn.Module.

The one place that maps ``--model`` names to classes; training, checkpoints and the CLI all
go through it. A config without ``"model"`` (checkpoints before the baselines) is a Graphormer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where a model is built, so the CLI's --help stays fast
    from torch import nn

MODEL_NAMES = ("graphormer", "gine", "gin-vn")  # torch models, built by `build_model`
# tree models of own tables, read from fingerprints: their entries (fit, save, load) are in
# graphnorm/baselines/trees.py, whose TREE_KINDS holds exactly these names
TREE_MODELS = ("rf", "gbm")
# what `train --model` / `benchmark --models` take
RUNNABLE_MODELS = MODEL_NAMES + TREE_MODELS


def is_tree_model(name: str) -> bool:
    """A tree model (scikit-learn / LightGBM, no Lightning, no checkpoint) rather than a
    torch model."""
    return name in TREE_MODELS

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
PRESETS = {"graphormer": GRAPHORMER_PRESETS, "gine": GNN_PRESETS, "gin-vn": GNN_PRESETS}
DEFAULT_PRESET = {"graphormer": "slim", "gine": "base", "gin-vn": "base"}


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
    """("graphormer" | "gine" | "gin-vn", the model's own fields)."""
    fields = dict(config)
    name = fields.pop("model", "graphormer")
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)}")
    return name, fields


def model_config_class(name: str):
    if name == "graphormer":
        from graphnorm.graph import GraphormerConfig

        return GraphormerConfig
    from graphnorm.baselines import GNNConfig

    return GNNConfig


def build_model(config: dict) -> nn.Module:
    name, fields = split_model_config(config)
    if name == "graphormer":
        from graphnorm.graph import Graphormer, GraphormerConfig

        return Graphormer(GraphormerConfig.from_dict(fields))
    from graphnorm.baselines import GNN, GNNConfig

    return GNN(GNNConfig.from_dict(dict(fields, kind=name)))
