"""The attention bias (graphnorm.graph.attention_bias): the fused build against the term-by-term
reference, values and gradients."""
import pytest
import torch

from graphnorm.chem import smiles_to_data
from graphnorm.graph import AttentionBias, collate_graphs

MOLS = ["CC(=O)Nc1ccc(O)cc1", "c1ccc2ccccc2c1", "CCN(CC)CCOC(=O)c1ccccc1N", "O=C1CCCN1",
        "C[NH3+].[O-]C(=O)c1ccccc1"]


@pytest.fixture(scope="module")
def graphs():
    return [smiles_to_data(s, vocab="zinc") for s in MOLS]


def assert_matches_reference(ab: AttentionBias, b) -> tuple:
    """The fused bias equals the term-by-term one: -inf at the same places, values, and the
    parameters' gradients under a random upstream gradient. Returns (fused, finite mask)."""
    ref, fused = ab.reference(b), ab(b)
    finite = torch.isfinite(ref)
    assert torch.equal(finite, torch.isfinite(fused))
    assert torch.allclose(fused[finite], ref[finite], atol=1e-5)
    g = torch.randn_like(ref).masked_fill(~finite, 0)
    ga = torch.autograd.grad((fused.masked_fill(~finite, 0) * g).sum(), list(ab.parameters()))
    gb = torch.autograd.grad((ref.masked_fill(~finite, 0) * g).sum(), list(ab.parameters()))
    for x, y in zip(ga, gb):
        assert torch.allclose(x, y, atol=1e-4)
    return fused.detach(), finite


def test_fused_bias_equals_reference(graphs):
    ab = AttentionBias(heads=4, max_dist=20, edge_feature_dims=(3,), max_hops=5)
    for p in ab.parameters():
        torch.nn.init.normal_(p)
    with torch.no_grad():
        ab.spatial.embedding.weight[-1] = 0  # the padding bucket stays zero, as in training
    b = collate_graphs(graphs)
    fused, finite = assert_matches_reference(ab, b)
    assert fused.shape == (len(graphs), 4, b.max_nodes + 1, b.max_nodes + 1)
    assert not finite[..., 0].logical_not().any()
    small = AttentionBias(4, 20, (3,), 5, chunk_bytes=1)  # one atom pair per chunk
    small.load_state_dict(ab.state_dict())
    assert torch.allclose(small(b)[finite], fused[finite])


@pytest.mark.parametrize("rows", ["key", "rows", "ungrouped"])
def test_bias_of_distinct_pair_kinds_equals_reference(rows):
    """OGB bonds (3 feature columns), a salt (unreachable pairs) and paths longer than the hops
    read: the bias built once per kind of pair is every pair's own, in the packed int64 key, in
    the row comparison used when the key would overflow, and ungrouped (a GPU's default)."""
    from graphnorm.chem.config import vocab_dims

    mols = ["CC(=O)Oc1ccccc1C(=O)O.[Na+]", "C#CC=CCN(C)C/C=C/c1ccc2ccccc2c1", "O=S(=O)(N)c1ccccc1CCCCCCCCCC",
            "[NH4+].[Cl-]", "C"]
    b = collate_graphs([smiles_to_data(s) for s in mols])
    ab = AttentionBias(4, 3, vocab_dims("ogb")[1], max_hops=4)  # max_dist 3 < hops: buckets merge
    for p in ab.parameters():
        torch.nn.init.normal_(p)
    with torch.no_grad():
        ab.spatial.embedding.weight[-1] = 0
    if rows == "rows":
        ab.key_limit = 0
    if rows == "ungrouped":  # one row per pair: distinct_pairs must not run
        ab.group_pairs = False
        ab.distinct_pairs = None
    assert_matches_reference(ab, b)
    if rows == "ungrouped":
        return
    mask = b.node_mask
    on = (mask[:, :, None] & mask[:, None, :]).view(-1)
    first, kind = ab.distinct_pairs(b.edge_attr, b.path.view(-1, b.path.shape[-1])[on], b.spd.view(-1)[on])
    assert len(first) < kind.numel() and torch.equal(kind[first], torch.arange(len(first)))
