"""Graphormer's attention bias ``[B, H, L, L]``: spatial and multi-hop edge encodings of the
atom pairs (:mod:`graphnorm.graph.encodings`) and the [VNode]'s virtual distance, built once
per forward and shared by all layers.

Ying et al. 2021, https://arxiv.org/abs/2106.05234 (Sec. 3.1, Eq. 6-7, "Special node").
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .collate import GraphBatch
from .encodings import EdgeEncoding, SpatialEncoding


class _OneHotTimes(torch.autograd.Function):
    """``x W`` for a tall, mostly-zero descriptor matrix x [P, C] (no gradient) and a small
    table W [C, H]. Autograd's weight gradient ``x^T g`` ran 4x slower in MKL than the same
    product taken as ``(g^T x)^T`` (21 vs 5 ms for 47k pairs, C = 89, H = 8, one thread)."""

    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        ctx.weight_dtype = weight.dtype
        return x @ weight

    @staticmethod
    def backward(ctx, grad: Tensor):
        (x,) = ctx.saved_tensors
        return None, (grad.t() @ x.to(grad.dtype)).t().to(ctx.weight_dtype)


class _DenseBias(torch.autograd.Function):
    """The [B, H, L, L] bias from the atom pairs' values [P, H] and the virtual distance t
    [H]: t on the [VNode] row and column, 0 on the other padding pairs, -inf on padding keys.
    Written by hand because autograd's in-place slices would clone the whole dense gradient
    once per write; here the backward gathers P rows and sums two slices."""

    @staticmethod
    def forward(ctx, pair_bias: Tensor, t: Tensor, pairs: Tensor, N: int, key_pad: Tensor):
        B, L, H = key_pad.shape[0], N + 1, pair_bias.shape[1]
        g, ij = pairs // (N * N), pairs % (N * N)
        i, j = ij // N + 1, ij % N + 1
        bias = pair_bias.new_zeros(B, H, L, L)  # pair_bias's dtype: bf16 under autocast
        tt = t.to(bias.dtype).view(1, H, 1)
        bias[:, :, 0, :] = tt
        bias[:, :, 1:, 0] = tt
        bias[g, :, i, j] = pair_bias
        ctx.save_for_backward(g, i, j, key_pad)
        ctx.t_dtype = t.dtype
        return bias.masked_fill_(key_pad, float("-inf"))

    @staticmethod
    def backward(ctx, grad: Tensor):
        g, i, j, key_pad = ctx.saved_tensors
        grad_pairs = grad[g, :, i, j]  # [P, H]
        row0 = grad[:, :, 0, :].masked_fill(key_pad[:, :, 0], 0)  # padding keys got -inf
        grad_t = row0.sum((0, 2)) + grad[:, :, 1:, 0].sum((0, 2))
        return grad_pairs, grad_t.to(ctx.t_dtype), None, None, None


class AttentionBias(nn.Module):
    """The additive attention bias ``[B, H, L, L]`` shared by all layers (L = N + 1).

    ``A[:, :, 1:, 1:] = b_phi + c``; row 0 and column 0 ([VNode]) get the learned virtual
    distance t (once at (0, 0)); keys that are padding get -inf. Built once per forward.
    Ying et al. 2021, https://arxiv.org/abs/2106.05234 (Sec. 3.1, "Special node").

    Both pair terms are linear in one-hot pair descriptors, so for the atom pairs of each
    graph (P pairs, padding pairs left out) the bias is ``x_p W`` with
    x_p = [onehot(bucket) | edge a_p] and W = [spatial table; hop_table]: one matmul, whose
    backward is one matmul as well. (Row gathers and scatter-adds of 8-float rows, the direct
    form, cost ~20 ns per row on CPU and dominated the step.) ``_DenseBias`` then places
    the P rows and t into [B, H, L, L]. Leaving padding pairs out matters on drug-like
    tables, where one large molecule pads its whole batch: on half_life_obach's batches the
    bias's forward and backward took 66 instead of 230 ms (B x L x L one-hot rows before).
    And the P pairs of a batch are only ~2,000 kinds (bucket, hop count, bond features of
    each hop; ``distinct_pairs``): x is built for one pair of each kind, ``x W`` gives each
    kind's row and the pairs gather theirs -- the same values, the one-hot work shrunk ~20x
    (half_life_obach: the bias's forward and backward 28 instead of 48 ms per batch,
    cost/distinct_pairs.md). Kinds are processed in chunks so that x stays below
    ``chunk_bytes``: 16 MiB keeps it under glibc's mmap threshold, so the buffer is reused
    instead of mapped and faulted in on every step (64 MiB chunks cost MolHIV steps 15 % more
    CPU: speed/malloc.md).
    """

    def __init__(
        self,
        heads: int,
        max_dist: int,
        edge_feature_dims: Sequence[int],
        max_hops: int,
        chunk_bytes: int = 16 << 20,
    ):
        super().__init__()
        self.heads, self.chunk_bytes = heads, chunk_bytes
        self.key_limit = 2 ** 62  # distinct_pairs: one int64 key per pair below this
        # pairs grouped by kind (None: on the CPU only). On an H200, eval forwards of sessions
        # 33-34's code ran ~1/3 slower than before them; the grouping's sorts and four host
        # reads per forward are the suspect, not yet timed alone (results/gpu/code_ab_h200.md)
        self.group_pairs: Optional[bool] = None
        self.spatial = SpatialEncoding(max_dist, heads)
        self.edge = EdgeEncoding(edge_feature_dims, heads, max_hops)
        self.virtual_distance = nn.Parameter(torch.empty(heads))  # [H]
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.spatial.reset_parameters()
        self.edge.reset_parameters()
        nn.init.normal_(self.virtual_distance, std=0.02)

    def forward(self, batch: GraphBatch) -> Tensor:
        N, H = batch.node_mask.shape[1], self.heads
        S = self.spatial.num_buckets
        table = self.edge.hop_table(self.edge.hops(batch.path))  # [K*V, H]
        dummy = S + table.shape[0]
        weight = torch.cat([self.spatial.embedding.weight, table, table.new_zeros(1, H)])  # [C, H]
        # only atom pairs of the same graph: a batch padded to one large molecule is mostly
        # padding pairs, whose bias is 0 (or -inf as keys) whatever the descriptors say
        mask = batch.node_mask
        pairs = (mask[:, :, None] & mask[:, None, :]).view(-1).nonzero().squeeze(1)  # [P]
        spd = batch.spd.view(-1)[pairs]
        path = batch.path.view(-1, batch.path.shape[-1])[pairs]
        # a batch's ~40,000 pairs repeat ~2,000 descriptor rows (distance, bonds on the path):
        # x is built for one pair of each kind, and the pairs read their kind's row
        kind = None
        if not spd.is_cuda if self.group_pairs is None else self.group_pairs:
            first, kind = self.distinct_pairs(batch.edge_attr, path, spd)  # [U], [P]
            spd, path = spd[first], path[first]
        e_cols, e_vals = self.edge.pair_columns(batch.edge_attr, path, spd, start=S, none=dummy)
        cols = torch.cat([self.spatial.buckets(spd).unsqueeze(1), e_cols], 1)  # [U, J]
        vals = torch.cat([e_vals.new_ones(len(spd), 1), e_vals.expand_as(e_cols)], 1)
        vals = vals.to(weight.dtype)
        C = weight.shape[0]
        step = max(1, self.chunk_bytes // (C * 4))
        parts = []
        for s in range(0, len(spd), step):  # x = [onehot(bucket) | a_ij], a chunk of kinds
            x = weight.new_zeros(min(step, len(spd) - s), C)
            x.scatter_(1, cols[s : s + step], vals[s : s + step])
            parts.append(_OneHotTimes.apply(x, weight))  # [u, H]
        kind_bias = torch.cat(parts) if len(parts) != 1 else parts[0]  # [U, H]; U >= 1 (an atom)
        pair_bias = kind_bias if kind is None else kind_bias.index_select(0, kind)  # [P, H]
        key_pad = batch.token_padding_mask[:, None, None, :]  # [B, 1, 1, L]
        return _DenseBias.apply(pair_bias, self.virtual_distance, pairs, N, key_pad)

    def distinct_pairs(self, edge_attr: Tensor, path: Tensor, spd: Tensor) -> tuple[Tensor, Tensor]:
        """Pairs of equal descriptor row (bucket, hop count n, bond features of each hop):
        the first pair of each kind [U] and each pair's kind [P]. The key packs the bucket,
        n and the bonds' kinds (distinct feature rows of the batch's edges) into one int64,
        so one 1-D ``unique`` sorts P numbers; where it would not fit, rows are compared."""
        K, S = self.edge.hops(path), self.spatial.num_buckets
        digits = [d + 1 for d in self.edge.edge_embedding.feature_dims]  # values 1..d (+1 coded)
        if math.prod(digits) < self.key_limit:  # each edge's feature row as one number
            bond = edge_attr.new_zeros(len(edge_attr))
            for column, digit in zip(edge_attr.unbind(1), digits):
                bond = bond * digit + column
            bond = torch.unique(bond, return_inverse=True)[1]  # [E] kind of bond, 0..T-1
        else:
            bond = torch.unique(edge_attr, dim=0, return_inverse=True)[1]
        radix = (int(bond.max()) + 2) if len(bond) else 1  # 0: no edge at this hop
        hops = F.pad(bond + 1, (0, 1))[path[:, :K]]  # [P, K]; id -1 -> the appended 0
        n, bucket = spd.clamp(min=1, max=K) - 1, self.spatial.buckets(spd)
        if S * K * radix ** K < self.key_limit:
            weights = radix ** torch.arange(K, device=path.device)
            kind = torch.unique(((hops * weights).sum(1) * K + n) * S + bucket, return_inverse=True)[1]
        else:  # thousands of distinct bonds: compare whole rows
            rows = torch.cat([bucket.unsqueeze(1), n.unsqueeze(1), hops], 1)
            kind = torch.unique(rows, dim=0, return_inverse=True)[1]
        order = torch.arange(len(kind), device=kind.device)
        first = order.new_full((int(kind.max()) + 1 if len(kind) else 0,), len(kind))
        return first.scatter_reduce_(0, kind, order, reduce="amin"), kind

    def reference(self, batch: GraphBatch) -> Tensor:
        """The same bias assembled term by term (slower; for tests and reading)."""
        B, N = batch.node_mask.shape
        pair = self.spatial(batch.spd) + self.edge(batch.edge_attr, batch.path, batch.spd)
        bias = pair.new_zeros(B, N + 1, N + 1, self.heads)  # [B, L, L, H]
        bias[:, 1:, 1:] = pair
        bias[:, 0, :] = self.virtual_distance
        bias[:, 1:, 0] = self.virtual_distance
        key_pad = batch.token_padding_mask[:, None, :, None]  # [B, 1, L, 1]
        bias = bias.masked_fill(key_pad, float("-inf"))
        return bias.permute(0, 3, 1, 2).contiguous()  # [B, H, L, L]
