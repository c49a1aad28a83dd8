"""The Graphormer as a model kind (the ``graphormer`` entry of graphnorm.models): its config
class, how a model is built from a config dict's fields, and which of those fields a
training run sets (norm, dropouts, readout and structural options)."""
from __future__ import annotations

from .graphormer import Graphormer, GraphormerConfig


class GraphormerKind:
    config_class = GraphormerConfig

    def config(self, **fields) -> GraphormerConfig:
        return GraphormerConfig(**fields)

    def build(self, fields: dict) -> Graphormer:
        return Graphormer(GraphormerConfig.from_dict(fields))

    def run_fields(self, cfg) -> dict:
        """The model fields a TrainConfig ``cfg`` decides beyond the preset."""
        fields = dict(norm=cfg.norm, sep_slots=cfg.sep_slots, attention_dropout=cfg.attention_dropout)
        options = dict(readout=cfg.readout, rwpe_steps=cfg.rwpe_steps, local_mp=cfg.local_mp)
        fields.update({k: v for k, v in options.items() if v is not None})
        return fields


GRAPHORMER = GraphormerKind()
