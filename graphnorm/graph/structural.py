"""Structural encodings and local message passing added to the Graphormer's atom tokens.

- ``random_walk_pe``: the random-walk positional encoding of Dwivedi et al. 2022, "Graph
  Neural Networks with Learnable Structural and Positional Representations",
  https://arxiv.org/abs/2110.07875: ``pe_i = [P_ii, (P^2)_ii, ..., (P^K)_ii]`` with
  ``P = D^-1 A``. It equals PyG's ``AddRandomWalkPE`` (tested against it). The training
  loader computes it once per molecule (``RandomWalkCollate``); elsewhere (predict, serve) the
  model computes it per padded batch with K small batched matmuls, so cached datasets and old
  checkpoints need no new field. A ring of size k returns a walk after k steps, so
  the PE tells ring sizes apart -- which penalized logP needs (it subtracts ~3.5 per ring
  atom beyond 6) and which neither the atom features nor shortest paths show directly.
- ``LocalGINE``: a GraphGPS-style local branch (Rampášek et al. 2022, "Recipe for a General,
  Powerful, Scalable Graph Transformer", https://arxiv.org/abs/2205.12454): a GINE
  convolution (Hu et al. 2020, https://arxiv.org/abs/1905.12265) on the real bonds, run on
  the atom tokens beside the biased attention of the same block. ``GINE`` is PyG's
  ``GINEConv(mlp, train_eps=True)`` -- same parameters, names, initialisation draws and
  output (tested against it) -- written out in torch because importing PyG costs ~3 s, a
  third of a one-molecule ``graphnorm admet`` call, whose shipped model has this branch.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .collate import GraphBatch, collate_graphs
from .encodings import _MultiFeatureEmbedding


def padded_adjacency(batch: GraphBatch) -> Tensor:
    """float [B, N, N] with 1 for every bond (both directions), from ``batch.edge_index``."""
    B, N = batch.node_mask.shape
    pos = batch.node_mask.reshape(-1).nonzero().squeeze(1)  # sparse id -> padded flat id
    src, dst = pos[batch.edge_index[0]], pos[batch.edge_index[1]]
    adj = torch.zeros(B * N, N, device=pos.device)
    adj[src, dst % N] = 1.0
    return adj.view(B, N, N)


def walk_returns(adj: Tensor, steps: int) -> Tensor:
    """``[P_ii, (P^2)_ii, ..., (P^K)_ii]`` for adjacency ``adj`` [..., n, n], P = D^-1 A:
    float [..., n, steps]."""
    # isolated atoms (salt ions) get a zero row, as in PyG
    walk = adj / adj.sum(-1, keepdim=True).clamp(min=1)
    power, out = walk, []
    for k in range(steps):
        out.append(power.diagonal(dim1=-2, dim2=-1))
        if k + 1 < steps:
            power = power @ walk
    return torch.stack(out, -1)


@torch.no_grad()
def random_walk_pe(batch: GraphBatch, steps: int) -> Tensor:
    """Return probabilities of 1..``steps``-step random walks, float [B, N, steps] (padding 0)."""
    return walk_returns(padded_adjacency(batch), steps)


def graph_random_walk_pe(edge_index: Tensor, num_nodes: int, steps: int) -> Tensor:
    """:func:`random_walk_pe` of one graph, float [num_nodes, steps] (on its own n x n matrix,
    not padded to a batch's largest graph)."""
    adj = torch.zeros(num_nodes, num_nodes)
    adj[edge_index[0], edge_index[1]] = 1.0
    return walk_returns(adj, steps)


class RandomWalkCollate:
    """``collate_graphs`` that also fills ``batch.rwpe`` [B, N, steps], each molecule's PE
    computed once per process and kept by its SMILES (up to ``max_graphs`` molecules): the
    training loader sees each molecule every epoch, and the padded per-batch computation of
    :class:`RandomWalkEncoding` (16 [B, N, N] products per step) was ~6 % of a small TDC
    table's training CPU. A loader without it (predict, serve) leaves ``rwpe`` None and the
    model computes the same values itself."""

    def __init__(self, steps: int, max_graphs: int = 50_000):
        self.steps, self.max_graphs, self.memo = steps, max_graphs, {}

    def _pe(self, graph) -> Tensor:
        key = getattr(graph, "smiles", None)
        pe = self.memo.get(key) if key is not None else None
        if pe is None:
            pe = graph_random_walk_pe(graph.edge_index, graph.num_nodes, self.steps)
            if key is not None and len(self.memo) < self.max_graphs:
                self.memo[key] = pe
        return pe

    def __call__(self, graphs) -> GraphBatch:
        batch = collate_graphs(graphs)
        B, N = batch.node_mask.shape
        rwpe = torch.zeros(B * N, self.steps)
        rwpe[batch.node_mask.reshape(-1)] = torch.cat([self._pe(g) for g in graphs])
        batch.rwpe = rwpe.view(B, N, self.steps)
        return batch


class RandomWalkEncoding(nn.Module):
    """``Linear(pe_i)`` added to atom i's token, pe = :func:`random_walk_pe` with K steps
    (``batch.rwpe`` where the loader precomputed it, :class:`RandomWalkCollate`)."""

    def __init__(self, steps: int, dim: int):
        super().__init__()
        self.steps = steps
        self.proj = nn.Linear(steps, dim)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.proj.weight, std=0.02)
        nn.init.zeros_(self.proj.bias)

    def forward(self, batch: GraphBatch, packed: bool = False) -> Tensor:
        """-> [B, N, dim], zero on padding atoms; ``packed``: [T, dim], the real atoms."""
        pe = batch.rwpe
        if pe is None or pe.shape[-1] != self.steps:
            pe = random_walk_pe(batch, self.steps)
        pe = pe.to(self.proj.weight.dtype)  # float64 models too
        if packed:
            return self.proj(pe[batch.node_mask])
        return self.proj(pe) * batch.node_mask.unsqueeze(-1)


class GINE(nn.Module):
    """``x_i' = MLP((1 + eps) x_i + sum_{j -> i} ReLU(x_j + e_ji))`` with a learnt ``eps``
    (starting at 0): PyG's ``GINEConv(mlp, train_eps=True)`` without ``edge_dim``, its state
    dict keys (``nn.*``, ``eps``) and its draws at construction, so checkpoints and seeds carry
    over. ``edge_index[0]`` is the source ``j``, ``edge_index[1]`` the target ``i``."""

    def __init__(self, mlp: nn.Module):
        super().__init__()
        self.nn = mlp
        self.eps = nn.Parameter(torch.empty(1))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for layer in self.nn.children():
            if hasattr(layer, "reset_parameters"):
                layer.reset_parameters()
        with torch.no_grad():
            self.eps.fill_(0.0)

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor) -> Tensor:
        if edge_attr.shape[-1] != x.shape[-1]:
            raise ValueError(f"GINE: bond features of width {edge_attr.shape[-1]} against atom "
                             f"features of width {x.shape[-1]}; they must match")
        src, dst = edge_index
        messages = (x[src] + edge_attr).relu()
        summed = messages.new_zeros(x.shape[0], messages.shape[1]).index_add_(0, dst, messages)
        return self.nn(summed + (1 + self.eps) * x)


class LocalGINE(nn.Module):
    """``GINEConv`` over the bonds of the atom tokens of a padded ``[B, 1 + N, D]`` stack (or a
    packed ``[B + T, D]`` one, ``graphnorm.nn.packing``).

    ``h_i' = MLP((1 + eps) h_i + sum_{j -> i} ReLU(h_j + E_bond[e_ji]))``; the [VNode]
    (position 0, no bonds) and padding rows get 0.
    """

    def __init__(self, edge_feature_dims, dim: int):
        super().__init__()
        self.bond_encoder = _MultiFeatureEmbedding(edge_feature_dims, dim, mode="sum")
        mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.conv = GINE(mlp)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.bond_encoder.reset_parameters()
        self.conv.reset_parameters()

    def forward(self, h: Tensor, batch: GraphBatch) -> Tensor:
        B, mask = batch.num_graphs, batch.node_mask
        packed = h.dim() == 2  # [B + T, D]: the [VNode]s, then the atoms in PyG's order
        nodes = h[B:] if packed else h[:, 1:][mask]  # [sum N, D] in PyG's sparse order
        out = self.conv(nodes, batch.edge_index, self.bond_encoder(batch.edge_attr))
        if packed:
            return torch.cat([out.new_zeros(B, out.shape[1]), out])
        full = out.new_zeros(h.shape)  # out's dtype: bf16 under autocast, where h may be fp32
        full[:, 1:][mask] = out
        return full
