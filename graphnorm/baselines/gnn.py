"""Message-passing baselines from PyG layers: GINE and GIN with a virtual node.

- ``gine``: Hu et al. 2020, "Strategies for Pre-training Graph Neural Networks",
  https://arxiv.org/abs/1905.12265 (PyG ``GINEConv``): per layer
  ``h' = BN(MLP((1 + eps) h_i + sum_j ReLU(h_j + E_bond[e_ji])))``, ReLU and dropout between
  layers, then ``global_add_pool`` (or mean) and a linear head -- the layout of OGB's
  ``examples/graphproppred/mol/gnn.py``.
- ``gin-vn``: the same plus OGB's virtual node (Gilmer et al. 2017,
  https://arxiv.org/abs/1704.01212; OGB leaderboard "GIN-virtual"): before every layer each
  atom adds its graph's virtual-node state, which is then updated by an MLP of
  ``global_add_pool(h) + vn``. OGB's "GIN" convolution adds bond embeddings to messages, i.e.
  it is PyG's ``GINEConv``; so is this one.

Both read the same padded :class:`~graphnorm.graph.GraphBatch` as the Graphormer (atoms taken
in PyG's sparse order via ``node_mask``), so data, training, checkpoints, ``predict`` and
``benchmark`` are shared.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch_geometric.nn import GINEConv, global_add_pool, global_mean_pool

from graphnorm.graph.collate import GraphBatch
from graphnorm.graph.config_io import ConfigIO, check_dropouts
from graphnorm.graph.encodings import (AtomEncoder, DescriptorEncoder, FingerprintEncoder,
                                      _MultiFeatureEmbedding)
from graphnorm.chem.config import ZINC_ATOM_DIMS, ZINC_BOND_DIMS
from graphnorm.graph.graphormer import GraphEmbeddings

GNN_KINDS = ("gine", "gin-vn")
POOLS = {"sum": global_add_pool, "mean": global_mean_pool}


@dataclass
class GNNConfig(ConfigIO):
    kind: str = "gine"  # one of GNN_KINDS
    num_layers: int = 4
    hidden: int = 150
    dropout: float = 0.0
    pool: str = "sum"  # "sum" | "mean"
    atom_feature_dims: tuple = ZINC_ATOM_DIMS
    edge_feature_dims: tuple = ZINC_BOND_DIMS
    num_tasks: int = 1
    fingerprint_bits: int = 0  # the featurizer's: gin-vn's virtual node starts from them
    fingerprint_dropout: float = 0.0  # on those bits (see FingerprintEncoder)
    descriptors: int = 0  # the featurizer's: RDKit descriptors beside the pooled atoms at the head

    def __post_init__(self):
        if self.kind not in GNN_KINDS:
            raise ValueError(f"kind must be one of {GNN_KINDS}, got {self.kind!r}")
        if self.fingerprint_bits and self.kind != "gin-vn":
            raise ValueError(f"fingerprints enter a GNN through its virtual node: {self.kind} "
                             "has none, use gin-vn (or featurize with fingerprint_bits 0)")
        check_dropouts(self)
        if self.pool not in POOLS:
            raise ValueError(f"pool must be one of {tuple(POOLS)}, got {self.pool!r}")
        self.atom_feature_dims = tuple(int(d) for d in self.atom_feature_dims)
        self.edge_feature_dims = tuple(int(d) for d in self.edge_feature_dims)


def _mlp(d_in: int, d_hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.BatchNorm1d(d_hidden), nn.ReLU(),
                         nn.Linear(d_hidden, d_out))


class GNN(nn.Module):
    """GINE / GIN-VN over a padded batch: ``forward(batch) -> [B, num_tasks]``."""

    def __init__(self, config: GNNConfig):
        super().__init__()
        self.config = cfg = config
        D = cfg.hidden
        self.atom_encoder = AtomEncoder(cfg.atom_feature_dims, D)
        self.bond_encoders = nn.ModuleList(
            _MultiFeatureEmbedding(cfg.edge_feature_dims, D, mode="sum") for _ in range(cfg.num_layers))
        self.convs = nn.ModuleList(GINEConv(_mlp(D, 2 * D, D), train_eps=True)
                                   for _ in range(cfg.num_layers))
        self.norms = nn.ModuleList(nn.BatchNorm1d(D) for _ in range(cfg.num_layers))
        self.virtual = self.fingerprint = None
        if cfg.kind == "gin-vn":
            self.virtual = nn.Embedding(1, D)
            if cfg.fingerprint_bits:
                self.fingerprint = FingerprintEncoder(cfg.fingerprint_bits, D, cfg.fingerprint_dropout)
            self.virtual_mlps = nn.ModuleList(
                nn.Sequential(_mlp(D, 2 * D, D), nn.BatchNorm1d(D), nn.ReLU())
                for _ in range(cfg.num_layers - 1))
        # Chemprop's place for molecule features: beside the pooled graph, at the head
        self.descriptors = DescriptorEncoder(cfg.descriptors, D) if cfg.descriptors else None
        self.head = nn.Linear(D * (2 if cfg.descriptors else 1), cfg.num_tasks)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for m in self.modules():
            if m is not self and hasattr(m, "reset_parameters"):
                m.reset_parameters()
        if self.virtual is not None:
            nn.init.zeros_(self.virtual.weight)  # OGB: the virtual node starts at 0

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def _nodes(self, batch: GraphBatch) -> tuple[Tensor, Tensor]:
        """Final atom states [sum N, D] and the graph id of each atom."""
        mask = batch.node_mask
        graph_of = mask.nonzero()[:, 0]  # PyG's `batch` vector
        h = self.atom_encoder(batch.x[mask])
        vn = None
        if self.virtual is not None:
            vn = self.virtual.weight.expand(batch.num_graphs, -1)
            if self.fingerprint is not None:
                vn = vn + self.fingerprint(batch)
        p = self.config.dropout
        last = self.config.num_layers - 1
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            if vn is not None:
                h = h + vn[graph_of]
            h_in = h
            h = norm(conv(h, batch.edge_index, self.bond_encoders[i](batch.edge_attr)))
            if i < last:
                h = torch.relu(h)
            h = nn.functional.dropout(h, p, self.training)
            if vn is not None and i < last:
                pooled = global_add_pool(h_in, graph_of, size=batch.num_graphs) + vn
                vn = nn.functional.dropout(self.virtual_mlps[i](pooled), p, self.training)
        return h, graph_of

    def encode(self, batch: GraphBatch) -> GraphEmbeddings:
        """(pooled graph embedding [B, D], atom states padded [B, N, D], node_mask)."""
        h, graph_of = self._nodes(batch)
        pooled = POOLS[self.config.pool](h, graph_of, size=batch.num_graphs)
        tokens = h.new_zeros(*batch.node_mask.shape, h.shape[-1])
        tokens[batch.node_mask] = h
        return GraphEmbeddings(pooled, tokens, batch.node_mask)

    def forward(self, batch: GraphBatch, return_embeddings: bool = False):
        emb = self.encode(batch)
        features = emb.vnode
        if self.descriptors is not None:
            features = torch.cat([features, self.descriptors(batch)], -1)
        pred = self.head(features)
        return (pred, emb) if return_embeddings else pred


class GNNKind:
    """``gine`` / ``gin-vn`` as model kinds (entries of graphnorm.models): one GNN class, the
    variant in its config's ``kind``."""
    config_class = GNNConfig

    def __init__(self, variant: str):
        self.variant = variant

    def config(self, **fields) -> GNNConfig:
        return GNNConfig(kind=self.variant, **fields)

    def build(self, fields: dict) -> GNN:
        return GNN(GNNConfig.from_dict(dict(fields, kind=self.variant)))

    def run_fields(self, cfg) -> dict:
        """The model fields a TrainConfig ``cfg`` decides beyond the preset: the readout's
        pooling part ("vnode+mean": a GNN's pooling is "mean")."""
        pool = cfg.readout.split("+")[-1] if cfg.readout else None
        return {"pool": pool} if pool in POOLS else {}


GINE, GIN_VN = (GNNKind(v) for v in GNN_KINDS)
