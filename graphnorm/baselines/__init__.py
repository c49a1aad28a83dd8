"""Message-passing baselines (PyG layers) that share graphnorm's data, training and CLI.

``GNN`` and friends load on first use: importing PyG costs seconds (it pulls in
``torch._dynamo``), and the boosted-tree and MapLight modules of this package are read by
paths (``graphnorm admet``, ``predict``) that never build a message-passing model.
"""
from __future__ import annotations

__all__ = ["GNN", "GNN_KINDS", "GNNConfig"]


def __getattr__(name: str):
    if name in __all__:
        from . import gnn

        return getattr(gnn, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
