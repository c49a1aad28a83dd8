"""Multi-head attention with an additive bias and a key padding mask.

Vaswani et al. 2017, "Attention Is All You Need", https://arxiv.org/abs/1706.03762, with an
additive bias A as in Graphormer (Ying et al. 2021, https://arxiv.org/abs/2106.05234):

    MHA(x) = concat_h( softmax(Q_h K_h^T / sqrt(d) + A_h + M) V_h ) W_O,
    [Q, K, V] = x W_QKV + b_QKV,   M_ij = -inf where key j is padding, else 0

:class:`MultiheadAttention` is the one attention of the graph, text and vision encoders
(:mod:`graphnorm.nn.block`). Without a bias it calls ``F.scaled_dot_product_attention`` with a
boolean key mask. With a bias, ``biased_attention(qkv [B, L, 3D], bias [B, H, L, L]) -> [B, L, D]``
picks an implementation: "sdpa" = ``F.scaled_dot_product_attention``; "math" = the formula
in BLAS calls (:class:`BiasedAttentionCPU` on CPU). On CPU SDPA's fused kernel gives no
gradient for the bias, so training falls back to its unfused math path: for B=256, L=26,
d=10 (one thread, CPU time) SDPA takes 26 / 40 / 14 ms (train, train with attention dropout,
inference) against 20 / 28 / 8 ms here. "auto" = "math" on CPU, "sdpa" elsewhere.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .dropout import keep_mask
from .packing import TokenPacking

ATTENTION_IMPLS = ("auto", "sdpa", "math")


def _attend(qkv: Tensor, bias: Tensor, heads: int, p: float):
    """Forward of one group of graphs: ``[B, L, D]`` and what the backward needs."""
    B, L, D3 = qkv.shape
    d = D3 // (3 * heads)
    BH, alpha = B * heads, d**-0.5
    x = qkv.view(B, L, 3, heads, d)
    q = x[:, :, 0].transpose(1, 2).reshape(BH, L, d)  # [BH, L, d]
    kt = x[:, :, 1].permute(0, 2, 3, 1).reshape(BH, d, L)  # [BH, d, L]
    v = x[:, :, 2].transpose(1, 2).reshape(BH, L, d)  # [BH, L, d]
    probs = torch.baddbmm(bias.reshape(BH, L, L), q, kt, alpha=alpha).softmax(-1)
    mask = keep_mask(probs.shape, p, probs.dtype) if p > 0 else None  # [BH, L, L]
    pm = probs * mask if p > 0 else probs
    out = torch.bmm(pm, v)  # [BH, L, d]
    if p > 0:
        out.mul_(1.0 / (1.0 - p))
    out = out.view(B, heads, L, d).transpose(1, 2).reshape(B, L, heads * d)
    return out, (q, kt, v, probs, mask, pm, (B, L, heads, d, p))


def _attend_backward(saved, grad: Tensor, bias_grad: bool):
    """Backward of one group: (dqkv [B, L, 3D], dbias [B, H, L, L] or None)."""
    q, kt, v, probs, mask, pm, (B, L, H, d, p) = saved
    BH, alpha = B * H, d**-0.5
    go = grad.reshape(B, L, H, d).transpose(1, 2).reshape(BH, L, d)  # dOut per head
    if p > 0:
        go = go * (1.0 / (1.0 - p))
    dqkv = grad.new_empty(3, BH, L, d)  # dq, dk, dv, moved to [B, L, 3, H, d] at the end
    torch.bmm(pm.transpose(1, 2), go, out=dqkv[2])  # dv = pm^T dOut
    dpm = torch.bmm(go, v.transpose(1, 2).contiguous())  # [BH, L, L]
    if p > 0:
        dpm.mul_(mask)
    ds = torch._softmax_backward_data(dpm, probs, -1, probs.dtype)  # d scores
    torch.bmm(ds, kt.transpose(1, 2).contiguous(), out=dqkv[0]).mul_(alpha)  # dq
    torch.bmm(ds.transpose(1, 2), q, out=dqkv[1]).mul_(alpha)  # dk
    dqkv = dqkv.view(3, B, H, L, d).permute(1, 3, 0, 2, 4).reshape(B, L, 3 * H * d)
    return dqkv, ds.view(B, H, L, L) if bias_grad else None


def _padded_cost(s: list, a: int, b: int) -> int:
    """Attention work of the graphs with sorted lengths s[a:b] padded to the longest."""
    return (b - a) * s[b - 1] ** 2


def _best_split(s: list, a: int, b: int) -> tuple:
    """(gain, k): cutting the sorted lengths s[a:b] at k saves the most padded work;
    (0, None) when no cut saves any."""
    best = (0, None)
    for k in range(a + 1, b):
        if s[k - 1] == s[b - 1]:
            break  # cutting among equal lengths saves nothing
        gain = _padded_cost(s, a, b) - _padded_cost(s, a, k) - _padded_cost(s, k, b)
        if gain > best[0]:
            best = (gain, k)
    return best


def length_groups(bias: Tensor, max_groups: int = 4, worth: float = 0.7):
    """Graphs of a padded batch grouped by length, for attention over each group's own
    length: a list of (graph indices, length), or None when one pass is about as cheap.

    A graph's length is its last unmasked key + 1, read from row 0 of head 0: the -inf keys
    there are taken as key padding, masked in every row and head (how every caller here
    builds the bias), so later tokens are padding. Attention costs ~ sum_g |g| L_g^2.
    Sorted by length, the batch is cut greedily where a cut saves most, up to
    ``max_groups`` groups, and grouping is used when it cuts that cost below ``worth`` of
    B L^2: one large molecule pads a batch of drug-like ones to its size (half_life_obach's
    training steps: 0.36 -> 0.24 CPU-s, lipophilicity's 0.33 -> 0.25, ZINC's 0.16 -> 0.155;
    one thread, load ~2). Only without attention dropout, so that masks are drawn as
    before."""
    B, L = bias.shape[0], bias.shape[-1]
    if B < 2 or bias.device.type != "cpu":
        return None
    keys = torch.isfinite(bias[:, 0, 0, :])  # [B, L]
    lengths = (keys * torch.arange(1, L + 1)).amax(1)
    order = torch.argsort(lengths, stable=True)
    s = lengths[order].tolist()  # ascending
    cuts = [0, B]  # groups order[cuts[i]:cuts[i+1]]
    while len(cuts) - 1 < max_groups:
        _, k = max((_best_split(s, a, b) for a, b in zip(cuts, cuts[1:])), key=lambda t: t[0])
        if k is None:
            break
        cuts = sorted(cuts + [k])
    total = sum(_padded_cost(s, a, b) for a, b in zip(cuts, cuts[1:]))
    if len(cuts) == 2 or total > worth * B * L * L:
        return None
    return [(order[a:b], s[b - 1]) for a, b in zip(cuts, cuts[1:])]


class BiasedAttentionCPU(torch.autograd.Function):
    """CPU attention from the fused projection: ``qkv [B, L, 3D], bias [B, H, L, L] -> [B, L, D]``.

    out = (softmax(q k^T / sqrt(d) + bias) * m / (1 - p)) v per head, m the dropout mask.
    Written out (not left to autograd) to pick operand layouts that MKL's batched GEMM runs
    fast for d = 10 (a transposed right operand costs ~2x, ``baddbmm`` with it ~3x), to skip
    autograd's unbind/stack copies of q, k, v, and to reuse one mask pass forward and back.
    A batch of very unequal graphs is attended in groups of similar length
    (:func:`length_groups`); tokens past a group's length are padding and get 0.
    """

    @staticmethod
    def forward(ctx, qkv: Tensor, bias: Tensor, heads: int, p: float) -> Tensor:
        groups = length_groups(bias) if p == 0 else None  # (one dropout mask stream as before)
        ctx.groups, ctx.heads = groups, heads
        if groups is None:
            out, ctx.saved = _attend(qkv, bias, heads, p)
            return out
        out = qkv.new_zeros(qkv.shape[0], qkv.shape[1], qkv.shape[2] // 3)
        ctx.saved = []
        for idx, n in groups:
            out_g, saved = _attend(qkv[idx, :n], bias[idx, :, :n, :n], heads, p)
            out[idx, :n] = out_g
            ctx.saved.append(saved)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: Tensor):
        bias_grad = ctx.needs_input_grad[1]
        if ctx.groups is None:
            dqkv, dbias = _attend_backward(ctx.saved, grad, bias_grad)
            return dqkv, dbias, None, None
        B, L, D = grad.shape
        dqkv = grad.new_zeros(B, L, 3 * D)
        dbias = grad.new_zeros(B, ctx.heads, L, L) if bias_grad else None
        for (idx, n), saved in zip(ctx.groups, ctx.saved):
            dq, db = _attend_backward(saved, grad[idx, :n], bias_grad)
            dqkv[idx, :n] = dq
            if bias_grad:
                dbias[idx, :, :n, :n] = db
        return dqkv, dbias, None, None


def biased_attention(qkv: Tensor, bias: Tensor, heads: int, p: float = 0.0,
                     impl: str = "auto") -> Tensor:
    """Per head softmax(q k^T / sqrt(d) + bias) v with dropout p on the probabilities.

    qkv [B, L, 3D] (Q, K, V blocks, heads contiguous within each), bias [B, H, L, L]
    (-inf on padded keys); returns [B, L, D]. ``impl`` is one of ``ATTENTION_IMPLS``.
    """
    if impl not in ATTENTION_IMPLS:
        raise ValueError(f"attention must be one of {ATTENTION_IMPLS}, got {impl!r}")
    B, L, D3 = qkv.shape
    d = D3 // (3 * heads)
    if impl == "auto":
        impl = "math" if qkv.device.type == "cpu" else "sdpa"
    if impl == "math" and qkv.device.type == "cpu":
        return BiasedAttentionCPU.apply(qkv, bias, heads, p)
    q, k, v = qkv.view(B, L, 3, heads, d).permute(2, 0, 3, 1, 4).unbind(0)
    if impl == "sdpa":
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p)
    else:  # math on other devices: autograd, F.dropout
        scores = q @ k.transpose(-1, -2) / math.sqrt(d) + bias
        out = F.dropout(scores.softmax(-1), p) @ v
    return out.transpose(1, 2).reshape(B, L, -1)  # [B, L, D]


def fast_linear(x: Tensor, layer: nn.Linear) -> Tensor:
    """``layer(x)`` as a matmul plus an in-place bias add: on CPU, ``addmm`` with a broadcast
    bias (what ``F.linear`` calls) made the Graphormer training step ~8% slower for
    [B*L, 80] inputs."""
    return F.linear(x, layer.weight).add_(layer.bias)


class MultiheadAttention(nn.Module):
    r"""Multi-head self-attention with an optional additive bias and key padding mask.

    .. math::
        \mathrm{MHA}(X) = \big\Vert_{h=1}^{H} \mathrm{softmax}\!\left(
        \frac{Q_h K_h^\top}{\sqrt{d}} + A_h + M\right) V_h \; W_O + b_O

    with :math:`[Q, K, V] = X W_{QKV} + b_{QKV}` (one fused projection ``qkv``, heads
    contiguous within each of Q, K, V), :math:`d = D / H`, an optional bias
    :math:`A \in \mathbb{R}^{B \times H \times L \times L}` (Graphormer's spatial and edge
    encodings, `Ying et al. 2021 <https://arxiv.org/abs/2106.05234>`_) and
    :math:`M_{ij} = -\infty` on padded keys (`Vaswani et al. 2017
    <https://arxiv.org/abs/1706.03762>`_). Dropout with probability ``dropout`` acts on the
    attention probabilities in training.

    Args:
        dim: width D; divisible by ``heads``.
        heads: number of heads H.
        dropout: attention-probability dropout.
        impl: one of ``ATTENTION_IMPLS`` for the biased path (see module doc).

    Shapes:
        ``forward(x [B, L, D], bias [B, H, L, L] | None, key_padding_mask bool [B, L] | None)
        -> [B, L, D]``; True in ``key_padding_mask`` = padding. With ``packing``
        (:class:`~graphnorm.nn.packing.TokenPacking`) x and the output are packed
        ``[B + T, D]``: the projections skip the padding, attention runs padded.
    """

    def __init__(self, dim: int, heads: int, dropout: float = 0.0, impl: str = "auto"):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} is not divisible by heads {heads}")
        if impl not in ATTENTION_IMPLS:
            raise ValueError(f"attention must be one of {ATTENTION_IMPLS}, got {impl!r}")
        self.heads, self.dropout, self.impl = heads, dropout, impl
        self.qkv = nn.Linear(dim, 3 * dim)  # one matmul for Q, K, V
        self.out = nn.Linear(dim, dim)

    def forward(self, x: Tensor, bias: Tensor | None = None,
                key_padding_mask: Tensor | None = None,
                packing: TokenPacking | None = None) -> Tensor:
        p = self.dropout if self.training else 0.0
        qkv = fast_linear(x, self.qkv)
        if packing is not None:  # x packed [B + T, D]: attention reads the padded layout
            qkv = packing.unpack(qkv)
        if bias is None:
            B, L, D = qkv.shape[0], qkv.shape[1], x.shape[-1]
            q, k, v = qkv.view(B, L, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
            # boolean SDPA masks mean "may attend"; [B, 1, 1, L] broadcasts over heads, queries
            mask = None if key_padding_mask is None else ~key_padding_mask[:, None, None, :]
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            y = y.transpose(1, 2).reshape(B, L, D)
        else:
            if key_padding_mask is not None:  # callers whose bias already masks pads pass None
                bias = bias.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
            y = biased_attention(qkv, bias, self.heads, p, self.impl)
        return fast_linear(y if packing is None else packing.pack(y), self.out)

    def extra_repr(self) -> str:
        return f"heads={self.heads}, dropout={self.dropout}, impl={self.impl!r}"
