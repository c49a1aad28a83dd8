"""Molecular graphs: featurization, padded batches, structural encodings and Graphormer."""
from .collate import SPD_PAD, SPD_UNREACHABLE, GraphBatch, LengthBucketSampler, collate_graphs
from .encodings import (
    AtomEncoder,
    AttentionBias,
    CentralityEncoding,
    EdgeEncoding,
    SpatialEncoding,
)
from .featurize import (
    FEATURIZER_VERSION,
    FeaturizationError,
    smiles_to_data,
    smiles_to_data_many,
)
from .graphormer import (
    GraphEmbeddings,
    Graphormer,
    GraphormerBlock,
    GraphormerConfig,
    graphormer_slim,
    vocab_dims,
)

__all__ = [
    "SPD_PAD", "SPD_UNREACHABLE", "GraphBatch", "LengthBucketSampler", "collate_graphs",
    "AtomEncoder", "AttentionBias", "CentralityEncoding", "EdgeEncoding", "SpatialEncoding",
    "FEATURIZER_VERSION", "FeaturizationError", "smiles_to_data", "smiles_to_data_many",
    "GraphEmbeddings", "Graphormer", "GraphormerBlock", "GraphormerConfig", "graphormer_slim",
    "vocab_dims",
]
