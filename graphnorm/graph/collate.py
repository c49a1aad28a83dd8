"""Padded dense batches of featurized molecules (design.md, Contract 3).

``collate_graphs`` turns a list of PyG ``Data`` (Contract 2) into a :class:`GraphBatch` padded
to the largest graph of the batch. Everything is gathered with a few vectorized scatters over
the concatenated per-graph tensors; the only Python loop reads the attributes of each graph.

Index conventions (shared with :mod:`graphnorm.graph.encodings`):

- ``x``/``edge_attr``: categorical features + 1, so 0 is free for padding.
- ``spd``: shortest-path distance as featurized (capped at the featurizer's ``max_dist``),
  ``SPD_UNREACHABLE`` (255) for pairs in different fragments, ``SPD_PAD`` (256) for pairs
  that involve a padding node.
- ``path``: ids into the batch's concatenated ``edge_attr`` (graph ``b``'s local ids shifted
  by the number of edges of graphs ``< b``); -1 = no edge at this hop.

``LengthBucketSampler`` groups graphs of similar size into a batch to cut padding: with
``N_max`` the largest graph of a batch, the padded work per layer grows like ``B * N_max^2``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

import torch
from torch import Tensor
from torch.utils.data import Sampler

SPD_UNREACHABLE = 255  # the featurizer's code for "different connected component"
SPD_PAD = 256  # pairs with at least one padding node; outside the uint8 range on purpose


@dataclass
class GraphBatch:
    """A padded batch of B graphs with at most N nodes (K = hops stored per path)."""

    x: Tensor  # long [B, N, F]   atom features + 1, 0 = padding
    degree: Tensor  # long [B, N]   node degree, 0 for padding
    spd: Tensor  # long [B, N, N]   distance | SPD_UNREACHABLE | SPD_PAD
    path: Tensor  # long [B, N, N, K]   batch-global ids into edge_attr, -1 = none
    edge_attr: Tensor  # long [E_total, Fe]   bond features + 1
    node_mask: Tensor  # bool [B, N]   True = real atom
    y: Optional[Tensor] = None  # float [B, T]
    # long [2, E_total]: bonds in PyG's sparse numbering (atoms of graph 0, then graph 1, ...,
    # i.e. the order of ``h[node_mask]``), for message passing and structural encodings
    edge_index: Optional[Tensor] = None
    num_nodes: Optional[Tensor] = None  # long [B]
    smiles: Optional[list] = None
    fingerprint: Optional[Tensor] = None  # float [B, bits] of 0/1, when featurized with them
    descriptors: Optional[Tensor] = None  # float [B, D] RDKit descriptors (chem/descriptors.py)
    # float [B, N, K] random-walk PE, where the loader computed it (structural.RandomWalkCollate)
    rwpe: Optional[Tensor] = None

    @property
    def num_graphs(self) -> int:
        return self.x.shape[0]

    @property
    def max_nodes(self) -> int:
        return self.x.shape[1]

    @property
    def token_padding_mask(self) -> Tensor:
        """bool [B, N + 1], True = padding; position 0 is the [VNode] and never padding."""
        vnode = self.node_mask.new_zeros(self.num_graphs, 1)
        return torch.cat([vnode, ~self.node_mask], dim=1)

    def fingerprints(self, bits: int) -> Tensor:
        """float [B, bits]; a clear error when the batch was featurized without them or with
        another size (a model trained with fingerprints needs the same featurizer)."""
        if self.fingerprint is None or self.fingerprint.shape[-1] != bits:
            got = "none" if self.fingerprint is None else f"{self.fingerprint.shape[-1]} bits"
            raise ValueError(f"the model takes Morgan fingerprints of {bits} bits, the batch has "
                             f"{got}: featurize with FeaturizerConfig(fingerprint_bits={bits})")
        return self.fingerprint

    def descriptor_values(self, width: int) -> Tensor:
        """The molecules' descriptors [B, width]; a clear error when the batch has none or
        another width (another featurizer, or an RDKit with another descriptor list)."""
        if self.descriptors is None or self.descriptors.shape[-1] != width:
            got = "none" if self.descriptors is None else f"{self.descriptors.shape[-1]}"
            raise ValueError(f"the model takes {width} RDKit descriptors per molecule, the batch "
                             f"has {got}: featurize with FeaturizerConfig(descriptors=True) and "
                             f"the RDKit version the model was trained with")
        return self.descriptors

    def _apply(self, fn) -> "GraphBatch":
        changes = {
            f.name: fn(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if isinstance(getattr(self, f.name), Tensor)
        }
        return dataclasses.replace(self, **changes)

    def to(self, device, non_blocking: bool = False) -> "GraphBatch":
        return self._apply(lambda t: t.to(device, non_blocking=non_blocking))

    def pin_memory(self) -> "GraphBatch":  # used by DataLoader(pin_memory=True)
        return self._apply(lambda t: t.pin_memory())

    def __len__(self) -> int:
        return self.num_graphs


def _offsets(counts: Tensor) -> Tensor:
    """Exclusive cumulative sum: start of each block in the concatenation."""
    return torch.cumsum(counts, 0) - counts


def _segment_ids(counts: Tensor) -> tuple[Tensor, Tensor]:
    """For blocks of the given sizes: block id and position inside the block of each entry."""
    ids = torch.repeat_interleave(torch.arange(counts.numel()), counts)
    pos = torch.arange(ids.numel()) - _offsets(counts)[ids]
    return ids, pos


def unpack_bits(packed: Tensor) -> Tensor:
    """uint8 [B, n] of 8 bits each (``np.packbits`` order, first bit highest) -> float [B, 8n]
    of 0/1: the stored fingerprints as the model reads them."""
    shifts = torch.arange(7, -1, -1, dtype=torch.uint8)
    return ((packed.unsqueeze(-1) >> shifts) & 1).flatten(1).float()


def collate_graphs(graphs: Sequence) -> GraphBatch:
    """Pad a list of featurized molecules (Contract 2) into a :class:`GraphBatch`."""
    if len(graphs) == 0:
        raise ValueError("collate_graphs needs at least one graph")
    B = len(graphs)
    xs, eis, eas, spds, paths, ys = [], [], [], [], [], []
    for g in graphs:  # attribute reads only; all arithmetic below is batched
        xs.append(g.x)
        eis.append(g.edge_index)
        eas.append(g.edge_attr)
        spds.append(g.spd)
        paths.append(g.path)
        ys.append(getattr(g, "y", None))
    n = torch.tensor([x.shape[0] for x in xs])  # [B]
    m = torch.tensor([e.shape[1] for e in eis])  # [B] directed edges per graph
    N = int(n.max())
    K = paths[0].shape[-1]

    # nodes: features, mask, degree
    node_graph, node_pos = _segment_ids(n)  # [sumN]
    node_flat = node_graph * N + node_pos  # row in the [B*N] padded layout
    x_cat = torch.cat(xs).long()  # [sumN, F]
    x = x_cat.new_zeros(B * N, x_cat.shape[1])
    x[node_flat] = x_cat + 1
    node_mask = torch.zeros(B * N, dtype=torch.bool)
    node_mask[node_flat] = True

    edge_graph = torch.repeat_interleave(torch.arange(B), m)  # [E_total]
    edge_index = torch.cat(eis, dim=1).long() + _offsets(n)[edge_graph]  # [2, E_total]
    src = edge_index[0]  # global source node
    deg = torch.bincount(src, minlength=int(n.sum()))  # undirected: out-degree = degree
    degree = torch.zeros(B * N, dtype=torch.long)
    degree[node_flat] = deg

    # pairs: distances and paths, scattered from the row-major [n_b * n_b] blocks
    pair_graph, pair_pos = _segment_ids(n * n)  # [sum n_b^2]
    nb = n[pair_graph]
    pair_flat = pair_graph * (N * N) + (pair_pos // nb) * N + pair_pos % nb
    spd = torch.full((B * N * N,), SPD_PAD, dtype=torch.long)
    spd[pair_flat] = torch.cat(spds).long()
    p = torch.cat(paths).long()  # [sum n_b^2, K] local edge ids
    p = torch.where(p >= 0, p + _offsets(m)[pair_graph].unsqueeze(1), -1)
    path = torch.full((B * N * N, K), -1, dtype=torch.long)
    path[pair_flat] = p

    ea = torch.cat(eas).long() + 1  # [E_total, Fe]
    y = None
    if all(t is not None for t in ys):
        y = torch.cat([t.reshape(1, -1) for t in ys]).float()  # [B, T]
    smiles = [getattr(g, "smiles", None) for g in graphs]
    fps = [getattr(g, "fingerprint", None) for g in graphs]
    fingerprint = unpack_bits(torch.cat(fps)) if all(f is not None for f in fps) else None
    descs = [getattr(g, "descriptors", None) for g in graphs]
    descriptors = torch.cat(descs).float() if all(d is not None for d in descs) else None
    return GraphBatch(
        x=x.view(B, N, -1),
        degree=degree.view(B, N),
        spd=spd.view(B, N, N),
        path=path.view(B, N, N, K),
        edge_attr=ea,
        node_mask=node_mask.view(B, N),
        y=y,
        num_nodes=n,
        edge_index=edge_index,
        smiles=smiles if any(s is not None for s in smiles) else None,
        fingerprint=fingerprint,
        descriptors=descriptors,
    )


class LengthBucketSampler(Sampler):
    """Batch sampler that puts graphs of similar size into the same batch.

    Each epoch: shuffle all indices (seeded by ``seed + epoch``), cut them into pools of
    ``batch_size * pool_batches`` graphs, sort each pool by size, cut it into batches and
    shuffle the order of all batches. Batches stay random across epochs while the padding
    inside a batch shrinks to the size spread within a pool. Without ``shuffle`` all
    graphs are sorted by size once (smallest padding, deterministic order for evaluation).

    Call ``set_epoch`` each epoch (Lightning does for batch samplers); otherwise the epoch
    counter advances by itself at every new iteration. ``skip``: the next iteration leaves out
    its first ``skip`` batches (a run resumed mid-epoch has trained them); ``len`` is the
    whole epoch's, as Lightning counts the skipped batches as done.

    Distributed (``num_replicas`` > 1): every rank draws the same global batches of
    ``batch_size * num_replicas`` graphs (same seed) and takes every ``num_replicas``-th
    graph from position ``rank``, so all ranks see similar sizes at each step and the same
    number of steps; a short last global batch is padded by repeating its first graphs, as
    ``DistributedSampler`` pads the dataset.
    """

    def __init__(
        self,
        lengths: Sequence[int] | Tensor,
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
        pool_batches: int = 50,
        num_replicas: int = 1,
        rank: int = 0,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if pool_batches < 1:
            raise ValueError(f"pool_batches (bucket_pool) must be >= 1, got {pool_batches}")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank must be in [0, num_replicas={num_replicas}), got {rank}")
        self.lengths = torch.as_tensor(lengths, dtype=torch.long)
        self.num_replicas, self.rank = num_replicas, rank
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed
        self.drop_last, self.pool_batches = drop_last, pool_batches
        self.epoch, self._epoch_set, self.skip = 0, False, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch, self._epoch_set = epoch, True

    def __len__(self) -> int:
        n, bs = len(self.lengths), self.batch_size * self.num_replicas
        return n // bs if self.drop_last else -(-n // bs)

    def __iter__(self) -> Iterator[list[int]]:
        n, bs, world = len(self.lengths), self.batch_size * self.num_replicas, self.num_replicas
        gen = torch.Generator().manual_seed(self.seed + self.epoch)
        if self.shuffle:
            order, pool = torch.randperm(n, generator=gen), bs * self.pool_batches
        else:
            order, pool = torch.arange(n), max(n, 1)
        batches = []
        for start in range(0, n, pool):
            idx = order[start : start + pool]
            idx = idx[torch.argsort(self.lengths[idx], stable=True)]
            batches.extend(idx[s : s + bs] for s in range(0, len(idx), bs))
        if self.drop_last:
            batches = [b for b in batches if len(b) == bs]
        if self.shuffle:
            batches = [batches[i] for i in torch.randperm(len(batches), generator=gen)]
        if not self._epoch_set:
            self.epoch += 1
        batches, self.skip = batches[self.skip:], 0
        for b in batches:
            if world > 1:
                short = -len(b) % world
                b = torch.cat([b, b.repeat(short // len(b) + 1)[:short]])[self.rank :: world]
            yield b.tolist()
