"""Official-loader path without a network: PyG ``ZINC`` and OGB ``PygGraphPropPredDataset``
are pointed at fake, already-"downloaded" folders in their own on-disk formats, so their real
classes load them; our conversion must then match the raw-directory featurization."""
from __future__ import annotations

import gzip

import pandas as pd
import pytest
import torch
from torch_geometric.data import Data, InMemoryDataset

from graphnorm.chem import FeaturizerConfig
from graphnorm.data import SplitSizeError, load_dataset
from graphnorm.data.cache import pack_split, split_dataset
from graphnorm.data.official import convert_official, open_official, zinc_graph_to_smiles
from graphnorm.data.raw import find_raw_files, read_molhiv

SPLITS = ("train", "val", "test")


def _as_pyg_zinc(g: Data) -> Data:
    """Our ZINC graph in PyG ZINC's stored form: adjacency-nonzero edge order, 1-based
    bond types [E], y [1]."""
    n = g.num_nodes
    adj = torch.zeros(n, n, dtype=torch.long)
    adj[g.edge_index[0], g.edge_index[1]] = g.edge_attr.view(-1) + 1
    ei = adj.nonzero().t().contiguous()
    return Data(x=g.x.clone(), edge_index=ei, edge_attr=adj[ei[0], ei[1]], y=g.y.view(1))


def _edges(g: Data) -> set:
    pairs = zip(g.edge_index.t().tolist(), g.edge_attr.view(-1).tolist())
    return {(i, j, a) for (i, j), a in pairs}


@pytest.fixture(scope="module")
def fake_zinc_root(zinc_subset, tmp_path_factory):
    root = tmp_path_factory.mktemp("official")
    raw = root / "zinc" / "raw"
    raw.mkdir(parents=True)
    for f in ("train.pickle", "val.pickle", "test.pickle", "train.index", "val.index",
              "test.index"):
        (raw / f).write_bytes(b"placeholder")  # present: PyG skips the download
    from torch_geometric.datasets import ZINC

    for s in SPLITS:
        graphs = [_as_pyg_zinc(zinc_subset[s][i]) for i in range(12)]
        (root / "zinc" / "subset" / "processed").mkdir(parents=True, exist_ok=True)
        ZINC.save(graphs, str(root / "zinc" / "subset" / "processed" / f"{s}.pt"))
    return root


def _items(converted: dict) -> dict:
    """{split: [Data]} as the cache will serve the converted (arrays, smiles, y)."""
    return {s: list(split_dataset(pack_split(*converted[s]), "x", s)) for s in SPLITS}


def test_official_zinc_matches_raw(zinc_subset, fake_zinc_root):
    from rdkit import Chem

    handle, checksum = open_official("zinc-subset", fake_zinc_root)
    assert len(checksum) == 64 and len(handle["train"]) == 12
    out = _items(convert_official("zinc-subset", handle, FeaturizerConfig(vocab="zinc"), False))
    for s in SPLITS:
        for i, ours in enumerate(out[s]):
            ref = zinc_subset[s][i]
            assert torch.equal(ours.x, ref.x) and torch.equal(ours.y, ref.y)
            assert ours.edge_attr.shape == ref.edge_attr.shape  # [E, 1], 0-based
            assert _edges(ours) == _edges(ref)
            assert torch.equal(ours.spd, ref.spd)
            # paths may pick another shortest path, but have the same length
            assert torch.equal((ours.path >= 0).sum(1), (ref.path >= 0).sum(1))
            assert ours.path.dtype == torch.int16 and ours.spd.dtype == torch.uint8
            assert Chem.CanonSmiles(ours.smiles) == Chem.CanonSmiles(ref.smiles, useChiral=0)


def test_official_zinc_through_load_dataset(fake_zinc_root, tmp_path, monkeypatch, capsys):
    """The official source is cached and size-checked like the raw one."""
    monkeypatch.setattr("graphnorm.data.datasets._official_root", lambda root: fake_zinc_root)
    with pytest.raises(SplitSizeError, match="train: 12 \\(expected 10000\\)"):
        load_dataset("zinc-subset", root=tmp_path, source="official", progress=False)
    monkeypatch.setattr("graphnorm.data.datasets.check_split_sizes", lambda *a, **k: None)
    capsys.readouterr()
    splits = load_dataset("zinc-subset", root=tmp_path, source="official", progress=True)
    assert splits.manifest["source"] == "official" and len(splits["val"]) == 12
    stages = capsys.readouterr().err  # a line per stage (not a terminal: no bars)
    assert "zinc-subset: building from the official source" in stages
    assert "36 graphs built and cached" in stages and "\r" not in stages
    assert (tmp_path / "zinc-subset" / "official-h5-d20" / "manifest.json").is_file()


def test_zinc_graph_to_smiles_charged_atoms():
    from graphnorm.chem import smiles_to_data

    for smiles in ["C[NH3+]", "CC(=O)[O-]", "C[N+](C)(C)C", "c1cc[nH]c1", "C[C@@H](N)O"]:
        g = smiles_to_data(smiles, vocab="zinc")
        rebuilt = zinc_graph_to_smiles(g.x, g.edge_index, g.edge_attr)
        from rdkit import Chem

        assert Chem.CanonSmiles(rebuilt) == Chem.CanonSmiles(smiles, useChiral=0)


def _write_csv_gz(path, rows, header=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as f:
        pd.DataFrame(rows).to_csv(f, index=False, header=header if header else False)


@pytest.fixture(scope="module")
def fake_ogb_root(raw_dir, tmp_path_factory):
    """ogbg_molhiv as OGB's download unpacks it, with 6 HIV molecules (one hypervalent Al)."""
    from graphnorm.chem import smiles_to_data

    smiles, active = read_molhiv(find_raw_files("ogbg-molhiv", raw_dir)["csv"])
    rows = [0, 1, 2, 137, 40000, 41126]  # 137: O=C1O[Al]23(...)
    root = tmp_path_factory.mktemp("official")
    d = root / "ogb" / "ogbg_molhiv"
    (d / "raw").mkdir(parents=True)
    (d / "RELEASE_v1.txt").write_text("fake release\n")
    for f in ("edge.csv.gz", "node-feat.csv.gz", "edge-feat.csv.gz"):
        (d / "raw" / f).write_bytes(b"placeholder")
    graphs = []
    for r in rows:
        g = smiles_to_data(smiles[r], vocab="ogb", sanitize="benchmark")  # as smiles2graph
        # as ogb.io.read_graph_pyg builds them: explicit num_nodes, y long [1, 1]
        graphs.append(Data(num_nodes=g.num_nodes, edge_index=g.edge_index,
                           edge_attr=g.edge_attr, x=g.x,
                           y=torch.tensor([[active[r]]], dtype=torch.long)))
    (d / "processed").mkdir()
    # OGB 1.3.6 saves the collated Data object itself (not a dict), as here
    torch.save(InMemoryDataset.collate(graphs), d / "processed" / "geometric_data_processed.pt")
    _write_csv_gz(d / "mapping" / "mol.csv.gz",
                  {"HIV_active": [active[r] for r in rows], "smiles": [smiles[r] for r in rows],
                   "mol_id": list(range(len(rows)))}, header=True)
    for name, idx in [("train", [0, 1, 3]), ("valid", [2, 5]), ("test", [4])]:
        _write_csv_gz(d / "split" / "scaffold" / f"{name}.csv.gz", {"i": idx})
    return root, [smiles[r] for r in rows], [active[r] for r in rows]


def test_official_molhiv_matches_raw(fake_ogb_root):
    """OGB's stored graphs converted == our featurization of the same SMILES, tensor for
    tensor (same smiles2graph features and edge order)."""
    from graphnorm.chem import smiles_to_data

    root, smiles, active = fake_ogb_root
    handle, checksum = open_official("ogbg-molhiv", root)  # OGB's own class + torch.load
    assert len(checksum) == 64
    out = _items(convert_official("ogbg-molhiv", handle, FeaturizerConfig(vocab="ogb"), False))
    assert [len(out[s]) for s in SPLITS] == [3, 2, 1]
    for s, rows in zip(SPLITS, ([0, 1, 3], [2, 5], [4])):
        for g, r in zip(out[s], rows):
            ref = smiles_to_data(smiles[r], vocab="ogb", sanitize="benchmark")
            assert g.smiles == smiles[r]
            for key in ("x", "edge_index", "edge_attr", "spd", "path"):
                assert torch.equal(g[key], ref[key]), (s, r, key)
            assert g.y.dtype == torch.float32 and float(g.y) == active[r]
    al = out["train"][2]  # HIV row 137, hypervalent Al: kept, as OGB keeps it
    assert "[Al]" in al.smiles and al.num_nodes == 19
