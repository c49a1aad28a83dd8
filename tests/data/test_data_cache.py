"""Processed-data cache: round trip, weights_only loading, stale and corrupt detection."""
from __future__ import annotations

import json
import shutil
import warnings

import pytest
import torch
from torch_geometric.data import Data

from graphnorm.data import CacheWarning, load_dataset
from graphnorm.data.cache import (DATA_FILE, MANIFEST_FILE, cache_root, collate_split,
                                  load_cache, save_cache, to_datasets)

KEY = {"format": 1, "name": "zinc-subset", "source": "raw", "source_checksum": "abc",
       "featurizer_version": "1", "label_version": "x", "max_hops": 2, "max_dist": 20}


def _graph(n: int, y: float) -> Data:
    ei = torch.tensor([[i for i in range(n - 1)] + [i + 1 for i in range(n - 1)],
                       [i + 1 for i in range(n - 1)] + [i for i in range(n - 1)]])
    return Data(x=torch.arange(n).view(-1, 1), edge_index=ei,
                edge_attr=torch.zeros(ei.shape[1], 1, dtype=torch.long),
                spd=torch.zeros(n * n, dtype=torch.uint8),
                path=torch.full((n * n, 2), -1, dtype=torch.int16), num_nodes=n,
                smiles="C" * n, y=torch.tensor([[y]]))


def _payload():
    return {s: collate_split([_graph(n, float(n)) for n in (2, 3, 4)])
            for s in ("train", "val", "test")}


def test_round_trip_weights_only(tmp_path):
    manifest = save_cache(tmp_path, KEY, _payload(), {"note": 1})
    assert json.loads((tmp_path / MANIFEST_FILE).read_text())["data_sha256"] == \
        manifest["data_sha256"]
    torch.load(tmp_path / DATA_FILE, weights_only=True)  # plain tensors/lists/str only
    splits, man = load_cache(tmp_path, KEY)
    ds = to_datasets(splits, "zinc-subset")
    g = ds["val"][1]
    assert g.num_nodes == 3 and g.smiles == "CCC" and g.edge_index.tolist() == [[0, 1, 1, 2],
                                                                               [1, 2, 0, 1]]
    assert float(g.y) == 3.0 and g.path.dtype == torch.int16 and len(ds["train"]) == 3


@pytest.mark.parametrize("damage", ["garbage", "truncate", "bitflip", "delete", "manifest"])
def test_corrupt_cache_is_detected(tmp_path, damage):
    save_cache(tmp_path, KEY, _payload(), {})
    path = tmp_path / DATA_FILE
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a torch file" * 100)
    elif damage == "truncate":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "bitflip":
        path.write_bytes(raw[:-100] + bytes([raw[-100] ^ 1]) + raw[-99:])
    elif damage == "delete":
        path.unlink()
    else:
        (tmp_path / MANIFEST_FILE).write_text("{ not json")
    with pytest.warns(CacheWarning, match="corrupt"):
        assert load_cache(tmp_path, KEY) is None


def test_stale_cache_is_detected(tmp_path):
    save_cache(tmp_path, KEY, _payload(), {})
    for field, value in [("featurizer_version", "2"), ("source_checksum", "def"),
                         ("max_hops", 3), ("label_version", "y")]:
        with pytest.warns(CacheWarning, match=f"stale.*{field}"):
            assert load_cache(tmp_path, {**KEY, field: value}) is None
    assert load_cache(tmp_path, KEY) is not None  # nothing was deleted by the checks
    assert load_cache(tmp_path / "empty", KEY) is None  # no cache: silent


def test_cache_root_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHNORM_CACHE", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("GRAPHNORM_CACHE")
    assert cache_root().parts[-2:] == ("data", "cache")  # running from the checkout


def test_corrupt_real_cache_is_rebuilt(zinc_subset, raw_dir, tmp_path):
    """Garbage in a real cached data.pt: warning, rebuild, identical content."""
    root = tmp_path / "cache"
    shutil.copytree(zinc_subset.path.parents[1], root)
    directory = root / zinc_subset.path.relative_to(zinc_subset.path.parents[1])
    (directory / DATA_FILE).write_bytes(b"\x00garbage" * 1000)
    with pytest.warns(CacheWarning, match="corrupt"):
        rebuilt = load_dataset("zinc-subset", raw_dir=raw_dir, root=root, progress=False)
    assert rebuilt.checksum == zinc_subset.checksum
    # builds are byte-for-byte reproducible
    assert rebuilt.manifest["data_sha256"] == zinc_subset.manifest["data_sha256"]
    for split in ("train", "val", "test"):
        a, b = rebuilt[split]._data, zinc_subset[split]._data
        for key in ("x", "edge_index", "edge_attr", "spd", "path", "y"):
            assert torch.equal(a[key], b[key]), (split, key)
        assert a.smiles == b.smiles
    # and the rebuilt cache is valid again: no warning, no rebuild
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        again = load_dataset("zinc-subset", raw_dir=raw_dir, root=root, progress=False)
    assert again.manifest["data_sha256"] == rebuilt.manifest["data_sha256"]
