"""Graphormer's structural encodings as small composable modules.

Ying et al. 2021, "Do Transformers Really Perform Bad for Graph Representation?",
https://arxiv.org/abs/2106.05234 (Sec. 3.1, Eq. 5-7). With L = N + 1 tokens ([VNode] at 0):

- node input       h_i = sum_f E_atom[x_if] + E_deg[deg(i)]                         (Eq. 5)
- attention bias   A_ij = b_phi(i,j) + c_ij        for atoms i, j                   (Eq. 6)
                   A_0j = A_i0 = t (one learned scalar per head, "virtual distance")
- edge term        c_ij = 1/n sum_{k<n} (mean_f E_edge[e_k,f]) W_k,   n = min(spd, K)  (Eq. 7)

All inputs follow :mod:`graphnorm.graph.collate` (features + 1, 0 = padding). Parameters are
initialized as in Graphormer v1: embeddings ~ N(0, 0.02), padding rows zero.
"""
from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .collate import SPD_PAD, SPD_UNREACHABLE, GraphBatch


def _normal_embedding(emb: nn.Embedding) -> None:
    nn.init.normal_(emb.weight, std=0.02)
    if emb.padding_idx is not None:
        with torch.no_grad():
            emb.weight[emb.padding_idx].zero_()


class _MultiFeatureEmbedding(nn.Module):
    """Several categorical features in one table, summed or averaged per row.

    Feature f with value v (given as v + 1; 0 = padding) maps to row 1 + offset_f + v with
    offset_f = sum_{g<f} size_g; row 0 is the zero padding row.
    """

    def __init__(self, feature_dims: Sequence[int], dim: int, mode: str):
        super().__init__()
        self.feature_dims = tuple(int(d) for d in feature_dims)
        offsets = torch.tensor((0,) + self.feature_dims[:-1]).cumsum(0)
        self.register_buffer("offsets", offsets, persistent=False)  # [F]
        self.embedding = nn.Embedding(sum(self.feature_dims) + 1, dim, padding_idx=0)
        self.mode = mode
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _normal_embedding(self.embedding)

    def forward(self, feats: Tensor) -> Tensor:
        """feats long [..., F] (+1 coded) -> [..., dim]."""
        idx = torch.where(feats > 0, feats + self.offsets, 0)  # [..., F]
        flat = idx.reshape(-1, idx.shape[-1])
        # embedding_bag reduces over F without materializing [..., F, dim]
        out = F.embedding_bag(flat, self.embedding.weight, mode=self.mode, padding_idx=0)
        return out.view(*idx.shape[:-1], -1)


class AtomEncoder(_MultiFeatureEmbedding):
    """``h_i = sum_f E[1 + offset_f + x_if]``; padding atoms (all features 0) give 0.

    Ying et al. 2021, https://arxiv.org/abs/2106.05234 (node features of Eq. 5).
    """

    def __init__(self, feature_dims: Sequence[int], dim: int):
        super().__init__(feature_dims, dim, mode="sum")


class CentralityEncoding(nn.Module):
    """Degree embedding ``z[min(deg_i, max_degree)]`` added to the atom embedding (Eq. 5).

    Ying et al. 2021, https://arxiv.org/abs/2106.05234. Molecules are undirected, so
    in-degree = out-degree and one table replaces Graphormer's two (z^- + z^+ with equal
    indices is itself a single learned table). Row 0 is padding; degree d uses row d + 1,
    so isolated atoms (degree 0, e.g. the ions of a salt) keep a learned embedding.
    """

    def __init__(self, max_degree: int, dim: int):
        super().__init__()
        self.max_degree = max_degree
        self.embedding = nn.Embedding(max_degree + 2, dim, padding_idx=0)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _normal_embedding(self.embedding)

    def forward(self, degree: Tensor, node_mask: Tensor) -> Tensor:
        """degree long [B, N], node_mask bool [B, N] -> [B, N, dim]."""
        idx = torch.where(node_mask, degree.clamp(max=self.max_degree) + 1, 0)
        return self.embedding(idx)


class SpatialEncoding(nn.Module):
    """Per-head bias ``b_phi(i,j)`` indexed by the shortest-path distance bucket (Eq. 6).

    Ying et al. 2021, https://arxiv.org/abs/2106.05234. Buckets: ``min(spd, max_dist)``
    for 0..max_dist, ``max_dist + 1`` for unreachable pairs (salts, mixtures) and
    ``max_dist + 2`` for padding pairs (a zero padding row: those entries are masked anyway).
    """

    def __init__(self, max_dist: int, heads: int):
        super().__init__()
        self.max_dist = max_dist
        self.embedding = nn.Embedding(max_dist + 3, heads, padding_idx=max_dist + 2)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _normal_embedding(self.embedding)

    def buckets(self, spd: Tensor) -> Tensor:
        b = spd.clamp(max=self.max_dist)
        b = torch.where(spd == SPD_UNREACHABLE, self.max_dist + 1, b)
        return torch.where(spd == SPD_PAD, self.max_dist + 2, b)

    def forward(self, spd: Tensor) -> Tensor:
        """spd long [B, N, N] -> [B, N, N, H]."""
        return self.embedding(self.buckets(spd))


class EdgeEncoding(nn.Module):
    """Multi-hop edge encoding ``c_ij = 1/n sum_{k<n} e_k W_k`` along a shortest path (Eq. 7).

    Ying et al. 2021, https://arxiv.org/abs/2106.05234. ``e_k`` is the mean of the feature
    embeddings of the k-th edge on the stored shortest path i -> j, ``W_k`` a learned H x H
    matrix per hop, ``n = min(spd_ij, K)`` with K = hops used. Unreachable, self and padding
    pairs have no path and get 0.

    Cost: ``e_k W_k`` is computed per *edge* ([K, E, H]); the (pair, hop) entries that
    have an edge are gathered from that table and scatter-added per pair. Gather and
    scatter-add are each other's backward, so no [B, N, N, K, H] tensor and no sort
    (``embedding_bag``'s dense backward sorts all indices) is needed.
    """

    def __init__(self, feature_dims: Sequence[int], heads: int, max_hops: int):
        super().__init__()
        self.heads, self.max_hops = heads, max_hops
        self.edge_embedding = _MultiFeatureEmbedding(feature_dims, heads, mode="mean")
        self.hop_weight = nn.Parameter(torch.empty(max_hops, heads, heads))  # [K, H, H]
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.edge_embedding.reset_parameters()
        # Graphormer v1 stores W_k in an nn.Embedding, hence N(0, 0.02) too
        nn.init.normal_(self.hop_weight, std=0.02)

    def forward(self, edge_attr: Tensor, path: Tensor, spd: Tensor) -> Tensor:
        """edge_attr [E, Fe], path [B, N, N, K'] (-1 none), spd [B, N, N] -> [B, N, N, H]."""
        K = min(path.shape[-1], self.max_hops)
        E, H = edge_attr.shape[0], self.heads
        e = self.edge_embedding(edge_attr)  # [E, H]
        table = torch.matmul(e.unsqueeze(0), self.hop_weight[:K]).reshape(K * E, H)  # [K*E, H]
        hops = path[..., :K].reshape(-1)  # [P*K], P = B*N*N pairs
        entry = (hops >= 0).nonzero().squeeze(1)  # [M] (pair, hop) entries with an edge
        rows = hops[entry] + (entry % K) * E  # [M] row of hop k's edge in `table`
        summed = torch.zeros(spd.numel(), H, dtype=table.dtype, device=table.device)
        summed = summed.index_add(0, entry // K, table.index_select(0, rows))  # [P, H]
        n_hops = spd.clamp(min=1, max=K).unsqueeze(-1)  # [B, N, N, 1]
        return summed.view(*spd.shape, H) / n_hops


class AttentionBias(nn.Module):
    """The additive attention bias ``[B, H, L, L]`` shared by all layers (L = N + 1).

    ``A[:, :, 1:, 1:] = b_phi + c``; row 0 and column 0 ([VNode]) get the learned virtual
    distance t (once at (0, 0)); keys that are padding get -inf. Built once per forward.
    Ying et al. 2021, https://arxiv.org/abs/2106.05234 (Sec. 3.1, "Special node").
    """

    def __init__(
        self,
        heads: int,
        max_dist: int,
        edge_feature_dims: Sequence[int],
        max_hops: int,
        use_edges: bool = True,
    ):
        super().__init__()
        self.heads = heads
        self.spatial = SpatialEncoding(max_dist, heads)
        self.edge = EdgeEncoding(edge_feature_dims, heads, max_hops) if use_edges else None
        self.virtual_distance = nn.Parameter(torch.empty(heads))  # [H]
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.spatial.reset_parameters()
        if self.edge is not None:
            self.edge.reset_parameters()
        nn.init.normal_(self.virtual_distance, std=0.02)

    def forward(self, batch: GraphBatch) -> Tensor:
        B, N = batch.node_mask.shape
        pair = self.spatial(batch.spd)  # [B, N, N, H]
        if self.edge is not None:
            pair = pair + self.edge(batch.edge_attr, batch.path, batch.spd)
        t = self.virtual_distance
        # assemble in [B, L, L, H] (the layout the embeddings come in), permute once at the end
        row0 = t.expand(B, 1, N + 1, self.heads)  # [B, 1, L, H]
        col0 = t.expand(B, N, 1, self.heads)  # [B, N, 1, H]
        bias = torch.cat([row0, torch.cat([col0, pair], dim=2)], dim=1)  # [B, L, L, H]
        key_pad = batch.token_padding_mask[:, None, :, None]  # [B, 1, L, 1]
        bias = bias.masked_fill(key_pad, float("-inf"))
        return bias.permute(0, 3, 1, 2).contiguous()  # [B, H, L, L]
