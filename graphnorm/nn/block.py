"""One transformer block with token norms from :func:`graphnorm.norms.build_norm`.

Pre-norm (Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture",
https://arxiv.org/abs/2002.04745; Graphormer, ViT, pre-LN text):

    h' = h + Drop(MHA(Norm_attn(h); A)) [+ Drop(Local(Norm_attn(h)))]
    h  = h' + Drop(FFN(Norm_ffn(h')))

post-norm (BERT, Vaswani et al. 2017, https://arxiv.org/abs/1706.03762):

    h' = Norm_attn(h + Drop(MHA(h; A)) [+ Drop(Local(h))])
    h  = Norm_ffn(h' + Drop(FFN(h')))

with ``FFN(x) = W_2 GELU(W_1 x + b_1) + b_2``. ``Local`` is an optional branch that reads the
same input as attention (GraphGPS's message passing, Rampášek et al. 2022,
https://arxiv.org/abs/2205.12454). Every norm is called with the token padding mask.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Optional

import torch.nn.functional as F
from torch import Tensor, nn

from ..norms import build_norm
from .attention import MultiheadAttention, fast_linear
from .dropout import residual_dropout
from .packing import TokenPacking


class FeedForward(nn.Module):
    """``W_2 GELU(W_1 x + b_1) + b_2``: ``[..., D] -> [..., D]`` through ``hidden`` units."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: Tensor) -> Tensor:
        return fast_linear(F.gelu(fast_linear(x, self.fc1)), self.fc2)


class TransformerBlock(nn.Module):
    r"""Transformer block with an additive attention bias, pluggable token norms, residual
    dropout and an optional local branch beside attention.

    Pre-norm (`Xiong et al. 2020 <https://arxiv.org/abs/2002.04745>`_):

    .. math::
        h' = h + \mathrm{Drop}(\mathrm{MHA}(N_1(h); A)) + \mathrm{Drop}(\mathrm{Local}(N_1(h)))
        \qquad h_{out} = h' + \mathrm{Drop}(\mathrm{FFN}(N_2(h')))

    post-norm (BERT): :math:`h' = N_1(h + \mathrm{Drop}(\mathrm{MHA}(h; A)) + \ldots)`,
    :math:`h_{out} = N_2(h' + \mathrm{Drop}(\mathrm{FFN}(h')))`. MHA is
    :class:`~graphnorm.nn.MultiheadAttention`; :math:`N_1, N_2` are
    ``build_norm(attn_norm)`` / ``build_norm(ffn_norm)`` called with the padding mask, so a
    ``sep:A+B`` spec normalizes the special token at position 0 with A (SepNorm,
    `Chen et al. 2023 <https://arxiv.org/abs/2309.12931>`_).

    Args:
        dim, heads, ffn_hidden: width, attention heads, FFN hidden units.
        attn_norm, ffn_norm: norm specs of :math:`N_1` and :math:`N_2`.
        dropout: residual dropout on every branch output; ``attention_dropout`` on the
            attention probabilities.
        pre_norm: pre-norm (default) or post-norm.
        local: optional module ``local(x [B, L, D], local_input) -> [B, L, D]`` summed with
            attention (the Graphormer's GINE branch).
        attention: implementation of the biased attention ("auto" | "sdpa" | "math").
        init_std: if given, linears ~ N(0, init_std) with zero bias (Graphormer v1, BERT);
            otherwise torch's default init, left for the owning model to overwrite.
        isobn_beta: beta of IsoBN norms.

    Shapes:
        ``forward(h [B, L, D], padding_mask [B, L] | None, bias [B, H, L, L] | None,
        key_padding_mask [B, L] | None, local_input=None) -> [B, L, D]``; with ``packing``
        (:class:`~graphnorm.nn.packing.TokenPacking`) h and the output are packed
        ``[B + T, D]`` (the local branch then reads packed tokens too)
    """

    def __init__(self, dim: int, heads: int, ffn_hidden: int, attn_norm: str = "ln",
                 ffn_norm: Optional[str] = None, dropout: float = 0.0,
                 attention_dropout: float = 0.0, pre_norm: bool = True,
                 local: Optional[nn.Module] = None, attention: str = "auto",
                 init_std: Optional[float] = None, isobn_beta: float = 0.5):
        super().__init__()
        # creation order = the old blocks' order of random draws (seeded inits reproduce)
        self.attn_norm = build_norm(attn_norm, dim, isobn_beta)
        self.attn = MultiheadAttention(dim, heads, attention_dropout, attention)
        self.ffn_norm = build_norm(ffn_norm or attn_norm, dim, isobn_beta)
        self.ffn = FeedForward(dim, ffn_hidden)
        self.local = local
        self.dropout, self.pre_norm, self.init_std = dropout, pre_norm, init_std
        if init_std is not None:  # freshly built modules already hold torch's default init
            self.reset_parameters()

    def reset_parameters(self) -> None:
        """Linears as chosen by ``init_std``; norms and the local branch reset."""
        for lin in (self.attn.qkv, self.attn.out, self.ffn.fc1, self.ffn.fc2):
            if self.init_std is None:
                lin.reset_parameters()
            else:
                nn.init.normal_(lin.weight, std=self.init_std)
                nn.init.zeros_(lin.bias)
        self.attn_norm.reset_parameters()
        self.ffn_norm.reset_parameters()
        if self.local is not None:
            self.local.reset_parameters()

    def forward(self, h: Tensor, padding_mask: Optional[Tensor] = None,
                bias: Optional[Tensor] = None, key_padding_mask: Optional[Tensor] = None,
                local_input: Any = None, packing: Optional[TokenPacking] = None) -> Tensor:
        p, train = self.dropout, self.training
        attn_norm, ffn_norm = (partial(_norm, n, padding_mask, packing)
                               for n in (self.attn_norm, self.ffn_norm))
        x = attn_norm(h) if self.pre_norm else h
        drop = partial(residual_dropout, p=p, training=train, packing=packing)
        y = drop(h, self.attn(x, bias, key_padding_mask, packing))
        if self.local is not None:  # GraphGPS: attention and local branch both read x
            y = drop(y, self.local(x, local_input))
        if not self.pre_norm:
            y = attn_norm(y)
            return ffn_norm(drop(y, self.ffn(y)))
        return drop(y, self.ffn(ffn_norm(y)))


def _norm(norm: nn.Module, padding_mask: Optional[Tensor], packing: Optional[TokenPacking],
          x: Tensor) -> Tensor:
    """``norm`` on padded tokens (with their mask) or packed ones (its ``forward_packed``)."""
    return norm(x, padding_mask) if packing is None else norm.forward_packed(x, packing.specials)
