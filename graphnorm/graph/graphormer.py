"""Graphormer (v1, pre-norm) with configurable token norms, e.g. SepNorm on the [VNode].

Ying et al. 2021, "Do Transformers Really Perform Bad for Graph Representation?",
https://arxiv.org/abs/2106.05234; norms from Chen et al. 2023, "On Separate Normalization
in Self-supervised Transformers", https://arxiv.org/abs/2309.12931.

With h^0 = [vnode; AtomEncoder(x) + CentralityEncoding(deg)] (L = N + 1 tokens) and the
attention bias A built once (``AttentionBias``), every block computes

    h' = h + Drop(MHA(Norm_attn(h); A)),   MHA = softmax(Q K^T / sqrt(d) + A) V
    h  = h' + Drop(FFN(Norm_ffn(h'))),     FFN = W_2 GELU(W_1 x)

and the prediction is ``head(Norm_final(h)[:, 0])``. A fingerprint ``f`` (optional) enters as
``W_f f + b_f``, added to the [VNode] before the first block or, with ``fingerprint_at="head"``,
concatenated to the head's input, so that no norm of the [VNode] sees it; RDKit descriptors
``d`` (optional) enter the same way as ``GELU(W_d z(d) + b_d)``, ``z`` the training split's
standardization (`DescriptorEncoder`), at the head by default. Every norm is a
``build_norm`` spec called with the token padding mask (position 0 = [VNode], never padding).
Blocks, the stack and the constant-[VNode] rule are the shared core
(:class:`graphnorm.nn.TransformerEncoder`); this module adds the embeddings, the attention
bias, the GINE branch and the readout.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor, nn

from ..chem.config import ZINC_ATOM_DIMS, ZINC_BOND_DIMS, FeaturizerConfig, vocab_dims
from ..nn import ATTENTION_IMPLS, TransformerBlock, TransformerEncoder
from ..nn.packing import TokenPacking
from .collate import GraphBatch
from .config_io import ConfigIO, check_dropouts
from .attention_bias import AttentionBias
from .encodings import AtomEncoder, CentralityEncoding, DescriptorEncoder, FingerprintEncoder
from .options import FINGERPRINT_AT, LOCAL_MP, READOUTS, SEP_SLOTS
from .structural import LocalGINE, RandomWalkEncoding



@dataclass
class GraphormerConfig(ConfigIO):
    # the defaults are Graphormer-slim (Ying et al. 2021, ZINC): 12 layers, hidden 80, FFN 80
    num_layers: int = 12
    hidden: int = 80
    ffn_hidden: int = 80
    heads: int = 8
    dropout: float = 0.1  # after attention and after the FFN (v1)
    attention_dropout: float = 0.1  # on the attention probabilities
    input_dropout: float = 0.0  # on the token embeddings
    norm: str = "ln"  # spec for the slots chosen by sep_slots
    sep_slots: str = "all"  # "all" | "final" | "blocks": where `norm` goes
    other_norm: str = "ln"  # spec of the remaining slots
    atom_feature_dims: tuple = ZINC_ATOM_DIMS
    edge_feature_dims: tuple = ZINC_BOND_DIMS
    max_degree: int = 16
    max_dist: int = FeaturizerConfig.max_dist  # the featurizer's: sizes the distance buckets
    max_hops: int = FeaturizerConfig.max_hops  # the featurizer's: one hop matrix each
    num_tasks: int = 1
    attention: str = "auto"  # "auto" | "sdpa" | "math", see nn.attention
    readout: str = "vnode"  # one of READOUTS
    rwpe_steps: int = 0  # random-walk PE of this many steps added to atom tokens (0 = off)
    local_mp: str = "none"  # one of LOCAL_MP
    fingerprint_bits: int = 0  # the featurizer's: a Linear of the Morgan bits (see fingerprint_at)
    fingerprint_dropout: float = 0.0  # on those bits (see FingerprintEncoder)
    fingerprint_at: str = "vnode"  # one of FINGERPRINT_AT: the [VNode], or the head's input
    descriptors: int = 0  # the featurizer's: RDKit descriptors per molecule (DescriptorEncoder)
    descriptors_at: str = "head"  # one of FINGERPRINT_AT, as for the fingerprint

    def __post_init__(self):
        for name, value, valid in (("readout", self.readout, READOUTS),
                                   ("local_mp", self.local_mp, LOCAL_MP),
                                   ("fingerprint_at", self.fingerprint_at, FINGERPRINT_AT),
                                   ("descriptors_at", self.descriptors_at, FINGERPRINT_AT)):
            if value not in valid:
                raise ValueError(f"{name} must be one of {valid}, got {value!r}")
        if self.sep_slots not in SEP_SLOTS:
            raise ValueError(f"sep_slots must be one of {SEP_SLOTS}, got {self.sep_slots!r}")
        if self.attention not in ATTENTION_IMPLS:
            raise ValueError(f"attention must be one of {ATTENTION_IMPLS}, got {self.attention!r}")
        check_dropouts(self)
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be divisible by heads ({self.heads})")
        self.atom_feature_dims = tuple(int(d) for d in self.atom_feature_dims)
        self.edge_feature_dims = tuple(int(d) for d in self.edge_feature_dims)

    def slot_norm(self, slot: str) -> str:
        """Norm spec of a slot: "attn" / "ffn" (every block) or "final". The first block's
        attention norm, which sees the constant [VNode], is adjusted by the encoder stack."""
        chosen = {"all": True, "final": slot == "final", "blocks": slot != "final"}[self.sep_slots]
        return self.norm if chosen else self.other_norm


class GraphEmbeddings(NamedTuple):
    vnode: Tensor  # [B, D]   final-norm output at position 0
    tokens: Tensor  # [B, N, D]   final-norm output of the atoms (padding rows arbitrary)
    node_mask: Tensor  # bool [B, N]   True = real atom


GraphormerBlock = TransformerBlock  # the block of ``Graphormer.transformer`` (old name)


class Graphormer(nn.Module):
    """Graphormer with a [VNode] readout: ``forward(batch) -> [B, num_tasks]``."""

    def __init__(self, config: GraphormerConfig):
        super().__init__()
        self.config = cfg = config
        D = cfg.hidden
        self.atom_encoder = AtomEncoder(cfg.atom_feature_dims, D)
        self.degree_encoder = CentralityEncoding(cfg.max_degree, D)
        self.vnode = nn.Parameter(torch.empty(1, 1, D))  # [VNode] ("graph token")
        self.attn_bias = AttentionBias(cfg.heads, cfg.max_dist, cfg.edge_feature_dims, cfg.max_hops)
        local = (lambda i: LocalGINE(cfg.edge_feature_dims, D)) if cfg.local_mp == "gine" else None
        self.transformer = TransformerEncoder(
            D, cfg.num_layers, cfg.heads, cfg.ffn_hidden, norm=cfg.slot_norm("attn"),
            final_norm=cfg.slot_norm("final"), dropout=cfg.dropout,
            attention_dropout=cfg.attention_dropout, input_dropout=cfg.input_dropout,
            local=local, attention=cfg.attention, init_std=0.02 / math.sqrt(cfg.num_layers))
        self.rwpe = RandomWalkEncoding(cfg.rwpe_steps, D) if cfg.rwpe_steps > 0 else None
        # molecule-level input at the global token: the [VNode] starts from the learned vector
        # plus a projection of the molecule's fingerprint (no longer the same for every graph)
        self.fingerprint = (FingerprintEncoder(cfg.fingerprint_bits, D, cfg.fingerprint_dropout)
                            if cfg.fingerprint_bits else None)
        self.descriptors = DescriptorEncoder(cfg.descriptors, D) if cfg.descriptors else None
        # the projected bits / descriptors beside the readout when they enter at the head
        width = D * (2 if "+" in cfg.readout else 1)
        width += D if self._fingerprint_enters("head") else 0
        width += D if self._descriptors_enter("head") else 0
        self.head = nn.Linear(width, cfg.num_tasks)
        self.reset_parameters()

    def _fingerprint_enters(self, where: str) -> bool:
        """Whether the model has a fingerprint and it enters at ``where`` ("vnode" | "head")."""
        return self.fingerprint is not None and self.config.fingerprint_at == where

    def _descriptors_enter(self, where: str) -> bool:
        return self.descriptors is not None and self.config.descriptors_at == where

    def reset_parameters(self) -> None:
        """Graphormer v1 init: Linear ~ N(0, 0.02 / sqrt(layers)), bias 0; embeddings N(0, 0.02)."""
        std = 0.02 / math.sqrt(self.config.num_layers)
        for m in (self.atom_encoder, self.degree_encoder, self.attn_bias, self.rwpe,
                  self.transformer):
            if m is not None:
                m.reset_parameters()
        for lin in (self.head, self.fingerprint):
            if lin is not None:
                nn.init.normal_(lin.weight, std=std)
                nn.init.zeros_(lin.bias)
        if self.descriptors is not None:
            self.descriptors.reset_parameters(std)
        nn.init.normal_(self.vnode, std=0.02)

    @property
    def blocks(self) -> nn.ModuleList:
        return self.transformer.blocks

    @property
    def final_norm(self) -> nn.Module:
        return self.transformer.final_norm

    def num_parameters(self, trainable: bool = True) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not trainable)

    def _tokens(self, batch: GraphBatch) -> tuple[Tensor, TokenPacking]:
        """Final-norm token states, packed: ``[B + T, D]``, the B [VNode]s first, then the
        T real atoms in PyG's order (``graphnorm.nn.packing``: the token-wise work skips the
        padding that one large molecule gives its whole batch), and their packing."""
        bias = self.attn_bias(batch)  # [B, H, L, L], -inf on padded keys, shared by all blocks
        mask = batch.node_mask
        packing = TokenPacking(batch.token_padding_mask)
        nodes = self.atom_encoder(batch.x[mask]) + self.degree_encoder(batch.degree[mask], mask[mask])
        if self.rwpe is not None:
            nodes = nodes + self.rwpe(batch, packed=True)
        special = self.vnode  # [1, 1, D], or [B, 1, D] with the molecules' fingerprints
        if self._fingerprint_enters("vnode"):
            special = special + self.fingerprint(batch).unsqueeze(1)
        if self._descriptors_enter("vnode"):
            special = special + self.descriptors(batch).unsqueeze(1)
        h = self.transformer(nodes, special=special, bias=bias, local_input=batch, packing=packing)
        return h, packing

    def readout(self, h: Tensor, packing: TokenPacking) -> Tensor:
        """The head's input from packed final-norm tokens h [B + T, D]: [B, D] or [B, 2D]."""
        mode, B = self.config.readout, packing.specials
        parts = [h[:B]] if mode.startswith("vnode") else []
        if mode.endswith("sum") or mode.endswith("mean"):
            atoms = packing.token_sum(h)
            if mode.endswith("mean"):
                atoms = atoms / packing.lengths().clamp(min=1).unsqueeze(1).to(atoms.dtype)
            parts.append(atoms)
        return parts[0] if len(parts) == 1 else torch.cat(parts, -1)

    @staticmethod
    def _embeddings(h: Tensor, packing: TokenPacking, node_mask: Tensor) -> GraphEmbeddings:
        return GraphEmbeddings(h[:packing.specials], packing.unpack(h)[:, 1:], node_mask)

    def encode(self, batch: GraphBatch) -> GraphEmbeddings:
        """Embeddings after the final norm: ([VNode] [B, D], atoms [B, N, D], node_mask)."""
        return self._embeddings(*self._tokens(batch), batch.node_mask)

    def forward(self, batch: GraphBatch, return_embeddings: bool = False):
        """Predictions [B, num_tasks]; with ``return_embeddings`` also :class:`GraphEmbeddings`."""
        h, packing = self._tokens(batch)
        features = self.readout(h, packing)
        if self._fingerprint_enters("head"):
            features = torch.cat([features, self.fingerprint(batch)], -1)
        if self._descriptors_enter("head"):
            features = torch.cat([features, self.descriptors(batch)], -1)
        pred = self.head(features)  # [B, T]
        if return_embeddings:
            return pred, self._embeddings(h, packing, batch.node_mask)
        return pred


def graphormer_slim(num_tasks: int = 1, vocab: str = "zinc", **overrides) -> Graphormer:
    """Graphormer-slim of the paper's ZINC experiment: 12 layers, hidden 80, FFN 80, 8 heads.

    Dropout 0.1 after attention and FFN, attention dropout 0.1, no input dropout, as in the
    v1 ZINC script. Parameters with the ZINC vocab: 475,025, 2.9% below the paper's 489.3K
    (v1's code counts 489,481). The 12 blocks (470,400), final LayerNorm (160), head (81),
    [VNode] (80) and virtual distance (8) match v1 exactly; the embedding tables differ:
    v1 sizes them generously for ZINC (atoms 64x80, in- and out-degree 64x80 each, edges
    64x8, 40 distances x 8, 40 hops x 8x8: 18,752), here they follow the vocabulary (atoms
    29x80, one degree table 18x80 -- in = out for molecules --, bonds 4x8, 23 distance
    buckets x 8, 5 hops x 8x8: 4,296). v1's ZINC script follows paths up to 20 hops; pass
    ``max_hops=20`` (and featurize with ``max_hops=20``) for that (+960 parameters). The OGB
    vocab has a 175-row atom table and 14 bond rows (486,785 parameters).
    """
    atom_dims, bond_dims = vocab_dims(vocab)
    # GraphormerConfig's defaults are slim (the "slim" preset of graphnorm.models)
    kw = dict(atom_feature_dims=atom_dims, edge_feature_dims=bond_dims, num_tasks=num_tasks)
    kw.update(overrides)
    return Graphormer(GraphormerConfig(**kw))
