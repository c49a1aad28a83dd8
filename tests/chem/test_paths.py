"""Shortest-path distances and edge paths (graphnorm.chem.paths) against networkx."""
import csv
import gzip
import os
import tracemalloc
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from rdkit import Chem

from graphnorm.chem.paths import UNREACHABLE, shortest_paths, shortest_paths_many

RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR",
                          Path(__file__).resolve().parents[3] / "shared" / "datasets"))


def _edges(smiles):
    mol = Chem.MolFromSmiles(smiles)
    ends = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    ei = np.array([e for i, j in ends for e in ((i, j), (j, i))], dtype=np.int64).reshape(-1, 2)
    return ei.T, mol.GetNumAtoms()


def _check_against_networkx(ei, n, spd, path, max_hops, max_dist):
    """Distances equal networkx (capped); each path is a walk along a shortest path."""
    assert spd.dtype == np.uint8 and spd.shape == (n * n,)
    assert path.dtype == np.int16 and path.shape == (n * n, max_hops)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(ei.T.tolist())
    dist = dict(nx.all_pairs_shortest_path_length(g))
    for i in range(n):
        for j in range(n):
            p, d = path[i * n + j], dist[i].get(j)
            if d is None:
                assert spd[i * n + j] == UNREACHABLE and (p == -1).all(), (i, j)
                continue
            assert spd[i * n + j] == min(d, max_dist), (i, j, d, spd[i * n + j])
            hops = min(d, max_hops)
            assert (p[hops:] == -1).all(), (i, j, p)
            cur = i
            for k in range(hops):
                e = int(p[k])
                assert 0 <= e < ei.shape[1] and ei[0, e] == cur, (i, j, k, p)
                cur = int(ei[1, e])
                assert dist[cur][j] == d - k - 1, "hop leaves every shortest path"
            if d <= max_hops:
                assert cur == j


def _random_smiles(k, seed):
    rng = np.random.default_rng(seed)
    out = []
    zinc = RAW / "zinc" / "jtvae_valid.txt.gz"
    if zinc.exists():
        lines = gzip.open(zinc, "rt").read().split()
        out += [lines[i] for i in rng.choice(len(lines), k, replace=False)]
    hiv = RAW / "molhiv" / "HIV.csv.gz"
    if hiv.exists():
        rows = list(csv.DictReader(gzip.open(hiv, "rt")))
        picks = [rows[i]["smiles"] for i in rng.choice(len(rows), 2 * k, replace=False)]
        out += [s for s in picks if Chem.MolFromSmiles(s) is not None][:k]
    if not out:  # no raw data beside the repo: a fixed handful still exercises the code
        out = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "C1CC2CCC1C2", "OC(=O)C1CCCN1"] * 4
    return out


def test_distances_and_paths_match_networkx_on_molecules():
    mols = _random_smiles(25, seed=0)
    # disconnected ones (salts, mixtures): components joined with '.'
    mols += [a + "." + b for a, b in zip(mols[:8], mols[8:16])] + ["[Na+].[Cl-]", "C.C.CC"]
    assert len(mols) >= 50 or not (RAW / "zinc").exists()
    graphs = [_edges(s) for s in mols]
    batched = shortest_paths_many(graphs, max_hops=5, max_dist=20)
    for (ei, n), (spd, path) in zip(graphs, batched):
        _check_against_networkx(ei, n, spd, path, 5, 20)
    for (ei, n), (spd, path) in list(zip(graphs, batched))[:10]:  # one-by-one == batched
        spd1, path1 = shortest_paths(ei, n, 5, 20)
        np.testing.assert_array_equal(spd1, spd)
        np.testing.assert_array_equal(path1, path)


@pytest.mark.parametrize("seed", range(4))
def test_random_directed_graphs_with_self_loops_and_multi_edges(seed):
    rng = np.random.default_rng(seed)
    graphs = []
    for n in [1, 2, 7, 40, 64, 65, 130]:  # 64/65/130: one, two and three bitset words
        m = int(rng.integers(0, 3 * n))
        graphs.append((rng.integers(0, n, size=(2, m)), n))
    max_hops, max_dist = int(rng.integers(1, 8)), int(rng.integers(1, 12))
    for (ei, n), (spd, path) in zip(graphs, shortest_paths_many(graphs, max_hops, max_dist)):
        _check_against_networkx(ei, n, spd, path, max_hops, max_dist)


def test_benzene_known_values():
    ei, n = _edges("c1ccccc1")
    spd, path = shortest_paths(ei, n, max_hops=5, max_dist=20)
    d = spd.reshape(6, 6)
    assert d[0].tolist() == [0, 1, 2, 3, 2, 1]
    assert (path[0 * 6 + 3] >= 0).sum() == 3 and (path[0 * 6 + 1] >= 0).sum() == 1
    assert (path[np.arange(6) * 7] == -1).all()  # no path from an atom to itself


def test_cap_at_max_dist_keeps_true_first_hops():
    n = 40  # a chain: the distance is |i - j|
    a = np.arange(n - 1)
    ei = np.concatenate([np.stack([a, a + 1]), np.stack([a + 1, a])], axis=1)
    spd, path = shortest_paths(ei, n, max_hops=3, max_dist=7)
    i, j = np.divmod(np.arange(n * n), n)
    np.testing.assert_array_equal(spd, np.minimum(np.abs(i - j), 7))
    _check_against_networkx(ei, n, spd, path, 3, 7)
    far = path[0 * n + 39]  # 39 hops away: the first 3 hops still go 0 -> 1 -> 2 -> 3
    assert ei[1, far].tolist() == [1, 2, 3]


def test_no_edges_single_atom_and_empty_graph():
    spd, path = shortest_paths(np.zeros((2, 0), np.int64), 1, 5, 20)
    assert spd.tolist() == [0] and path.tolist() == [[-1] * 5]
    spd, path = shortest_paths(np.zeros((2, 0), np.int64), 3, max_hops=2, max_dist=20)
    assert spd.reshape(3, 3).tolist() == [[0, 255, 255], [255, 0, 255], [255, 255, 0]]
    assert (path == -1).all() and path.shape == (9, 2)
    spd, path = shortest_paths(np.zeros((2, 0), np.int64), 0, 5, 20)
    assert spd.shape == (0,) and path.shape == (0, 5)
    spd, path = shortest_paths(np.array([[0, 1], [1, 0]]), 2, max_hops=0, max_dist=20)
    assert spd.tolist() == [0, 1, 1, 0] and path.shape == (4, 0)


def test_disconnected_graph_memory_is_bounded_by_output():
    # two 150-atom chains: pairs across them are unreachable and must stay pathless and cheap
    a = np.arange(149)
    one = np.concatenate([np.stack([a, a + 1]), np.stack([a + 1, a])], axis=1)
    ei, n = np.concatenate([one, one + 150], axis=1), 300
    tracemalloc.start()
    spd, path = shortest_paths(ei, n, max_hops=5, max_dist=20)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    out_bytes = spd.nbytes + path.nbytes  # 90 KB + 900 KB
    assert peak < 12 * out_bytes, (peak, out_bytes)
    d = spd.reshape(n, n)
    assert (d[:150, 150:] == UNREACHABLE).all() and d[0, 149] == 20 and d[150, 151] == 1
    assert (path.reshape(n, n, 5)[:150, 150:] == -1).all()


def test_invalid_inputs_raise():
    with pytest.raises(ValueError, match="shape"):
        shortest_paths(np.zeros((3, 2), np.int64), 3, 5, 20)
    with pytest.raises(ValueError, match="outside"):
        shortest_paths(np.array([[0], [5]]), 3, 5, 20)
    with pytest.raises(ValueError, match="max_dist"):
        shortest_paths(np.array([[0], [1]]), 2, max_hops=5, max_dist=255)
