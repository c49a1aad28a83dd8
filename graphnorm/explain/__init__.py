"""Per-atom attributions of a trained model: ``graphnorm explain`` (docs/explain_and_serve.md).

Methods (:mod:`graphnorm.explain.methods`): integrated gradients and occlusion on the atom
embeddings (every model), attention rollout from the [VNode] (Graphormer). The embeddings are
reached by forward hooks (:mod:`graphnorm.explain.sites`); the models are unchanged.
Submodules load on first use, so importing this package costs no torch.
"""
from __future__ import annotations

import importlib

_LAZY = {"Explainer": "explainer", "Explanation": "explainer", "load_explainer": "explainer",
         "METHODS": "methods", "DEFAULT_METHOD": "methods", "integrated_gradients": "methods",
         "occlusion": "methods", "attention_rollout": "methods",
         "draw_attributions": "draw", "grid_png": "draw"}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
