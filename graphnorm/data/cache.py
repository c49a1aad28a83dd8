"""Processed-data cache: one torch file + a JSON manifest per (dataset, source, hops, dist).

Layout::

    <root>/<dataset>/<source>-h<max_hops>-d<max_dist>/data.pt        all three splits
    <root>/<dataset>/<source>-h<max_hops>-d<max_dist>/manifest.json  key + sha256 of data.pt

`root` is the `root=` argument, else $GRAPHNORM_CACHE, else ``<checkout>/data/cache`` when
graphnorm runs from a source checkout, else ``~/.cache/graphnorm``. The manifest key holds
the source checksum, featurizer and label versions, max_hops and max_dist. A cache whose key
differs (stale) or whose data.pt does not match its recorded sha256 or does not load
(corrupt) is reported with a warning and rebuilt, never used. data.pt holds only tensors,
lists, strings and numbers (``InMemoryDataset.collate`` output as plain dicts), so it loads
with ``torch.load(weights_only=True)``.
"""
from __future__ import annotations

import json
import os
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

import torch
from torch_geometric.data import Data, InMemoryDataset

from .info import SPLITS

ENV_CACHE = "GRAPHNORM_CACHE"
CACHE_FORMAT = 1
DATA_FILE, MANIFEST_FILE = "data.pt", "manifest.json"


class CacheWarning(UserWarning):
    """A cached dataset was stale or corrupt and is being rebuilt."""


def repo_root() -> Optional[Path]:
    """The source checkout graphnorm is imported from, or None for an installed wheel."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "graphnorm").is_dir():
        return root
    return None


def cache_root(root: Optional[os.PathLike | str] = None) -> Path:
    if root is not None:
        return Path(root).expanduser()
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]).expanduser()
    repo = repo_root()
    if repo is not None:
        return repo / "data" / "cache"
    return Path.home() / ".cache" / "graphnorm"


def cache_dir(root: Path, name: str, source: str, max_hops: int, max_dist: int) -> Path:
    return root / name / f"{source}-h{max_hops}-d{max_dist}"


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

    def targets(self) -> torch.Tensor:
        """Labels as [len, num_tasks] float (one ``y`` row per graph)."""
        y = self._data.y.float()
        return self._selected(y.reshape(self.slices["y"].numel() - 1, -1))


class DatasetSplits(dict):
    """``{"train", "val", "test"} -> GraphDataset`` plus where the data came from.

    `checksum` is the sha256 of the processed file (what a run trained on; reproducible
    for a given source, featurizer and label version); `source_checksum` the sha256 of
    the raw or official source files; `manifest` the whole cache manifest.
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


def collate_split(data_list: list[Data]) -> dict:
    """Plain-dict PyG storage of one split: {"data": Data.to_dict(), "slices": {...}}."""
    data, slices = InMemoryDataset.collate(data_list)
    return {"data": data.to_dict(), "slices": slices}


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    # Writers in parallel (e.g. one per DDP rank) each finish their own temp file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _torch_save(obj, path: Path) -> None:
    # Through a file object: torch.save(obj, path) names the zip records after the (temp)
    # file name, which would make identical builds differ byte-wise.
    with open(path, "wb") as f:
        torch.save(obj, f)


def save_cache(directory: Path, key: dict, splits: dict[str, dict], extra: dict) -> dict:
    """Write data.pt then manifest.json (manifest last: a crash leaves no valid-looking
    cache). Returns the manifest."""
    from .raw import sha256_file

    directory.mkdir(parents=True, exist_ok=True)
    data_path = directory / DATA_FILE
    payload = {"format": CACHE_FORMAT, "splits": splits}
    _atomic_write(data_path, lambda p: _torch_save(payload, p))
    manifest = {**key, **extra, "data_file": DATA_FILE, "data_sha256": sha256_file(data_path),
                "data_bytes": data_path.stat().st_size,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    _atomic_write(directory / MANIFEST_FILE,
                  lambda p: p.write_text(json.dumps(manifest, indent=2) + "\n"))
    return manifest


def load_cache(directory: Path, key: dict) -> Optional[tuple[dict, dict]]:
    """(splits payload, manifest) when a valid cache for `key` exists, else None.

    Stale or corrupt caches give a `CacheWarning` saying why; a missing cache is silent.
    """
    from .raw import sha256_file

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
        payload = torch.load(data_path, weights_only=True)
        splits = payload["splits"]
        if payload.get("format") != CACHE_FORMAT or set(splits) != set(SPLITS):
            raise ValueError("unexpected layout")
    except Exception as e:  # unpickling garbage raises many exception types
        return reject(f"corrupt (cannot load {DATA_FILE}: {type(e).__name__}: {e})")
    return splits, manifest


def to_datasets(splits: dict[str, dict], name: str) -> dict[str, GraphDataset]:
    return {s: GraphDataset(Data.from_dict(splits[s]["data"]), splits[s]["slices"], name, s)
            for s in SPLITS}
