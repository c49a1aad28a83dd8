"""Per-atom attribution methods for one model and one padded batch: scores ``[B, N, T]``.

``F_t(e)`` is the model's output for target t as a function of the atom embeddings ``e``
(:mod:`graphnorm.explain.sites`): target units for regression, the logit (log-odds) for
classification -- probabilities saturate, so their differences say little near 0 and 1.
The baseline is ``e' = 0`` (blank atoms on the same graph).

- ``ig``: integrated gradients (Sundararajan et al. 2017, https://arxiv.org/abs/1703.01365)
  per atom i, summed over the embedding dimensions d, by the midpoint rule with m steps:

      IG_i = sum_d (e_id - e'_id) * (1/m) sum_{k=1..m} dF/de_id (e' + (k - 1/2)/m (e - e'))

  Completeness: sum_i IG_i ~= F(e) - F(e'), exact as m grows (tested).
- ``occlusion``: the prediction change when atom i alone is blanked (Zeiler & Fergus 2014,
  https://arxiv.org/abs/1311.2901): ``O_i = F(e) - F(e with e_i = e'_i)``. One forward per
  atom position, with every molecule of the batch occluded at that position at once.
- ``rollout``: attention rollout (Abnar & Zuidema 2020, https://arxiv.org/abs/2005.00928),
  Graphormer only. With A_l the head-averaged attention of block l and the residual as half
  the flow, R = prod_l (A_l + I) / 2 (first block rightmost); an atom's score is the row of
  the tokens the head reads (the [VNode], row 0, for the default readout) at its column. It is
  non-negative, the same for every target, and ignores the FFNs, norms and GINE branch.

The model runs in eval mode: a molecule's scores do not depend on its batch mates.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from graphnorm.checkpoints import LoadedModel
from graphnorm.tasks import resolve_task

from .sites import Edit, captured_attention, edited_atom_embeddings

METHODS = ("ig", "occlusion", "rollout")
DEFAULT_METHOD = "occlusion"  # the best on experiments/results/explain (docs/explain_and_serve.md)
DEFAULT_STEPS = 32


def model_output(loaded: LoadedModel, batch, edit: Optional[Edit] = None) -> Tensor:
    """``F(e)`` [B, T]: target units (regression) or logits (binary), with ``edit`` applied
    to the atom embeddings when given."""
    task, logged = resolve_task(loaded.task), loaded.task.get("target_transforms")
    if edit is None:
        return task.in_units(loaded.model(batch), loaded.target_mean, loaded.target_std, logged)
    with edited_atom_embeddings(loaded.model, batch.node_mask, edit):
        return task.in_units(loaded.model(batch), loaded.target_mean, loaded.target_std, logged)


def atom_embeddings(loaded: LoadedModel, batch) -> Tensor:
    """The padded atom embeddings ``e`` [B, N, D] of a batch (padding rows 0)."""
    seen = {}

    def keep(e: Tensor) -> Tensor:
        seen["e"] = e.detach()
        return e

    with torch.no_grad():
        model_output(loaded, batch, keep)
    return seen["e"] * batch.node_mask.unsqueeze(-1)


def integrated_gradients(loaded: LoadedModel, batch, steps: int = DEFAULT_STEPS) -> Tensor:
    """IG scores [B, N, T] w.r.t. the zero baseline (module doc); 0 on padding atoms."""
    if steps < 1:
        raise ValueError(f"integrated gradients needs steps >= 1, got {steps}")
    e = atom_embeddings(loaded, batch)
    grads = None  # [T, B, N, D], summed over the steps
    for k in range(steps):
        alpha = (k + 0.5) / steps
        point = {}

        def interpolate(_: Tensor, alpha=alpha) -> Tensor:
            point["z"] = (alpha * e).requires_grad_(True)  # e' + alpha (e - e'), e' = 0
            return point["z"]

        with torch.enable_grad():
            out = model_output(loaded, batch, interpolate)  # [B, T]
            T = out.shape[1]
            step = torch.stack([torch.autograd.grad(out[:, t].sum(), point["z"],
                                                    retain_graph=t < T - 1)[0]
                                for t in range(T)])
        grads = step if grads is None else grads + step
    scores = (e.unsqueeze(0) * grads / steps).sum(-1)  # [T, B, N]
    return scores.permute(1, 2, 0) * batch.node_mask.unsqueeze(-1)


def occlusion(loaded: LoadedModel, batch) -> Tensor:
    """Occlusion scores [B, N, T]: F(e) - F(e with atom i blanked); 0 on padding atoms."""
    with torch.no_grad():
        full = model_output(loaded, batch)  # [B, T]
        cols = []
        for j in range(batch.node_mask.shape[1]):
            def blank(e: Tensor, j=j) -> Tensor:
                e = e.clone()
                e[:, j] = 0.0
                return e

            cols.append(full - model_output(loaded, batch, blank))
    return torch.stack(cols, 1) * batch.node_mask.unsqueeze(-1)


def attention_probs(attn, x: Tensor, bias: Optional[Tensor], key_padding_mask: Optional[Tensor]) -> Tensor:
    """softmax(q k^T / sqrt(d) + bias + M) of a ``MultiheadAttention`` for input x: [B, H, L, L]
    (recomputed from the block's input, as its kernel does not return the probabilities)."""
    B, L, D = x.shape
    H = attn.heads
    q, k, _ = F.linear(x, attn.qkv.weight, attn.qkv.bias).view(B, L, 3, H, D // H).permute(2, 0, 3, 1, 4)
    scores = q @ k.transpose(-1, -2) / math.sqrt(D // H)
    if bias is not None:
        scores = scores + bias
    if key_padding_mask is not None:
        scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
    return scores.softmax(-1)


def attention_rollout(loaded: LoadedModel, batch) -> Tensor:
    """Rollout scores [B, N, T] of the tokens the head reads (module doc); 0 on padding."""
    model = loaded.model
    store: list = []
    with torch.no_grad(), captured_attention(model, store):
        out = model(batch)
        mask = batch.node_mask
        B, N = mask.shape
        eye = torch.eye(N + 1).expand(B, N + 1, N + 1)
        flow = eye
        for attn, x, bias, pad in store:
            a = attention_probs(attn, x, bias, pad).mean(1)  # [B, L, L]
            flow = (0.5 * a + 0.5 * eye) @ flow
    readout = getattr(model.config, "readout", "vnode")
    rows = []
    if readout.startswith("vnode"):
        rows.append(flow[:, 0, 1:])
    if readout.endswith("sum") or readout.endswith("mean"):  # the atoms the head pools
        atoms = (flow[:, 1:, 1:] * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        rows.append(atoms)
    scores = torch.stack(rows).mean(0) * mask  # [B, N]
    return scores.unsqueeze(-1).expand(B, N, out.shape[1]).clone()


def method_function(method: str, steps: int = DEFAULT_STEPS) -> Callable[[LoadedModel, object], Tensor]:
    """``(loaded, batch) -> [B, N, T]`` for a method name of ``METHODS``."""
    if method == "ig":
        return lambda loaded, batch: integrated_gradients(loaded, batch, steps)
    if method == "occlusion":
        return occlusion
    if method == "rollout":
        return attention_rollout
    raise ValueError(f"unknown attribution method {method!r}; choose from {', '.join(METHODS)}")


def check_method(method: str, loaded: LoadedModel) -> None:
    """Refuse a method the model cannot run (rollout on a GNN), naming the checkpoint."""
    if method not in METHODS:
        raise ValueError(f"unknown attribution method {method!r}; choose from {', '.join(METHODS)}")
    if method == "rollout" and not loaded.kind.attention:  # its registry entry's answer
        raise ValueError(f"--method rollout needs a Graphormer; {loaded.path} is a "
                         f"{loaded.kind.name} model: "
                         "use --method ig or occlusion")
