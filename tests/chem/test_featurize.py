"""SMILES -> feature arrays (graphnorm.chem), Contract 2 of docs/design.md."""
import csv
import gzip
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from ogb.utils import smiles2graph
from rdkit import Chem
from torch_geometric.data import Batch

from graphnorm.chem import (FEATURIZER_VERSION, ZINC_ATOM_DICT, FeaturizationError,
                            FeaturizerConfig, featurize_many, graph_data, smiles_to_data)
from graphnorm.chem.paths import shortest_paths, shortest_paths_many

RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR",
                          Path(__file__).resolve().parents[3] / "shared" / "datasets"))
needs_zinc = pytest.mark.skipif(not (RAW / "zinc").exists(), reason=f"no ZINC files in {RAW}")
needs_hiv = pytest.mark.skipif(not (RAW / "molhiv").exists(), reason=f"no HIV file in {RAW}")

# HIV.csv rows that current RDKit refuses to sanitize (hypervalent Al, B, Ge...) and their
# heavy-atom counts; OGB keeps all 41,127 rows, so must we.
UNSANITIZABLE_HIV = {
    137: ("O=C1O[Al]23(OC1=O)(OC(=O)C(=O)O2)OC(=O)C(=O)O3", 19),
    987: ("Cc1ccc([B-2]2(c3ccc(C)cc3)=NCCO2)cc1", 19),
    12882: ("Oc1ccc(C2Oc3cc(O)cc4c3C(=[O+][AlH3-3]35([O+]=C6c7c(cc(O)cc7[OH+]3)OC(c3ccc(O)cc3O)"
            "C6O)([O+]=C3c6c(cc(O)cc6[OH+]5)OC(c5ccc(O)cc5O)C3O)[OH+]4)C2O)c(O)c1", 67),
    18293: ("CC1=C2[OH+][AlH3-3]34([O+]=C2C=CN1C)([O+]=C1C=CN(C)C(C)=C1[OH+]3)[O+]=C1C=CN(C)"
            "C(C)=C1[OH+]4", 31),
    30784: ("CC(c1cccs1)=[N+]1[N-]C(N)=[S+][AlH3-]12[OH+]B(c1ccccc1)[OH+]2", 22),
    30785: ("CC(c1ccccn1)=[N+]1[N-]C(N)=[S+][AlH3-]12[OH+]B(c1ccccc1)[OH+]2", 23),
    35728: ("[Na+].c1ccc([SH+][GeH2+]2[SH+]c3ccccc3[SH+]2)c([SH+][GeH2+]2[SH+]c3ccccc3[SH+]2)c1",
            27),
}
ZINC_TRAIN0 = "COc1ccc2ccc(O)c(CN3CCN(S(=O)(=O)c4ccn(C)c4)CC3)c2c1"


def many(smiles, vocab="ogb", **kw):
    """Data per SMILES (None where it failed), through the one featurizer pool."""
    result = featurize_many(smiles, FeaturizerConfig(vocab=vocab), **kw)
    return [None if g is None else graph_data(g, s) for s, g in zip(smiles, result.graphs)]


@pytest.fixture(scope="module")
def hiv_smiles():
    with gzip.open(RAW / "molhiv" / "HIV.csv.gz", "rt") as f:
        return [row["smiles"] for row in csv.DictReader(f)]


@pytest.fixture(scope="module")
def zinc_subset():
    """The 12,000 ZINC-subset SMILES: index files pick rows of the JT-VAE splits (as PyG)."""
    out = {}
    for split, name in [("train", "train"), ("val", "valid"), ("test", "test")]:
        lines = gzip.open(RAW / "zinc" / f"jtvae_{name}.txt.gz", "rt").read().splitlines()
        index = (RAW / "zinc" / f"{split}.index").read_text().strip().split(",")
        out[split] = [lines[int(i)].strip() for i in index]
    return out


def _check_contract(d, smiles, nf, ne, max_hops=5):
    n, e = d.num_nodes, d.edge_index.shape[1]
    assert d.smiles == smiles and d.x.shape == (n, nf) and d.x.dtype == torch.long
    assert d.edge_index.dtype == torch.long and d.edge_attr.shape == (e, ne)
    assert d.edge_attr.dtype == torch.long and (d.x >= 0).all() and (d.edge_attr >= 0).all()
    assert d.spd.dtype == torch.uint8 and d.spd.shape == (n * n,)
    assert d.path.dtype == torch.int16 and d.path.shape == (n * n, max_hops)
    # paths index this graph's edges, consistent with the edge list
    spd, path = shortest_paths(d.edge_index.numpy(), n, max_hops, 20)
    assert (d.spd.numpy() == spd).all() and (d.path.numpy() == path).all()
    assert int(d.path.max()) < max(e, 1)


@pytest.mark.slow  # reads ../shared (MolHIV)
@needs_hiv
def test_ogb_vocab_equals_smiles2graph(hiv_smiles):
    rng = np.random.default_rng(0)
    sample = [hiv_smiles[i] for i in rng.choice(len(hiv_smiles), 150, replace=False)]
    sample = [s for s in sample if Chem.MolFromSmiles(s) is not None]
    for s, d in zip(sample, many(sample, "ogb")):
        g = smiles2graph(s)
        np.testing.assert_array_equal(d.x.numpy(), g["node_feat"])
        np.testing.assert_array_equal(d.edge_index.numpy(), g["edge_index"])
        np.testing.assert_array_equal(d.edge_attr.numpy(), g["edge_feat"])
    _check_contract(d, s, 9, 3)


@pytest.mark.slow  # reads ../shared (MolHIV)
@needs_hiv
def test_unsanitizable_hiv_smiles_featurize(hiv_smiles):
    for row, (smiles, n) in UNSANITIZABLE_HIV.items():
        assert hiv_smiles[row] == smiles
        assert Chem.MolFromSmiles(smiles) is None  # still rejected by RDKit's valence check
        d = smiles_to_data(smiles, "ogb", sanitize="benchmark")
        _check_contract(d, smiles, 9, 3)
        assert d.num_nodes == n and d.edge_index.shape[1] > 0
        with pytest.raises(FeaturizationError, match="valence"):  # user input: refused
            smiles_to_data(smiles, "ogb")
    salt = smiles_to_data(UNSANITIZABLE_HIV[35728][0], sanitize="benchmark")  # [Na+] alone
    assert (salt.spd.view(27, 27)[0, 1:] == 255).all()


@pytest.mark.slow  # reads ../shared (ZINC-subset)
@needs_zinc
def test_zinc_train0_known_facts(zinc_subset):
    assert zinc_subset["train"][0] == ZINC_TRAIN0
    d = smiles_to_data(ZINC_TRAIN0, "zinc")
    _check_contract(d, ZINC_TRAIN0, 1, 1)
    assert d.num_nodes == 29 and d.edge_index.shape[1] == 64
    # all atoms unbracketed: 21 C, 4 O, 3 N, 1 S; bonds: 2 S=O + 3 ring C=C per aromatic 6-ring
    counts = torch.bincount(d.x[:, 0], minlength=28)
    assert counts[[0, 1, 2, 5]].tolist() == [21, 4, 3, 1] and counts.sum() == 29
    bonds = torch.bincount(d.edge_attr[::2, 0], minlength=3).tolist()
    assert bonds[2] == 0 and bonds[1] == 2 + 5 + 2  # naphthalene 5, pyrrole 2, two S=O


@pytest.mark.slow  # reads ../shared (ZINC-subset)
@needs_zinc
def test_zinc_vocab_covers_a_subset_sample(zinc_subset):
    rng = np.random.default_rng(1)
    everything = zinc_subset["train"] + zinc_subset["val"] + zinc_subset["test"]
    assert len(everything) == 12000
    sample = [everything[i] for i in rng.choice(12000, 800, replace=False)]
    data = many(sample, "zinc")  # None for any atom outside the dictionary
    assert len(data) == 800 and all(d is not None and d.x.max() < 28 for d in data)
    assert 21 < np.mean([d.num_nodes for d in data]) < 25.5  # subset mean is 23.15


@pytest.mark.parametrize("smiles, atom, label", [
    ("C[C@H](N)O", 1, "C H1"),          # chiral: bracket with its H
    ("C[C@](F)(Cl)Br", 1, "C"),         # chiral without H
    ("C[NH+](C)C", 1, "N H1 +"),
    ("CC[NH3+]", 2, "N H3 +"),
    ("CC(=O)[O-]", 3, "O -"),
    ("C[S-]", 1, "S -"),
    ("c1cc[nH]c1", 3, "N"),             # kekulé: an ordinary N-H
    ("C[n+]1ccccc1", 1, "N +"),
    ("CP(C)(C)=O", 1, "P"),
    ("O=[PH](O)c1ccccc1", 1, "P H1"),   # hypervalent P with H is written [PH]
    ("C[CH2-]", 1, "C H2 -"),
])
def test_zinc_atom_labels(smiles, atom, label):
    assert smiles_to_data(smiles, "zinc").x[atom, 0].item() == ZINC_ATOM_DICT[label]


def test_zinc_bonds_are_kekulized():
    d = smiles_to_data("c1ccccc1C#N", "zinc")
    assert sorted(d.edge_attr[::2, 0].tolist()) == [0, 0, 0, 0, 1, 1, 1, 2]


@pytest.mark.parametrize("smiles, atom", [("C[Si](C)(C)C", "Si"), ("[Na+].[Cl-]", "Na"),
                                          ("C[N+2]", "N ++")])
def test_zinc_unknown_atom_names_smiles_and_atom(smiles, atom):
    with pytest.raises(FeaturizationError) as err:
        smiles_to_data(smiles, "zinc")
    assert repr(smiles) in str(err.value) and atom in str(err.value)


@pytest.mark.parametrize("bad", ["C1CC", "not a smiles", "CC(C", "c1cccc1", "", "   ", None])
def test_invalid_smiles_error_names_the_input(bad):
    with pytest.raises(FeaturizationError) as err:
        smiles_to_data(bad)
    assert repr(bad) in str(err.value)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("vocab", ["ogb", "zinc"])
@pytest.mark.parametrize("smiles, atom", [("C(C)(C)(C)(C)C", "# 0 C, 5"), ("C#C#C", "# 1 C, 6")])
def test_impossible_valence_is_refused_with_rdkits_reason(smiles, atom, vocab):
    """User input (the default, strict) never gets a graph RDKit would not sanitize."""
    with pytest.raises(FeaturizationError) as err:
        smiles_to_data(smiles, vocab)
    msg = str(err.value)
    assert repr(smiles) in msg and "valence" in msg and atom in msg  # RDKit's own reason
    out = featurize_many(["CCO", smiles], FeaturizerConfig(vocab=vocab), workers=2, chunk_size=1)
    assert out.graphs[0] is not None and out.graphs[1] is None and out.errors[1] == msg
    # benchmarks keep valence-only failures, as OGB does
    assert smiles_to_data(smiles, vocab, sanitize="benchmark").num_nodes == smiles.count("C")


def test_unkekulizable_reason_and_unknown_sanitize_mode():
    with pytest.raises(FeaturizationError, match="kekulize"):
        smiles_to_data("c1cccc1")
    with pytest.raises(ValueError, match="sanitize"):
        smiles_to_data("CCO", sanitize="lenient")


def test_many_leaves_none_and_the_message_in_place():
    out = featurize_many(["CCO", "C1CC", "CC"], FeaturizerConfig())
    assert out.graphs[1] is None and out.graphs[2]["x"].shape[0] == 2
    assert out.errors == [None, "RDKit cannot parse SMILES 'C1CC'", None]
    assert out.failures() == [(1, "RDKit cannot parse SMILES 'C1CC'")]


@pytest.mark.parametrize("vocab", ["ogb", "zinc"])
def test_molecules_without_bonds(vocab):
    d = smiles_to_data("C", vocab)
    assert d.num_nodes == 1 and d.edge_index.shape == (2, 0) and d.spd.tolist() == [0]
    assert d.edge_attr.shape == (0, 3 if vocab == "ogb" else 1) and (d.path == -1).all()
    d = smiles_to_data("[Na+].[Cl-]" if vocab == "ogb" else "O.O.O", vocab)
    n = d.num_nodes
    assert (d.spd.view(n, n) == 255 * (1 - torch.eye(n, dtype=torch.uint8))).all()


def test_hydrogens_are_implicit():
    assert smiles_to_data("[H]C([H])([H])O[H]").num_nodes == 2
    assert smiles_to_data("[2H]C").num_nodes == 2  # an isotope is a real atom, kept


def test_workers_and_chunks_do_not_change_results():
    smiles = ["CCO", "c1ccccc1", "[Na+].[Cl-]", "CC(=O)O", "C", "N#Cc1ccccc1"] * 4
    one = many(smiles, "ogb", workers=1, chunk_size=512)
    two = many(smiles, "ogb", workers=2, chunk_size=5)
    for a, b in zip(one, two):
        assert a.smiles == b.smiles
        for key in ("x", "edge_index", "edge_attr", "spd", "path"):
            assert torch.equal(getattr(a, key), getattr(b, key))


def test_batches_with_pyg_and_official_loader_graphs_get_paths():
    data = many(["CCO", "c1ccccc1", "C"])
    batch = Batch.from_data_list([d.to_pyg() for d in data])
    assert batch.spd.shape == (9 + 36 + 1,) and batch.path.shape == (46, 5)
    g = smiles2graph("c1ccccc1")  # an official loader's graph: paths from its edge list
    (spd, path), = shortest_paths_many([(g["edge_index"], 6)], 5, 20)
    assert (spd == data[1].spd.numpy()).all() and (path == data[1].path.numpy()).all()
    assert isinstance(FEATURIZER_VERSION, int)
