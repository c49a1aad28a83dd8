"""Model config of a training run: a preset plus the run's norm, dropout and overrides."""
from __future__ import annotations

from graphnorm.graph import GraphormerConfig, vocab_dims

PRESETS = {
    # Graphormer-slim (Ying et al. 2021, ZINC): 12 layers, hidden 80, FFN 80, 8 heads
    "slim": dict(num_layers=12, hidden=80, ffn_hidden=80, heads=8),
    # a CPU-budget model for MolHIV benchmarks: a third of slim's depth, ~4x faster
    "small": dict(num_layers=4, hidden=64, ffn_hidden=64, heads=8),
    # a small model for smoke tests and quick CPU experiments
    "tiny": dict(num_layers=2, hidden=32, ffn_hidden=32, heads=4),
}


def model_config_for(cfg, info: dict) -> dict:
    if cfg.preset not in PRESETS:
        raise ValueError(f"unknown model preset {cfg.preset!r}; choose from {sorted(PRESETS)}")
    atom_dims, bond_dims = vocab_dims(info["vocab"])
    kw = dict(PRESETS[cfg.preset], norm=cfg.norm, sep_slots=cfg.sep_slots, dropout=cfg.dropout,
              attention_dropout=cfg.attention_dropout, atom_feature_dims=atom_dims,
              edge_feature_dims=bond_dims, max_hops=cfg.max_hops, num_tasks=info["num_tasks"])
    kw.update(cfg.model)
    return GraphormerConfig(**kw).to_dict()  # validates the combination early
