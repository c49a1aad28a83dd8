"""Graphormer's structural encodings as small composable modules.

Ying et al. 2021, "Do Transformers Really Perform Bad for Graph Representation?",
https://arxiv.org/abs/2106.05234 (Sec. 3.1, Eq. 5-7). With L = N + 1 tokens ([VNode] at 0):

- node input       h_i = sum_f E_atom[x_if] + E_deg[deg(i)]                         (Eq. 5)
- attention bias   A_ij = b_phi(i,j) + c_ij        for atoms i, j                   (Eq. 6)
                   A_0j = A_i0 = t (one learned scalar per head, "virtual distance";
                   assembled by :mod:`graphnorm.graph.attention_bias`)
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
        # the width named: -1 is ambiguous for no rows (a batch without bonds: CH4, salts)
        return out.view(*idx.shape[:-1], out.shape[-1])


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
    """Per-head bias ``b_phi(i,j) = w[bucket(spd_ij)]`` (Eq. 6).

    Ying et al. 2021, https://arxiv.org/abs/2106.05234. Buckets: ``min(spd, max_dist)``
    for 0..max_dist, ``max_dist + 1`` for unreachable pairs (salts, mixtures) and
    ``max_dist + 2`` for padding pairs (a zero row: those entries are masked or unused, so
    it never receives a gradient).
    """

    def __init__(self, max_dist: int, heads: int):
        super().__init__()
        self.max_dist = max_dist
        self.num_buckets = max_dist + 3
        self.embedding = nn.Embedding(self.num_buckets, heads, padding_idx=max_dist + 2)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _normal_embedding(self.embedding)

    def buckets(self, spd: Tensor) -> Tensor:
        """long [B, N, N] distances (collate codes) -> bucket ids [B, N, N]."""
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

    Because ``e_k`` is a mean of embedding rows, ``c_ij = sum_{k,v} a_ij[k, v] (E[v] W_k)``
    with ``a_ij[k, v] = 1 / (n F)`` when hop k's edge has feature value v (F features per
    edge): a sparse pair descriptor (``pair_columns``) times a small table (``hop_table``,
    [K * V, H]). ``AttentionBias`` uses that form; ``forward`` is the direct formula.
    """

    def __init__(self, feature_dims: Sequence[int], heads: int, max_hops: int):
        super().__init__()
        self.heads, self.max_hops = heads, max_hops
        self.edge_embedding = _MultiFeatureEmbedding(feature_dims, heads, mode="mean")
        self.num_values = sum(self.edge_embedding.feature_dims)  # V
        self.hop_weight = nn.Parameter(torch.empty(max_hops, heads, heads))  # [K, H, H]
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.edge_embedding.reset_parameters()
        # Graphormer v1 stores W_k in an nn.Embedding, hence N(0, 0.02) too
        nn.init.normal_(self.hop_weight, std=0.02)

    def hops(self, path: Tensor) -> int:
        return min(path.shape[-1], self.max_hops)

    def hop_table(self, K: int) -> Tensor:
        """``E[v] W_k`` for all hops and feature values: [K * V, H] (row k * V + v)."""
        emb = self.edge_embedding.embedding.weight[1:]  # [V, H], without the padding row
        return torch.matmul(emb.unsqueeze(0), self.hop_weight[:K]).reshape(-1, self.heads)

    def pair_columns(
        self, edge_attr: Tensor, path: Tensor, spd: Tensor, start: int = 0, none: int = -1
    ) -> tuple[Tensor, Tensor]:
        """Rows of ``hop_table`` (shifted by ``start``) per pair, hop and feature, long
        [..., K * F] (``none`` where a hop has no edge), and the weight ``1 / (n F)`` they all
        share, [..., 1]; pairs in any layout: path [..., K'], spd [...]."""
        K, V, Fe = self.hops(path), self.num_values, edge_attr.shape[-1]
        base = edge_attr - 1 + self.edge_embedding.offsets  # [E, F] value index in [0, V)
        hop = torch.arange(K, device=path.device).view(K, 1, 1)  # [K, 1, 1]
        table = F.pad(base + (hop * V + start), (0, 0, 0, 1), value=none)  # [K, E + 1, F]
        cols = table[hop.view(K), path[..., :K]]  # [..., K, F]; id -1 -> row E (none)
        vals = 1.0 / (spd.clamp(min=1, max=K) * Fe).to(torch.float32).unsqueeze(-1)
        return cols.flatten(-2), vals

    def forward(self, edge_attr: Tensor, path: Tensor, spd: Tensor) -> Tensor:
        """edge_attr [E, F], path [B, N, N, K'] (-1 none), spd [B, N, N] -> [B, N, N, H]."""
        K = self.hops(path)
        e = self.edge_embedding(edge_attr)  # [E, H]   e_k of every edge
        per_hop = torch.matmul(e.unsqueeze(0), self.hop_weight[:K])  # [K, E, H]
        per_hop = F.pad(per_hop, (0, 0, 0, 1))  # row E of each hop: zeros for "no edge"
        ids = path[..., :K] % per_hop.shape[1]  # [B, N, N, K]; -1 -> E
        hop = torch.arange(K, device=path.device)
        summed = per_hop[hop, ids].sum(-2)  # [B, N, N, H]
        return summed / spd.clamp(min=1, max=K).unsqueeze(-1)


class FingerprintEncoder(nn.Linear):
    """A molecule's fingerprint bits [B, bits] -> one vector [B, D] for its global token:
    ``W dropout_p(f) + b``. Dropping bits (each kept bit scaled by 1 / (1 - p), as in
    Srivastava et al. 2014, https://jmlr.org/papers/v15/srivastava14a.html) regularizes the
    projection: 2048 bits nearly name each training molecule. (On MolHIV, p = 0.5 left the
    Graphormer's test score unchanged: README, Results.) A ``Linear`` subclass, so checkpoints
    keep the keys ``fingerprint.weight`` / ``fingerprint.bias``."""

    def __init__(self, bits: int, dim: int, dropout: float = 0.0):
        super().__init__(bits, dim)
        self.dropout = dropout

    def forward(self, batch: GraphBatch) -> Tensor:
        bits = batch.fingerprints(self.in_features)  # a clear error when the batch has none
        return super().forward(F.dropout(bits, self.dropout, self.training))

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, dropout={self.dropout}"


class DescriptorEncoder(nn.Module):
    """A molecule's RDKit descriptors [B, C] -> one vector [B, D]:
    ``GELU(W clip((d - mu) / sigma, -6, 6) + b)``, with ``mu``, ``sigma`` the training split's
    per-descriptor mean and std (`fit_scaling`; buffers, so checkpoints carry them), as
    Chemprop standardizes its ``rdkit_2d_normalized`` features (Yang et al. 2019,
    https://doi.org/10.1021/acs.jcim.9b00237). Clipping keeps a new molecule far outside the
    training range from dominating the head; the GELU lets the head combine descriptors
    non-linearly."""

    def __init__(self, count: int, dim: int):
        super().__init__()
        self.count = count
        self.register_buffer("mean", torch.zeros(count))
        self.register_buffer("std", torch.ones(count))
        self.proj = nn.Linear(count, dim)

    def reset_parameters(self, std: float = 0.02) -> None:
        nn.init.normal_(self.proj.weight, std=std)
        nn.init.zeros_(self.proj.bias)

    @torch.no_grad()
    def fit_scaling(self, values: Tensor) -> None:
        """Mean and std of ``values`` [N, C] (the training molecules); a descriptor constant
        there gets std 1, so it adds a constant the bias absorbs."""
        values = values.double()
        std = values.std(0) if len(values) > 1 else torch.ones(self.count, dtype=values.dtype)
        self.mean.copy_(values.mean(0).float())
        self.std.copy_(torch.where(std > 1e-6, std, torch.ones_like(std)).float())

    def forward(self, batch: GraphBatch) -> Tensor:
        d = batch.descriptor_values(self.count)  # a clear error when the batch has none
        z = ((d - self.mean) / self.std).clamp(-6.0, 6.0)
        return F.gelu(self.proj(z))
