"""Processed-data cache: round trip, weights_only loading, stale and corrupt detection."""
from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest
import torch

from graphnorm.chem import FeaturizerConfig
from graphnorm.data import SPLITS, CacheWarning, load_dataset
from graphnorm.data.cache import (CACHE_FORMAT, DATA_FILE, MANIFEST_FILE, cache_root,
                                  load_cache, pack_split, save_cache, split_dataset)

KEY = {"format": CACHE_FORMAT, "name": "zinc-subset", "source": "raw", "source_checksum": "abc",
       "featurizer": FeaturizerConfig(vocab="zinc", max_hops=2).to_dict(), "label_version": "x"}


def _graph(n: int) -> dict:
    """Featurizer arrays of a chain of n atoms."""
    ei = np.array([[i for i in range(n - 1)] + [i + 1 for i in range(n - 1)],
                   [i + 1 for i in range(n - 1)] + [i for i in range(n - 1)]], dtype=np.int64)
    return {"x": np.arange(n).reshape(-1, 1), "edge_index": ei.reshape(2, -1),
            "edge_attr": np.zeros((ei.shape[1], 1), dtype=np.int64),
            "spd": np.zeros(n * n, dtype=np.uint8), "path": np.full((n * n, 2), -1, dtype=np.int16)}


def _payload():
    sizes = (2, 3, 4)
    return {s: pack_split([_graph(n) for n in sizes], ["C" * n for n in sizes],
                          np.array(sizes, dtype=np.float32).reshape(-1, 1)) for s in SPLITS}


def test_round_trip_weights_only(tmp_path):
    manifest = save_cache(tmp_path, KEY, _payload(), {"note": 1})
    assert json.loads((tmp_path / MANIFEST_FILE).read_text())["data_sha256"] == \
        manifest["data_sha256"]
    torch.load(tmp_path / DATA_FILE, weights_only=True)  # plain tensors/lists/str only
    splits, man = load_cache(tmp_path, KEY, SPLITS)
    ds = {s: split_dataset(splits[s], "zinc-subset", s) for s in SPLITS}
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
    for field, value in [("featurizer", FeaturizerConfig(vocab="zinc").to_dict()),
                         ("source_checksum", "def"), ("label_version", "y")]:
        with pytest.warns(CacheWarning, match=f"stale.*{field}"):
            assert load_cache(tmp_path, {**KEY, field: value}) is None
    assert load_cache(tmp_path, KEY) is not None  # nothing was deleted by the checks
    assert load_cache(tmp_path / "empty", KEY) is None  # no cache: silent


def test_a_one_graph_split_serves_its_molecule():
    """PyG serves a one-graph storage whole, so its fields must be that graph's own."""
    ds = split_dataset(pack_split([_graph(3)], ["CCC"], np.array([[7.0]])), "x", "test")
    g = ds[0]
    assert len(ds) == 1 and g.smiles == "CCC" and g.num_nodes == 3 and float(g.y) == 7.0


def test_old_cache_format_is_rebuilt_with_a_clear_reason(tmp_path):
    """A cache written by an older graphnorm (format 1: PyG-collated dicts) is stale: the
    warning says so and the caller rebuilds; nothing crashes on the old layout."""
    old = {**KEY, "format": 1}
    save_cache(tmp_path, old, {s: {"data": {}, "slices": {}} for s in SPLITS}, {})
    with pytest.warns(CacheWarning, match=f"stale \\(format: cached 1 != {CACHE_FORMAT}\\); rebuilding"):
        assert load_cache(tmp_path, KEY, SPLITS) is None


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
