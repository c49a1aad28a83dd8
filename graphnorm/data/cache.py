"""Processed-data cache: featurized arrays in one torch file + a JSON manifest.

Layout::

    <root>/<dataset>/<source>-h<max_hops>-d<max_dist>/data.pt        all three splits
    <root>/<dataset>/<source>-h<max_hops>-d<max_dist>/manifest.json  key + sha256 of data.pt
    <root>/tables/<file>-<sha>-h<max_hops>-d<max_dist>/...           own tables (table_dataset)

`root` is the `root=` argument, else $GRAPHNORM_CACHE, else ``<checkout>/data/cache`` when
graphnorm runs from a source checkout, else ``~/.cache/graphnorm``. The manifest key holds
the cache format, the source checksum, the FeaturizerConfig and the label version, and
`save_cache`/`load_cache` add the chemistry code's sha (`graphnorm.chem.code`: the arrays
are that code's output, so an edit to it makes every cache stale). A cache
whose key differs (stale: e.g. written by an older format) or whose data.pt does not match
its recorded sha256 or does not load (corrupt) is reported with a warning and rebuilt, never
used. A split is stored as the featurizer made it (`pack_split`): each array field
concatenated over the split's molecules, plus atoms and edges per molecule, SMILES and
labels -- tensors, lists and strings only, so it loads with ``torch.load(weights_only=True)``.
`split_dataset` serves it as a PyG ``InMemoryDataset`` without building per-molecule objects.
"""
from __future__ import annotations

import json
import os
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import torch
from torch_geometric.data import Data, InMemoryDataset

from .files import atomic_write, repo_root, sha256_file, torch_save

ENV_CACHE = "GRAPHNORM_CACHE"
CACHE_FORMAT = 2  # 2: packed featurizer arrays (1: PyG-collated Data dicts)
DATA_FILE, MANIFEST_FILE = "data.pt", "manifest.json"


class CacheWarning(UserWarning):
    """A cached dataset was stale or corrupt and is being rebuilt."""


def cache_root(root: Optional[os.PathLike | str] = None) -> Path:
    if root is not None:
        return Path(root).expanduser()
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]).expanduser()
    repo = repo_root()
    if repo is not None:
        return repo / "data" / "cache"
    return Path.home() / ".cache" / "graphnorm"


def cache_dir(root: Path, name: str, source: str, featurizer) -> Path:
    return root / name / f"{source}-{featurizer.tag}"


class GraphDataset(InMemoryDataset):
    """One split: PyG in-memory storage of featurized molecules (Contract 2 fields + y)."""

    def __init__(self, data: Data, slices: dict, name: str = "", split: str = "",
                 transform: Optional[Callable] = None):
        super().__init__(root=None, transform=transform, log=False)
        self._data, self.slices = data, slices
        self.name, self.split = name, split

    def __repr__(self) -> str:
        return f"GraphDataset({self.name}/{self.split}, {len(self)} graphs)"

    def _selected(self, per_graph: torch.Tensor) -> torch.Tensor:
        return per_graph if self._indices is None else per_graph[torch.as_tensor(list(self.indices()))]

    def graph_sizes(self) -> torch.Tensor:
        """Atoms per graph, read from the storage offsets (no per-item ``Data`` built): [len]."""
        return self._selected(self.slices["x"].diff())

    def molecule_rows(self, key: str) -> torch.Tensor:
        """A one-row-per-molecule field (``descriptors``, ``fingerprint``) of the selected
        graphs, read from storage (no per-item ``Data`` built): [len, width]."""
        return self._selected(self._data[key])

    def targets(self) -> torch.Tensor:
        """Labels as [len, num_tasks] float (one ``y`` row per graph)."""
        y = self._data.y.float()
        return self._selected(y.reshape(self.slices["y"].numel() - 1, -1))


class DatasetSplits(dict):
    """``{"train", "val", "test"} -> GraphDataset`` plus where the data came from.

    `checksum` is the sha256 of the cache key (see `datasets.key_digest`); `source_checksum`
    the sha256 of the raw or official source files; `manifest` the whole cache manifest.
    """

    def __init__(self, splits: dict, manifest: dict, path: Optional[Path] = None):
        super().__init__(splits)
        self.manifest = manifest
        self.name = manifest.get("name")
        self.source = manifest.get("source")
        self.checksum = manifest.get("data_sha256")
        self.source_checksum = manifest.get("source_checksum")
        self.path = path

    @property
    def info(self) -> dict:
        from .info import DATASET_INFO

        return DATASET_INFO[self.name]


def pack_split(graphs: list[dict], smiles: list[str], y: Optional[np.ndarray] = None) -> dict:
    """The stored form of a split: featurizer arrays (graphnorm.chem.FIELDS, and the
    fingerprints [G, bits] and descriptors [G, D] when featurized with them) concatenated over molecules (edge_index
    along its edge axis, ids stay local), ``num_nodes`` and ``num_edges`` per molecule,
    ``smiles``, and ``y`` float32 [G, T] when given."""
    from graphnorm.chem.featurize import FIELDS, MOLECULE_FIELDS

    def cat(key: str, axis: int = 0) -> torch.Tensor:
        return torch.from_numpy(np.concatenate([g[key] for g in graphs], axis=axis))

    keys = FIELDS + tuple(k for k in MOLECULE_FIELDS if graphs and k in graphs[0])
    out = {k: cat(k, axis=1 if k == "edge_index" else 0) for k in keys}
    out["num_nodes"] = torch.tensor([g["x"].shape[0] for g in graphs], dtype=torch.long)
    out["num_edges"] = torch.tensor([g["edge_index"].shape[1] for g in graphs], dtype=torch.long)
    out["smiles"] = list(smiles)
    if y is not None:
        out["y"] = torch.as_tensor(np.asarray(y, dtype=np.float32).reshape(len(graphs), -1))
    return out


def _offsets(sizes: torch.Tensor) -> torch.Tensor:
    return torch.cat([sizes.new_zeros(1), sizes.cumsum(0)])


def split_dataset(packed: dict, name: str, split: str,
                  y: Optional[torch.Tensor] = None) -> GraphDataset:
    """A `GraphDataset` over a packed split; ``y`` [G, T] replaces stored labels (own tables
    attach each run's targets to one cached featurization)."""
    nodes, edges = packed["num_nodes"], packed["num_edges"]
    count = torch.arange(len(nodes) + 1)
    y = packed.get("y") if y is None else y
    storage = {k: packed[k] for k in ("x", "edge_index", "edge_attr", "spd", "path")}
    smiles = packed["smiles"]
    # PyG serves a one-graph storage whole (no slicing): its SMILES must be the string itself
    storage.update(num_nodes=int(nodes.sum()), smiles=smiles[0] if len(smiles) == 1 else smiles)
    slices = {"x": _offsets(nodes), "edge_index": _offsets(edges), "edge_attr": _offsets(edges),
              "spd": _offsets(nodes * nodes), "path": _offsets(nodes * nodes), "smiles": count}
    if y is not None:
        storage["y"], slices["y"] = y, count
    for key in ("fingerprint", "descriptors"):  # one row per molecule
        if key in packed:
            storage[key], slices[key] = packed[key], count
    storage["_num_nodes"] = nodes.tolist()  # items get num_nodes without inferring it
    return GraphDataset(Data.from_dict(storage), slices, name, split)


def _with_code(key: dict) -> dict:
    from graphnorm.chem.code import chem_code_sha

    return {**key, "chem_code": chem_code_sha()}


def save_cache(directory: Path, key: dict, payload: dict, extra: dict) -> dict:
    """Write data.pt then manifest.json (manifest last: a crash leaves no valid-looking
    cache). Returns the manifest."""
    key = _with_code(key)
    directory.mkdir(parents=True, exist_ok=True)
    data_path = directory / DATA_FILE
    atomic_write(data_path, lambda p: torch_save({"format": CACHE_FORMAT, **payload}, p))
    manifest = {**key, **extra, "data_file": DATA_FILE, "data_sha256": sha256_file(data_path),
                "data_bytes": data_path.stat().st_size,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    atomic_write(directory / MANIFEST_FILE,
                 lambda p: p.write_text(json.dumps(manifest, indent=2) + "\n"))
    return manifest


def load_cache(directory: Path, key: dict, fields: tuple = ()) -> Optional[tuple[dict, dict]]:
    """(payload, manifest) when a valid cache for `key` (holding ``fields``) exists, else None.

    Stale or corrupt caches give a `CacheWarning` saying why; a missing cache is silent.
    """
    key = _with_code(key)
    data_path, man_path = directory / DATA_FILE, directory / MANIFEST_FILE
    if not data_path.exists() and not man_path.exists():
        return None

    def reject(why: str) -> None:
        warnings.warn(f"processed cache {directory} is {why}; rebuilding it", CacheWarning,
                      stacklevel=3)

    try:
        manifest = json.loads(man_path.read_text())
        if not isinstance(manifest, dict):
            raise ValueError("manifest is not a JSON object")
    except (OSError, ValueError) as e:
        return reject(f"corrupt (unreadable manifest: {e})")
    changed = [f"{k}: cached {manifest.get(k)!r} != {v!r}" for k, v in key.items()
               if manifest.get(k) != v]
    if changed:
        return reject("stale (" + "; ".join(changed) + ")")
    if not data_path.is_file():
        return reject(f"corrupt ({DATA_FILE} is missing)")
    if sha256_file(data_path) != manifest.get("data_sha256"):
        return reject(f"corrupt ({DATA_FILE} does not match the sha256 in its manifest)")
    try:
        # mapped, not read: the file's pages stay shared page cache, so two processes on one
        # cache (two pre-training runs side by side) hold it once; copy-on-write keeps it intact
        payload = torch.load(data_path, weights_only=True, mmap=True)
        if payload.get("format") != CACHE_FORMAT or not set(fields) <= set(payload):
            raise ValueError("unexpected layout")
    except Exception as e:  # unpickling garbage raises many exception types
        return reject(f"corrupt (cannot load {DATA_FILE}: {type(e).__name__}: {e})")
    return payload, manifest
