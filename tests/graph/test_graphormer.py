"""Graphormer model, encodings and presets (graphnorm.graph.encodings / graphormer)."""
import dataclasses

import pytest
import torch
from rdkit import Chem
from torch_geometric.data import Data

from graphnorm.graph import (EdgeEncoding, Graphormer, GraphormerConfig, collate_graphs,
                             graphormer_slim)
from graphnorm.chem import smiles_to_data
from graphnorm.norms import NORM_SPECS, LayerNorm, SepNorm

MOLS = ["CC(=O)Nc1ccc(O)cc1", "c1ccc2ccccc2c1", "CCN(CC)CCOC(=O)c1ccccc1N", "O=C1CCCN1",
        "C[NH3+].[O-]C(=O)c1ccccc1"]


def tiny(norm="ln", **kw) -> Graphormer:
    """A small model with O(1) weights: at Graphormer's init (std 0.02) every molecule gets
    nearly the same prediction, which would make the equality tests vacuous."""
    kw = dict(num_layers=2, hidden=16, ffn_hidden=24, heads=4, norm=norm, **kw)
    torch.manual_seed(0)
    model = Graphormer(GraphormerConfig(**kw))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" not in name:
                p.normal_(std=0.2)
    return model


@pytest.fixture(scope="module")
def graphs():
    return [smiles_to_data(s, vocab="zinc") for s in MOLS]


F64_ATOL = 1e-9  # float64 rounding through a 2-block stack is ~1e-14; float32's ~1e-6 is luck


def warm_up(model, graphs, steps=3):
    """Train-mode passes so that BN / IsoBN running statistics are not the defaults; then the
    model in float64, so that equality tests check the property, not float32 rounding."""
    model.train()
    for _ in range(steps):
        model(collate_graphs(graphs))
    return model.double().eval()


def relabel(d: Data, gen: torch.Generator) -> Data:
    """The same molecule with atoms and edges renumbered (same stored shortest paths)."""
    n, m = d.num_nodes, d.edge_index.shape[1]
    order, eorder = torch.randperm(n, generator=gen), torch.randperm(m, generator=gen)
    inv, einv = torch.argsort(order), torch.argsort(eorder)  # old id -> new id
    spd = d.spd.view(n, n)[order][:, order].reshape(-1)
    path = d.path.view(n, n, -1)[order][:, order].long()
    path = torch.where(path >= 0, einv[path.clamp(min=0)], -1).to(torch.int16)
    return Data(x=d.x[order], edge_index=inv[d.edge_index[:, eorder]],
                edge_attr=d.edge_attr[eorder], spd=spd, path=path.view(n * n, -1), num_nodes=n)


@pytest.mark.parametrize("norm", ["ln", "bn", "sep:bn+ln", "isobn", "sep:isobn+ln"])
def test_permutation_invariance(graphs, norm):
    model = warm_up(tiny(norm), graphs)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        ref = model(collate_graphs(graphs))
        perm = model(collate_graphs([relabel(g, gen) for g in graphs]))
    assert torch.allclose(ref, perm, atol=F64_ATOL, rtol=0)
    assert ref.std() > 0.02  # predictions differ between molecules


def test_permutation_invariance_renumbered_rdkit_molecule():
    # acyclic: every shortest path is unique, so re-featurizing gives the same paths
    smi = "CC(C)(O)CNC(=O)CCSC(C)CF"
    mol = Chem.MolFromSmiles(smi)
    order = torch.randperm(mol.GetNumAtoms(), generator=torch.Generator().manual_seed(3)).tolist()
    smi2 = Chem.MolToSmiles(Chem.RenumberAtoms(mol, order), canonical=False)
    assert smi2 != smi
    model = warm_up(tiny("sep:bn+ln"), [smiles_to_data(smi, "zinc")] * 2)
    with torch.no_grad():
        a = model(collate_graphs([smiles_to_data(smi, "zinc")]))
        b = model(collate_graphs([smiles_to_data(smi2, "zinc")]))
    assert torch.allclose(a, b, atol=F64_ATOL, rtol=0)


@pytest.mark.parametrize("norm", ["sep:bn+ln", "isobn", "bn"])
def test_alone_equals_inside_padded_batch(graphs, norm):
    model = warm_up(tiny(norm), graphs)
    with torch.no_grad():
        batch = model(collate_graphs(graphs))
        for i, g in enumerate(graphs):
            alone = model(collate_graphs([g]))
            assert torch.allclose(alone[0], batch[i], atol=F64_ATOL, rtol=0)


def test_batch_of_one_in_training_mode(graphs):
    model = tiny("sep:bn+ln").train()
    out = model(collate_graphs(graphs[:1]))
    out.sum().backward()
    assert out.shape == (1, 1) and torch.isfinite(out).all()


@pytest.mark.parametrize("train", [False, True])
def test_padding_values_do_not_matter(graphs, train):
    model = warm_up(tiny("sep:bn+ln", dropout=0.1, attention_dropout=0.1), graphs).train(train)
    clean = collate_graphs(graphs)
    noisy = dataclasses.replace(clean)
    gen = torch.Generator().manual_seed(0)
    pad = ~clean.node_mask  # [B, N]
    pair_pad = pad[:, :, None] | pad[:, None, :]  # [B, N, N]
    rand_x = torch.randint(1, 29, clean.x.shape, generator=gen)
    noisy.x = torch.where(pad[..., None], rand_x, clean.x)
    noisy.degree = torch.where(pad, torch.randint(0, 5, pad.shape, generator=gen), clean.degree)
    noisy.spd = torch.where(pair_pad, torch.randint(0, 6, pair_pad.shape, generator=gen), clean.spd)
    rand_path = torch.randint(0, clean.edge_attr.shape[0], clean.path.shape, generator=gen)
    noisy.path = torch.where(pair_pad[..., None], rand_path, clean.path)
    outs = []
    for batch in (clean, noisy):
        torch.manual_seed(7)  # same dropout masks
        outs.append(model(batch))
    assert torch.allclose(outs[0], outs[1], atol=F64_ATOL, rtol=0)


@pytest.mark.parametrize("norm", NORM_SPECS)
def test_every_norm_spec_trains(graphs, norm):
    model = tiny(norm).train()
    out = model(collate_graphs(graphs))
    out.sum().backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert torch.isfinite(out).all()
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert model.atom_encoder.embedding.weight.grad.abs().sum() > 0


def test_slim_preset_parameter_count():
    n = graphormer_slim(num_tasks=1, vocab="zinc").num_parameters()
    print(f"Graphormer-slim (zinc vocab): {n:,} parameters (paper: 489.3K)")
    assert abs(n - 489_300) / 489_300 < 0.04
    m = graphormer_slim(num_tasks=2, vocab="ogb")
    cfg = m.config
    assert cfg.atom_feature_dims == (119, 5, 12, 12, 10, 6, 6, 2, 2)
    assert cfg.edge_feature_dims == (5, 6, 2) and cfg.num_layers == 12 and cfg.hidden == 80
    g = smiles_to_data("CC(=O)Oc1ccccc1C(=O)O", vocab="ogb")
    assert m.eval()(collate_graphs([g])).shape == (1, 2)


def test_large_molecule_and_salt_run():
    big = "C" * 150 + "(" + "C" * 10 + ")" + "c1ccccc1" * 6  # 196 heavy atoms
    graphs = [smiles_to_data(big, "zinc"), smiles_to_data("C[NH3+].[O-]C(=O)C", "zinc")]
    assert graphs[0].num_nodes > 190
    model = graphormer_slim().eval()
    with torch.no_grad():
        out, emb = model(collate_graphs(graphs), return_embeddings=True)
    assert out.shape == (2, 1) and torch.isfinite(out).all() and torch.isfinite(emb.vnode).all()


@pytest.mark.parametrize("slots, blocks, final", [
    ("all", SepNorm, SepNorm), ("final", LayerNorm, SepNorm), ("blocks", SepNorm, LayerNorm)])
def test_sep_slots(slots, blocks, final):
    model = tiny("sep:bn+ln", sep_slots=slots)
    for blk in model.blocks:
        assert type(blk.attn_norm) is blocks and type(blk.ffn_norm) is blocks
    assert type(model.final_norm) is final
    with pytest.raises(ValueError):
        GraphormerConfig(sep_slots="some")


def test_config_roundtrip_and_embeddings(graphs):
    cfg = GraphormerConfig(num_layers=2, hidden=16, heads=4, norm="sep:bn+ln", num_tasks=3)
    d = cfg.to_dict()
    assert GraphormerConfig.from_dict(d) == cfg and isinstance(d["atom_feature_dims"], list)
    with pytest.raises(ValueError):
        GraphormerConfig.from_dict({**d, "bogus": 1})
    model = Graphormer(cfg).eval()
    b = collate_graphs(graphs)
    pred, emb = model(b, return_embeddings=True)
    assert pred.shape == (len(graphs), 3) and emb.vnode.shape == (len(graphs), 16)
    assert emb.tokens.shape == (len(graphs), b.max_nodes, 16)
    assert torch.equal(emb.node_mask, b.node_mask)
    assert torch.allclose(model.head(emb.vnode), pred)
    assert torch.allclose(model.encode(b).vnode, emb.vnode)


def test_edge_encoding_by_hand():
    # chain 0 -1- 1 -2- 2 (bond types 0 and 2): c_02 = (e(type 0) W_0 + e(type 2) W_1) / 2
    g = Data(x=torch.zeros(3, 1, dtype=torch.long),
             edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
             edge_attr=torch.tensor([[0], [0], [2], [2]]),
             spd=torch.tensor([0, 1, 2, 1, 0, 1, 2, 1, 0], dtype=torch.uint8),
             path=torch.full((9, 3), -1, dtype=torch.int16), num_nodes=3)
    g.path[1, 0], g.path[2, 0], g.path[2, 1], g.path[5, 0] = 0, 0, 2, 2
    enc = EdgeEncoding((3,), heads=2, max_hops=3)
    b = collate_graphs([g])
    c = enc(b.edge_attr, b.path, b.spd)[0]  # [N, N, H]
    E, W = enc.edge_embedding.embedding.weight, enc.hop_weight
    assert torch.allclose(c[0, 2], (E[1] @ W[0] + E[3] @ W[1]) / 2, atol=1e-6)
    assert torch.allclose(c[0, 1], E[1] @ W[0], atol=1e-6)
    assert torch.equal(c[0, 0], torch.zeros(2)) and torch.equal(c[2, 0], torch.zeros(2))


def test_math_attention_matches_sdpa(graphs):
    model = tiny("ln").eval()
    b = collate_graphs(graphs)
    ref = model(b)
    for blk in model.blocks:
        blk.attention = "sdpa"
    assert torch.allclose(model(b), ref, atol=1e-5)


def test_first_norm_keeps_batch_statistics_off_the_constant_vnode():
    from graphnorm.graph import GraphormerConfig, Graphormer
    from graphnorm.norms import BatchNorm, IsoBN, LayerNorm

    for spec, kind in (("sep:bn+ln", BatchNorm), ("sep:isobn+ln", IsoBN)):
        model = Graphormer(GraphormerConfig(num_layers=2, hidden=16, ffn_hidden=16, heads=4, norm=spec))
        assert isinstance(model.blocks[0].attn_norm.special, LayerNorm)  # sees the constant [VNode]
        assert isinstance(model.blocks[0].ffn_norm.special, kind)
        assert isinstance(model.blocks[1].attn_norm.special, kind)
        assert isinstance(model.final_norm.special, kind)
    plain = Graphormer(GraphormerConfig(num_layers=1, hidden=16, ffn_hidden=16, heads=4, norm="bn"))
    assert isinstance(plain.blocks[0].attn_norm, BatchNorm)  # not SepNorm: atoms vary, left alone


def _padded_forward(model, batch):
    """The model's prediction with the tokens padded ``[B, L, D]`` all the way (the layout
    before ``graphnorm.nn.packing``), for comparing against the packed forward."""
    mask = batch.node_mask
    nodes = model.atom_encoder(batch.x) + model.degree_encoder(batch.degree, mask)
    if model.rwpe is not None:
        nodes = nodes + model.rwpe(batch)
    h = model.transformer(nodes, ~mask, special=model.vnode, bias=model.attn_bias(batch),
                          local_input=batch)
    atoms = (h[:, 1:] * mask.unsqueeze(-1)).sum(1)
    if model.config.readout.endswith("mean"):
        atoms = atoms / mask.sum(1, keepdim=True)
    return model.head(torch.cat([h[:, 0], atoms], -1))


@pytest.mark.parametrize("readout", ["vnode+sum", "vnode+mean"])
def test_packed_tokens_equal_the_padded_layout(graphs, readout):
    """The tokens travel packed (the [VNode]s, then the real atoms): the same predictions,
    gradients and BN statistics as the padded layout, in training (batch statistics, dropout
    masks) and in evaluation, with the GINE branch and random-walk PE."""
    model = warm_up(tiny("sep:bn+bn", local_mp="gine", rwpe_steps=4, readout=readout,
                         dropout=0.1, input_dropout=0.1), graphs)
    batch = collate_graphs(graphs)
    assert batch.node_mask.logical_not().any()  # the batch has padding
    for train in (True, False):
        model.train(train)
        state = {k: v.clone() for k, v in model.state_dict().items()}
        results = []
        for forward in (lambda b: model(b), lambda b: _padded_forward(model, b)):
            model.load_state_dict(state)
            torch.manual_seed(3)
            out = forward(batch)
            grads = torch.autograd.grad(out.square().sum(), list(model.parameters()))
            results.append((out, grads, {k: v.clone() for k, v in model.state_dict().items()}))
        (packed, g_packed, s_packed), (padded, g_padded, s_padded) = results
        torch.testing.assert_close(packed, padded, atol=F64_ATOL, rtol=0)
        for a, b in zip(g_packed, g_padded):
            torch.testing.assert_close(a, b, atol=F64_ATOL, rtol=1e-9)
        for key in s_packed:
            torch.testing.assert_close(s_packed[key], s_padded[key], atol=F64_ATOL, rtol=0, msg=key)
