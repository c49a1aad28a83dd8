"""Where atom token embeddings enter a model, reached through forward hooks (no model change).

Both model kinds get one view: the atom embeddings as a padded tensor ``e [B, N, D]`` (rows
of padding atoms are 0 and stay 0), which a function ``edit(e) -> e'`` may replace.

- Graphormer: ``e_i = AtomEncoder(x_i)``, the atom-type part of the token
  ``AtomEncoder(x_i) + CentralityEncoding(deg_i) [+ RWPE_i]``. The degree and random-walk
  terms, the [VNode], the attention bias (distances, bonds) and the GINE branch's bond
  features are structure: they stay as they are when ``e`` is edited. (Blanking the whole
  token would not do: the first block's LayerNorm sees ``LN(alpha t) = LN(t)`` for any
  ``alpha > 0``, so the prediction would jump only at ``alpha ~ sqrt(eps)``, and integrated
  gradients from a zero token miss that jump: on a small random Graphormer their sum was
  3-18 % of F(e) - F(0); from a zero atom-type part it is within 0.1 % at 32 steps.)
- GINE / GIN-VN: ``e_i = AtomEncoder(x_i)``, the node features of the first layer; bonds
  and the virtual node stay.

Both are the output of ``model.atom_encoder`` (a forward hook): sparse ``[sum N, D]`` in
``node_mask`` order (the Graphormer's tokens travel packed, ``graphnorm.nn.packing``), padded
here for ``edit``. So "the baseline" (``e = 0``) is the same molecular graph with atoms of no element, not an empty graph.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from torch import Tensor, nn

Edit = Callable[[Tensor], Tensor]  # padded e [B, N, D] -> e' [B, N, D]


def architecture(model: nn.Module) -> str:
    """Where a model's attribution sites are: "transformer" (padded atoms, attention: the
    Graphormer) or "gnn" (sparse atoms: ``graphnorm.baselines.GNN``); else refused."""
    if hasattr(model, "transformer") and hasattr(model, "attn_bias"):
        return "transformer"
    if hasattr(model, "convs") and hasattr(model, "atom_encoder"):
        return "gnn"
    raise ValueError(f"cannot explain a {type(model).__name__}: attributions need a "
                     "Graphormer or a GINE/GIN-VN model (graphnorm.models)")


@contextmanager
def edited_atom_embeddings(model: nn.Module, node_mask: Tensor, edit: Edit) -> Iterator[None]:
    """Within the block, every forward of ``model`` replaces its atom embeddings ``e`` by
    ``edit(e)`` (padded ``[B, N, D]``; ``node_mask`` bool ``[B, N]`` of the batch that will run)."""
    architecture(model)  # refuses what has no atom encoder to edit

    def hook(module, args, output):
        if output.dim() == 3:  # [B, N, D] already
            return edit(output)
        padded = output.new_zeros(*node_mask.shape, output.shape[-1])
        padded[node_mask] = output
        return edit(padded)[node_mask]

    handle = model.atom_encoder.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


@contextmanager
def captured_attention(model: nn.Module, store: list) -> Iterator[None]:
    """Appends each block's attention input ``(x [B, L, D], bias, key_padding_mask)`` to
    ``store`` during forwards of a Graphormer (for recomputing its attention probabilities)."""
    if architecture(model) != "transformer":
        raise ValueError("attention rollout needs a Graphormer: GINE/GIN-VN have no attention; "
                         "use --method ig or occlusion")

    def hook(module, args, kwargs, output):
        x = args[0]
        bias = args[1] if len(args) > 1 else kwargs.get("bias")
        pad = args[2] if len(args) > 2 else kwargs.get("key_padding_mask")
        packing = args[3] if len(args) > 3 else kwargs.get("packing")
        if packing is not None:  # packed tokens [B + T, D]: padded again, 0 on padding
            x = packing.unpack(x)
        store.append((module, x.detach(), None if bias is None else bias.detach(), pad))

    handles = [block.attn.register_forward_hook(hook, with_kwargs=True)
               for block in model.transformer.blocks]
    try:
        yield
    finally:
        for h in handles:
            h.remove()
