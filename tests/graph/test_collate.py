"""Padded batches (graphnorm.graph.collate), Contract 3 of docs/design.md."""
import pytest
import torch
from torch_geometric.data import Data

from graphnorm.graph import (SPD_PAD, SPD_UNREACHABLE, GraphBatch, LengthBucketSampler,
                             collate_graphs)
from graphnorm.chem import smiles_to_data

SMILES = ["CCO", "c1ccoc1C(=O)N", "C[NH3+].[O-]C", "C"]  # a salt, a single atom


@pytest.fixture(scope="module")
def graphs():
    return [smiles_to_data(s, vocab="zinc") for s in SMILES]


def test_shapes_and_padding(graphs):
    b = collate_graphs(graphs)
    n = [g.num_nodes for g in graphs]
    N, B, K = max(n), len(graphs), graphs[0].path.shape[1]
    assert isinstance(b, GraphBatch) and b.num_graphs == B and b.max_nodes == N
    assert b.x.shape == (B, N, 1) and b.x.dtype == torch.long
    assert b.degree.shape == (B, N) and b.spd.shape == (B, N, N)
    assert b.path.shape == (B, N, N, K) and b.node_mask.dtype == torch.bool
    assert b.edge_attr.shape == (sum(g.edge_index.shape[1] for g in graphs), 1)
    assert b.num_nodes.tolist() == n and b.smiles == SMILES and b.y is None
    for i, g in enumerate(graphs):
        k = n[i]
        assert torch.equal(b.x[i, :k], g.x + 1) and (b.x[i, k:] == 0).all()
        assert b.node_mask[i, :k].all() and not b.node_mask[i, k:].any()
        assert torch.equal(b.spd[i, :k, :k], g.spd.view(k, k).long())
        assert (b.spd[i, k:] == SPD_PAD).all() and (b.spd[i, :, k:] == SPD_PAD).all()
        deg = torch.bincount(g.edge_index[0], minlength=k)
        assert torch.equal(b.degree[i, :k], deg) and (b.degree[i, k:] == 0).all()
        assert (b.path[i, k:] == -1).all() and (b.path[i, :, k:] == -1).all()
    # token padding mask: [VNode] first, never padding
    pad = b.token_padding_mask
    assert pad.shape == (B, N + 1) and not pad[:, 0].any()
    assert torch.equal(pad[:, 1:], ~b.node_mask)


def test_salt_is_unreachable_not_padding(graphs):
    b = collate_graphs(graphs)
    salt = b.spd[2, :4, :4]
    assert salt.tolist() == [[0, 1, 255, 255], [1, 0, 255, 255], [255, 255, 0, 1], [255, 255, 1, 0]]
    assert SPD_UNREACHABLE == 255 and (b.path[2, :2, 2:] == -1).all()
    assert b.degree[2, :4].tolist() == [1, 1, 1, 1] and b.degree[3, 0] == 0


def test_path_ids_are_batch_global(graphs):
    b = collate_graphs(graphs)
    offset = 0
    for i, g in enumerate(graphs):
        k = g.num_nodes
        local = g.path.view(k, k, -1).long()
        glob = b.path[i, :k, :k]
        valid = local >= 0
        assert torch.equal(glob >= 0, valid)
        assert torch.equal(glob[valid] - offset, local[valid])
        # the edge features reached through a global id are this graph's features + 1
        assert torch.equal(b.edge_attr[glob[valid]], g.edge_attr[local[valid]] + 1)
        offset += g.edge_index.shape[1]


def test_predict_path_records_batch_as_pyg_data():
    # the predict path batches MoleculeGraph records (no PyG import), the cached sets PyG
    # Data: the same molecules must give the same padded batch, field by field
    from graphnorm.chem import FeaturizerConfig, featurize_many, graph_data

    config = FeaturizerConfig(vocab="zinc", descriptors="fast", fingerprint_bits=64)
    result = featurize_many(SMILES, config)
    records = [graph_data(a, s) for a, s in zip(result.graphs, SMILES)]
    assert records[0].to_pyg().num_nodes == 3 and "num_nodes=3" in repr(records[0])
    ours, pyg = collate_graphs(records), collate_graphs([r.to_pyg() for r in records])
    for name, value in vars(pyg).items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(getattr(ours, name), value), name
        else:
            assert getattr(ours, name) == value, name
    assert ours.descriptors is not None and ours.smiles == SMILES


def test_hand_built_graph_and_targets():
    # path 0 - 1 - 2 with edges (0->1, 1->0, 1->2, 2->1); hand-written distances and paths
    g = Data(
        x=torch.tensor([[3], [4], [5]]), edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
        edge_attr=torch.tensor([[0], [0], [2], [2]]),
        spd=torch.tensor([0, 1, 2, 1, 0, 1, 2, 1, 0], dtype=torch.uint8),
        path=torch.full((9, 2), -1, dtype=torch.int16), num_nodes=3, y=torch.tensor([[1.0, 2.0]]),
    )
    g.path[1, 0], g.path[2, 0], g.path[2, 1] = 0, 0, 2  # 0->1, 0->2 = (0->1, 1->2)
    h = Data(x=torch.tensor([[1]]), edge_index=torch.zeros(2, 0, dtype=torch.long),
             edge_attr=torch.zeros(0, 1, dtype=torch.long), spd=torch.zeros(1, dtype=torch.uint8),
             path=torch.full((1, 2), -1, dtype=torch.int16), num_nodes=1,
             y=torch.tensor([3.0, 4.0]))
    b = collate_graphs([h, g])  # the edge-less graph first: offsets for g stay 0
    assert b.y.tolist() == [[3.0, 4.0], [1.0, 2.0]] and b.y.dtype == torch.float32
    assert b.path[1, 0, 2].tolist() == [0, 2] and b.path[1, 0, 1].tolist() == [0, -1]
    assert b.degree.tolist() == [[0, 0, 0], [1, 2, 1]]
    assert b.edge_attr[:, 0].tolist() == [1, 1, 3, 3]
    moved = b.to("cpu")
    assert moved.num_graphs == 2 and torch.equal(moved.path, b.path)


def test_length_bucket_sampler():
    gen = torch.Generator().manual_seed(0)
    lengths = torch.randint(5, 60, (1000,), generator=gen).tolist()
    s = LengthBucketSampler(lengths, batch_size=32, seed=1, pool_batches=8)
    s.set_epoch(0)
    e0 = list(s)
    assert len(e0) == len(s) == 32
    flat = sorted(i for b in e0 for i in b)
    assert flat == list(range(1000))  # every graph exactly once
    s.set_epoch(0)
    assert list(s) == e0  # seeded
    s.set_epoch(1)
    assert list(s) != e0  # reshuffled per epoch

    def waste(batches):  # padded slots (max length per batch) over real nodes
        return sum(len(b) * max(lengths[i] for i in b) for b in batches) / sum(lengths)

    rand = torch.randperm(1000, generator=gen).view(-1, 40).tolist()  # batches of 40 (not 32)
    assert waste(e0) < 0.75 * waste(rand)
    dl = LengthBucketSampler(lengths, batch_size=32, drop_last=True)
    assert len(dl) == 31 and all(len(b) == 32 for b in dl)
    ordered = list(LengthBucketSampler(lengths, batch_size=100, shuffle=False))
    assert [lengths[i] for b in ordered for i in b] == sorted(lengths)
    auto = LengthBucketSampler(lengths, batch_size=32)
    assert list(auto) != list(auto)  # without set_epoch the epoch advances by itself


def test_bucket_sampler_shards_global_batches_across_ranks():
    from graphnorm.graph import LengthBucketSampler

    sizes = torch.randint(5, 40, (203,)).tolist()
    world, bs = 3, 8
    per_rank = [list(LengthBucketSampler(sizes, bs, seed=4, num_replicas=world, rank=r))
                for r in range(world)]
    assert len({len(p) for p in per_rank}) == 1 == len({len(LengthBucketSampler(sizes, bs, num_replicas=world))})
    assert len(per_rank[0]) == len(LengthBucketSampler(sizes, bs, num_replicas=world)) == 9
    seen, spreads = [], []
    for step in zip(*per_rank):
        assert len({len(b) for b in step}) == 1 and all(len(b) <= bs for b in step)
        together = [i for b in step for i in b]
        spreads.append(max(sizes[i] for i in together) - min(sizes[i] for i in together))
        seen += together
    # each step is one size-sorted global batch (random batches of 24 here spread ~30)
    assert sum(spreads) / len(spreads) < 10
    assert set(seen) == set(range(203)) and len(seen) - 203 < world  # padding only at the end
    with pytest.raises(ValueError, match="rank"):
        LengthBucketSampler(sizes, bs, num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="bucket_pool"):
        LengthBucketSampler(sizes, bs, pool_batches=0)
