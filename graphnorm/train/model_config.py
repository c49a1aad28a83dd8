"""Model config of a training run: the model's preset plus the run's norm, dropout and overrides."""
from __future__ import annotations

import dataclasses

from graphnorm.baselines import GNNConfig
from graphnorm.graph import GraphormerConfig, vocab_dims
from graphnorm.models import MODEL_NAMES

GRAPHORMER_PRESETS = {
    # Graphormer-slim (Ying et al. 2021, ZINC): 12 layers, hidden 80, FFN 80, 8 heads
    "slim": dict(num_layers=12, hidden=80, ffn_hidden=80, heads=8),
    # a CPU-budget model for MolHIV benchmarks: a third of slim's depth, ~4x faster
    "small": dict(num_layers=4, hidden=64, ffn_hidden=64, heads=8),
    # a small model for smoke tests and quick CPU experiments
    "tiny": dict(num_layers=2, hidden=32, ffn_hidden=32, heads=4),
}
GNN_PRESETS = {
    # the reference GINE of the accuracy-per-CPU-minute issue: 4 layers x 150
    "base": dict(num_layers=4, hidden=150),
    "tiny": dict(num_layers=2, hidden=32),
}
PRESETS = {"graphormer": GRAPHORMER_PRESETS, "gine": GNN_PRESETS, "gin-vn": GNN_PRESETS}
DEFAULT_PRESET = {"graphormer": "slim", "gine": "base", "gin-vn": "base"}


def model_config_for(cfg, info: dict) -> dict:
    """The model config dict (``"model"`` + fields, see graphnorm.models) of a TrainConfig."""
    name = cfg.model_name
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)}")
    preset = cfg.preset or DEFAULT_PRESET[name]
    if preset not in PRESETS[name]:
        raise ValueError(f"unknown preset {preset!r} for model {name}; choose from "
                         f"{', '.join(sorted(PRESETS[name]))}")
    atom_dims, bond_dims = vocab_dims(info["vocab"])
    kw = dict(PRESETS[name][preset], atom_feature_dims=atom_dims, edge_feature_dims=bond_dims,
              num_tasks=info["num_tasks"], dropout=cfg.dropout)
    if name == "graphormer":
        kw.update(norm=cfg.norm, sep_slots=cfg.sep_slots, attention_dropout=cfg.attention_dropout,
                  max_hops=cfg.max_hops)
        options = dict(readout=cfg.readout, rwpe_steps=cfg.rwpe_steps, local_mp=cfg.local_mp)
        kw.update({k: v for k, v in options.items() if v is not None})
    elif cfg.readout and cfg.readout.split("+")[-1] in ("sum", "mean"):
        kw["pool"] = cfg.readout.split("+")[-1]  # "vnode+mean": a GNN's pooling part is "mean"
    fields = {f.name for f in dataclasses.fields(GraphormerConfig if name == "graphormer" else GNNConfig)}
    unknown = sorted(set(cfg.model) - fields)
    if unknown:
        raise ValueError(f"model overrides {unknown} do not apply to model {name}; "
                         f"its fields are {sorted(fields - {'kind'})}")
    kw.update(cfg.model)
    if name == "graphormer":
        return dict(GraphormerConfig(**kw).to_dict(), model=name)  # validates early
    return dict(GNNConfig(kind=name, **kw).to_dict(), model=name)
