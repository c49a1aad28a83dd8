"""Molecular graphs: padded batches, structural encodings and Graphormer (featurization:
graphnorm.chem).

Names load on first use (`options` without torch), so the CLI can read the option names
without importing the model.
"""
from importlib import import_module

from .options import LOCAL_MP, READOUTS, SEP_SLOTS

_LAZY = {
    "SPD_PAD": "collate", "SPD_UNREACHABLE": "collate", "GraphBatch": "collate",
    "LengthBucketSampler": "collate", "collate_graphs": "collate",
    "AtomEncoder": "encodings", "AttentionBias": "attention_bias", "CentralityEncoding": "encodings",
    "EdgeEncoding": "encodings", "SpatialEncoding": "encodings",
    "GraphEmbeddings": "graphormer", "Graphormer": "graphormer", "GraphormerBlock": "graphormer",
    "GraphormerConfig": "graphormer", "graphormer_slim": "graphormer", "vocab_dims": "graphormer",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    if name == "smiles_to_data":  # featurization lives in graphnorm.chem
        from ..chem import smiles_to_data

        return smiles_to_data
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted([*_LAZY, "LOCAL_MP", "READOUTS", "SEP_SLOTS", "smiles_to_data"])
