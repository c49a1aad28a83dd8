"""Molecular graphs: featurization, padded batches, structural encodings and Graphormer."""
from .collate import SPD_PAD, SPD_UNREACHABLE, GraphBatch, LengthBucketSampler, collate_graphs
from .encodings import (
    AtomEncoder,
    AttentionBias,
    CentralityEncoding,
    EdgeEncoding,
    SpatialEncoding,
)
from .graphormer import (
    Graphormer,
    GraphormerBlock,
    GraphormerConfig,
    GraphEmbeddings,
    graphormer_slim,
    vocab_dims,
)

__all__ = [
    "SPD_PAD", "SPD_UNREACHABLE", "GraphBatch", "LengthBucketSampler", "collate_graphs",
    "AtomEncoder", "AttentionBias", "CentralityEncoding", "EdgeEncoding", "SpatialEncoding",
    "Graphormer", "GraphormerBlock", "GraphormerConfig", "GraphEmbeddings", "graphormer_slim",
    "vocab_dims",
]
