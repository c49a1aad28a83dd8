"""Morgan fingerprints as a featurizer option (FeaturizerConfig.fingerprint_bits): computed
as RDKit computes them, carried through cache, collate and the models' [VNode]."""
import numpy as np
import pytest
import torch
from torch import nn
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator

from graphnorm.baselines import GNN, GNNConfig
from graphnorm.chem import FeaturizerConfig, featurize_many, smiles_to_data
from graphnorm.chem.config import vocab_dims
from graphnorm.data.cache import pack_split, split_dataset
from graphnorm.graph import Graphormer, GraphormerConfig, collate_graphs
from graphnorm.graph.collate import unpack_bits

SMILES = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "[Na+].[Cl-]", "C"]


@pytest.mark.parametrize("vocab", ["ogb", "zinc"])
def test_bits_are_rdkits_morgan_radius_2_of_the_unkekulized_molecule(vocab):
    """The zinc vocabulary kekulizes the molecule in place: the fingerprint is taken before,
    so its aromatic bits are those of the SMILES as parsed."""
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=256)
    result = featurize_many(SMILES[:3], FeaturizerConfig(vocab=vocab, fingerprint_bits=256))
    for s, g in zip(SMILES[:3], result.graphs):
        expected = gen.GetFingerprintAsNumPy(Chem.MolFromSmiles(s))
        assert g["fingerprint"].dtype == np.uint8 and g["fingerprint"].shape == (1, 32)  # 8 per byte
        np.testing.assert_array_equal(np.unpackbits(g["fingerprint"][0]), expected)
        unpacked = unpack_bits(torch.from_numpy(g["fingerprint"]))  # what the model reads
        assert unpacked.dtype == torch.float32 and torch.equal(unpacked[0], torch.from_numpy(expected).float())


def test_config_keeps_old_cache_keys_and_names_its_folder():
    plain = FeaturizerConfig()
    assert "fingerprint_bits" not in plain.to_dict() and plain.tag == "h5-d20"  # caches stay valid
    fp = FeaturizerConfig(fingerprint_bits=1024)
    assert fp.to_dict()["fingerprint_bits"] == 1024 and fp.tag == "h5-d20-fp1024"
    assert FeaturizerConfig.from_dict(fp.to_dict()) == fp
    for bad in (-1, True, 1.5, 10**6, 100):  # 100: not a multiple of 8
        with pytest.raises(ValueError, match="fingerprint_bits"):
            FeaturizerConfig(fingerprint_bits=bad)


def test_cached_split_serves_one_fingerprint_row_per_molecule():
    result = featurize_many(SMILES, FeaturizerConfig(fingerprint_bits=64))
    ds = split_dataset(pack_split(result.graphs, SMILES), "x", "train")
    for k, g in enumerate(result.graphs):
        assert torch.equal(ds[k].fingerprint, torch.from_numpy(g["fingerprint"]))
    batch = collate_graphs([ds[1], ds[3]])
    assert batch.fingerprint.shape == (2, 64) and batch.fingerprint.dtype == torch.float32
    plain = collate_graphs([smiles_to_data("CCO"), smiles_to_data("CCO", fingerprint_bits=64)])
    assert plain.fingerprint is None  # all or none


def _graphormer(bits, **kw):
    atoms, bonds = vocab_dims("ogb")
    return Graphormer(GraphormerConfig(num_layers=2, hidden=16, ffn_hidden=16, heads=2, atom_feature_dims=atoms,
                                       edge_feature_dims=bonds, fingerprint_bits=bits, **kw)).eval()


def _gin_vn(bits, **kw):
    atoms, bonds = vocab_dims("ogb")
    return GNN(GNNConfig(kind="gin-vn", hidden=16, atom_feature_dims=atoms, edge_feature_dims=bonds,
                         fingerprint_bits=bits, **kw)).eval()


@pytest.mark.parametrize("build", [_graphormer, _gin_vn])
def test_the_virtual_node_reads_the_fingerprint(build):
    torch.manual_seed(0)
    model = build(64)
    batch = collate_graphs([smiles_to_data(s, fingerprint_bits=64) for s in ("CCO", "CCN")])
    with torch.no_grad():
        before = model(batch)
        batch.fingerprint[0] = 1 - batch.fingerprint[0]  # another molecule-level input
        after = model(batch)
    assert not torch.allclose(before[0], after[0]) and torch.allclose(before[1], after[1])
    with pytest.raises(ValueError, match="fingerprint_bits=64"):
        model(collate_graphs([smiles_to_data("CCO")]))
    with pytest.raises(ValueError, match="fingerprint_bits=64"):
        model(collate_graphs([smiles_to_data("CCO", fingerprint_bits=32)]))


@pytest.mark.parametrize("build", [_graphormer, _gin_vn])
def test_fingerprint_dropout_drops_bits_in_training_only(build):
    model = build(256, fingerprint_dropout=0.5)
    batch = collate_graphs([smiles_to_data(s, fingerprint_bits=256) for s in ("c1ccccc1O", "CCN")])
    seen = []
    model.fingerprint.register_forward_hook(lambda m, args, out: seen.append(out))
    with torch.no_grad():
        nn.init.eye_(model.fingerprint.weight[:, :16])  # output j = input bit j, for j < 16
        model.fingerprint.weight[:, 16:].zero_()
        model.fingerprint.bias.zero_()
        batch.fingerprint[:, :16] = 1.0
        torch.manual_seed(0)
        model(batch)
        model.train()(batch)
    kept_eval, kept_train = seen[0][:, :16], seen[1][:, :16]
    assert torch.equal(kept_eval, torch.ones(2, 16))
    assert set(kept_train.unique().tolist()) == {0.0, 2.0}  # dropped, or kept and scaled by 2


@pytest.mark.parametrize("config", [GraphormerConfig, lambda **kw: GNNConfig(kind="gin-vn", **kw)])
def test_a_dropout_of_one_or_more_is_refused(config):
    with pytest.raises(ValueError, match="fingerprint_dropout must lie in"):
        config(fingerprint_bits=64, fingerprint_dropout=1.0)
    with pytest.raises(ValueError, match="dropout must lie in"):
        config(dropout=-0.1)


def test_at_the_head_the_bits_bypass_every_vnode_norm():
    """fingerprint_at="head": the bits change the prediction, not the [VNode] (nor any token),
    and the head reads the readout and the projected bits side by side."""
    torch.manual_seed(0)
    model = _graphormer(64, fingerprint_at="head", readout="vnode+mean")
    assert model.head.in_features == 3 * 16
    batch = collate_graphs([smiles_to_data(s, fingerprint_bits=64) for s in ("CCO", "CCN")])
    with torch.no_grad():
        before, emb = model(batch, return_embeddings=True)
        batch.fingerprint[0] = 1 - batch.fingerprint[0]
        after, emb_after = model(batch, return_embeddings=True)
    assert torch.equal(emb.vnode, emb_after.vnode) and torch.equal(emb.tokens, emb_after.tokens)
    assert not torch.allclose(before[0], after[0]) and torch.allclose(before[1], after[1])
    at_vnode = _graphormer(64, readout="vnode+mean")
    assert at_vnode.head.in_features == 2 * 16
    with pytest.raises(ValueError, match="fingerprint_at must be one of"):
        GraphormerConfig(fingerprint_bits=64, fingerprint_at="tokens")


def test_a_gnn_without_virtual_node_refuses_fingerprints():
    with pytest.raises(ValueError, match="gin-vn"):
        GNNConfig(kind="gine", fingerprint_bits=64)


def test_molecules_kept_without_valence_check_get_fingerprints_too():
    """MolHIV's hypervalent molecules (sanitize="benchmark") come without ring info; their
    fingerprint is taken from a ring-perceived copy, and their graph features do not change."""
    s = "CC(c1cccs1)=[N+]1[N-]C(N)=[S+][AlH3-]12[OH+]B(c1ccccc1)[OH+]2"  # MolHIV row 30784
    with_fp = featurize_many([s], FeaturizerConfig(fingerprint_bits=256), sanitize="benchmark")
    plain = featurize_many([s], FeaturizerConfig(), sanitize="benchmark")
    assert with_fp.errors == [None] and np.unpackbits(with_fp.graphs[0]["fingerprint"]).sum() > 10
    np.testing.assert_array_equal(with_fp.graphs[0]["x"], plain.graphs[0]["x"])


def test_fingerprint_tables_keep_rdkit_parse_notes_off_stderr(capfd):
    from graphnorm.chem.tabular import feature_matrix

    counts = feature_matrix("morgan", ["[H].CCO"])  # a lone H: RDKit notes it on parse
    assert counts.shape == (1, 2048) and counts.sum() > 0
    assert "WARNING" not in capfd.readouterr().err
