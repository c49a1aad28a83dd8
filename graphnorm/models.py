"""Model registry: a model config dict (``"model"`` key + that model's fields) -> nn.Module.

The one place that maps ``--model`` names to classes; training, checkpoints and the CLI all
go through it. A config without ``"model"`` (checkpoints before the baselines) is a Graphormer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where a model is built, so the CLI's --help stays fast
    from torch import nn

MODEL_NAMES = ("graphormer", "gine", "gin-vn")


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
