"""Message-passing baselines (PyG layers) that share graphnorm's data, training and CLI."""
from .gnn import GNN, GNN_KINDS, GNNConfig

__all__ = ["GNN", "GNN_KINDS", "GNNConfig"]
