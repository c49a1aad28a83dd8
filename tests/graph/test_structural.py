"""Random-walk PE, the GINE local branch and the readouts (graphnorm.graph.structural)."""
import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.transforms import AddRandomWalkPE

from graphnorm.graph import Graphormer, GraphormerConfig, collate_graphs
from graphnorm.nn.packing import TokenPacking
from graphnorm.chem import smiles_to_data
from torch_geometric.nn import GINEConv

from graphnorm.graph.structural import (GINE, LocalGINE, RandomWalkCollate, padded_adjacency,
                                        random_walk_pe)

# a macrocycle (12-ring), fused rings, a salt (isolated ion), a chain
MOLS = ["C1CCCCCCCCCCC1", "c1ccc2ccccc2c1", "C[NH3+].[O-]C(C)=O", "CCOCC(=O)N"]


@pytest.fixture(scope="module")
def graphs():
    return [smiles_to_data(s, vocab="zinc") for s in MOLS]


def test_edge_index_is_pyg_numbering(graphs):
    b = collate_graphs(graphs)
    offsets = torch.tensor([0] + [g.num_nodes for g in graphs]).cumsum(0)
    ref = torch.cat([g.edge_index + offsets[i] for i, g in enumerate(graphs)], 1)
    assert torch.equal(b.edge_index, ref)
    adj = padded_adjacency(b)
    assert adj.sum() == b.edge_index.shape[1]
    assert adj[0, 0, 1] == 1 and adj[0, 0, 11] == 1 and adj[0, 0, 5] == 0  # ring closure


def test_random_walk_pe_equals_pyg(graphs):
    K = 14
    pe = random_walk_pe(collate_graphs(graphs), K)
    b = collate_graphs(graphs)
    for i, g in enumerate(graphs):
        ref = AddRandomWalkPE(walk_length=K, attr_name="pe")(
            Data(edge_index=g.edge_index, num_nodes=g.num_nodes)).pe
        n = g.num_nodes
        torch.testing.assert_close(pe[i, :n], ref, atol=1e-6, rtol=0)
        assert pe[i, n:].abs().sum() == 0  # padding rows
    # the 12-ring shows itself at step 12 and not before, at even steps only
    ring = pe[0, 0]
    assert ring[11] > 0 and ring[10] == 0 and ring[9] > 0
    assert b.node_mask[0].sum() == 12


def test_the_loader_computes_each_molecules_pe_once_and_the_model_reads_it(graphs):
    collate = RandomWalkCollate(14, max_graphs=3)
    b = collate(graphs)
    torch.testing.assert_close(b.rwpe, random_walk_pe(b, 14), atol=1e-6, rtol=0)
    assert b.rwpe[~b.node_mask].abs().sum() == 0
    assert sorted(collate.memo) == sorted(MOLS[:3])  # kept up to max_graphs molecules
    ring = collate.memo[MOLS[0]]
    again = collate(graphs[::-1])  # another order: the kept values, placed by molecule
    assert again.rwpe[3, :12].data_ptr() != ring.data_ptr() and torch.equal(again.rwpe[3, :12], ring)
    torch.manual_seed(0)
    model = Graphormer(GraphormerConfig(num_layers=2, hidden=16, ffn_hidden=16, heads=4,
                                        rwpe_steps=14)).eval()
    with torch.no_grad():
        plain = collate_graphs(graphs)
        assert plain.rwpe is None
        torch.testing.assert_close(model(b), model(plain), atol=1e-5, rtol=0)
        kept = b.rwpe
        b.rwpe = kept + 1.0  # it reads the batch's values, it does not compute its own
        assert not torch.allclose(model(b), model(plain), atol=1e-3)
        b.rwpe = kept[..., :8]  # another length than the model's: it computes its own
        torch.testing.assert_close(model(b), model(plain), atol=1e-5, rtol=0)


def test_local_gine_matches_sparse_pyg(graphs):
    torch.manual_seed(0)
    b = collate_graphs(graphs)
    local = LocalGINE((3,), 8)
    h = torch.randn(b.num_graphs, b.max_nodes + 1, 8)
    out = local(h, b)
    nodes = h[:, 1:][b.node_mask]
    ref = local.conv(nodes, b.edge_index, local.bond_encoder(b.edge_attr))
    assert torch.equal(out[:, 1:][b.node_mask], ref)
    assert out[:, 0].abs().sum() == 0 and out[:, 1:][~b.node_mask].abs().sum() == 0
    # a message really flows along bonds: changing one atom changes its neighbour only
    h2 = h.clone()
    h2[3, 1] += 1.0  # atom 0 of the chain CCOCC(=O)N (bonded to atom 1 only)
    diff = (local(h2, b) - out).abs().sum(-1)[3, 1:]
    assert diff[1] > 0 and diff[3] == 0


def _mlp(dim):
    return torch.nn.Sequential(torch.nn.Linear(dim, dim), torch.nn.ReLU(),
                               torch.nn.Linear(dim, dim))


def test_gine_is_pygs_gineconv(graphs):
    # the same draws from the same seed, the same state dict keys, the same output and
    # gradients: checkpoints trained with PyG's class load and predict unchanged
    torch.manual_seed(3)
    ours = GINE(_mlp(8))
    torch.manual_seed(3)
    pyg = GINEConv(_mlp(8), train_eps=True)
    assert ours.state_dict().keys() == pyg.state_dict().keys()
    for key, value in pyg.state_dict().items():
        assert torch.equal(ours.state_dict()[key], value), key
    with torch.no_grad():
        pyg.eps.fill_(0.3)  # a trained eps, so the (1 + eps) x_i term is exercised
    ours.load_state_dict(pyg.state_dict())
    b = collate_graphs(graphs)
    x = torch.randn(int(b.node_mask.sum()), 8, requires_grad=True)
    e = torch.randn(b.edge_index.shape[1], 8)
    out, ref = ours(x, b.edge_index, e), pyg(x, b.edge_index, e)
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-6)
    g_ours, = torch.autograd.grad(out.square().sum(), x)
    g_pyg, = torch.autograd.grad(ref.square().sum(), x)
    torch.testing.assert_close(g_ours, g_pyg, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="width 4"):
        ours(x, b.edge_index, e[:, :4])


def test_gine_branch_runs_under_bf16_autocast(graphs):
    # mixed precision (a GPU's bf16 autocast; the CPU's here): the branch's output keeps the
    # dtype its convolution computed in, instead of failing to write bf16 into an fp32 buffer
    torch.manual_seed(0)
    model = Graphormer(GraphormerConfig(num_layers=2, hidden=16, ffn_hidden=16, heads=4,
                                        dropout=0.0, attention_dropout=0.0, local_mp="gine",
                                        readout="vnode+sum", rwpe_steps=4))
    batch = collate_graphs(graphs)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(batch)
    out.float().sum().backward()
    assert out.shape == (4, 1) and torch.isfinite(out.float()).all()
    model.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        low = model(batch).float()
    with torch.no_grad():
        reference = model(batch)
    torch.testing.assert_close(low, reference, atol=0.05, rtol=0.05)  # bf16: ~3 digits


@pytest.mark.parametrize("opts", [
    dict(readout="sum"), dict(readout="vnode+mean"), dict(rwpe_steps=8),
    dict(local_mp="gine", readout="vnode+sum", rwpe_steps=4, norm="sep:bn+ln"),
])
def test_options_train_and_ignore_padding(graphs, opts):
    torch.manual_seed(0)
    model = Graphormer(GraphormerConfig(num_layers=2, hidden=16, ffn_hidden=16, heads=4,
                                        dropout=0.0, attention_dropout=0.0, **opts))
    batch = collate_graphs(graphs)
    out = model(batch)
    out.sum().backward()
    assert out.shape == (4, 1) and torch.isfinite(out).all()
    model.eval()
    with torch.no_grad():
        together = model(collate_graphs(graphs))
        alone = torch.cat([model(collate_graphs([g])) for g in graphs])
    torch.testing.assert_close(together, alone, atol=1e-5, rtol=0)


def test_sum_readout_grows_with_size():
    """The head of a sum readout sees the sum of atom tokens: a molecule repeated twice as a
    disconnected pair gets (before the head's bias) twice the signal of one copy."""
    torch.manual_seed(0)
    model = Graphormer(GraphormerConfig(num_layers=1, hidden=16, ffn_hidden=16, heads=4,
                                        readout="sum", norm="ln")).eval()
    h = torch.randn(2, 4, 16)
    mask = torch.tensor([[True, True, False], [True, True, True]])
    packing = TokenPacking(torch.cat([torch.zeros(2, 1, dtype=torch.bool), ~mask], 1))
    r = model.readout(packing.pack(h), packing)
    torch.testing.assert_close(r[0], h[0, 1:3].sum(0))
    torch.testing.assert_close(r[1], h[1, 1:].sum(0))


def test_bad_options_list_valid_values():
    with pytest.raises(ValueError, match="readout must be one of"):
        GraphormerConfig(readout="max")
    with pytest.raises(ValueError, match="local_mp must be one of"):
        GraphormerConfig(local_mp="gat")
