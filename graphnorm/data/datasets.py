"""`load_dataset`: one call from a benchmark name to cached, checked PyG splits.

Source choice: the raw directory (``raw_dir=``, else $GRAPHNORM_RAW_DIR, else
``<checkout>/data/raw`` when it holds the dataset's files) is preferred; otherwise the
official loaders download the data (PyG ``ZINC``, OGB ``ogbg-molhiv``) below
``<cache root>/official``. Both end in the same format; see `build` and `official`.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from pathlib import Path
from typing import Optional

from .cache import (CACHE_FORMAT, DatasetSplits, cache_dir, cache_root, load_cache, pack_split,
                    save_cache, split_dataset)
from .info import (MOLHIV_ACTIVES, MOLHIV_ROWS, SPLITS, DatasetError, check_split_sizes,
                   dataset_info)
from .raw import (ENV_RAW_DIR, RawDataError, default_raw_dir, expected_files, find_raw_files,
                  source_checksum)

# Version of the labels each source yields; part of the cache key.
MOLHIV_LABEL_VERSION = "hiv-active-1"
OFFICIAL_LABEL_VERSION = "official-1"


class DatasetUnavailableError(DatasetError):
    """Neither a raw directory nor the official download could provide the dataset."""


def _label_version(name: str, source: str) -> str:
    if source == "official":
        return OFFICIAL_LABEL_VERSION
    if name == "ogbg-molhiv":
        return MOLHIV_LABEL_VERSION
    from .labels import LABEL_VERSION

    return LABEL_VERSION


def _resolve_raw(name: str, raw_dir, source: Optional[str]) -> Optional[dict[str, Path]]:
    """Raw files to use, or None for the official loader. An explicit raw_dir / env var
    that lacks files is an error (the user asked for it); the checkout default is not."""
    if source == "official":
        return None
    explicit = raw_dir if raw_dir is not None else os.environ.get(ENV_RAW_DIR) or None
    if explicit is not None:
        return find_raw_files(name, explicit)
    default = default_raw_dir()
    if default is not None:
        try:
            return find_raw_files(name, default)
        except RawDataError:
            if source == "raw":
                raise
    if source == "raw":
        raise DatasetUnavailableError(_unavailable_message(name, "no raw directory given"))
    return None


def _unavailable_message(name: str, why: str) -> str:
    # CLI users need the flag, not the Python argument name
    return (f"cannot load {name!r}: {why}. Either pass --raw-dir DIR or set {ENV_RAW_DIR}=DIR "
            f"(Python: raw_dir=DIR), where DIR holds {', '.join(expected_files(name))} (see "
            f"data/README.md), or allow the official download (needs internet once).")


def _open_official(name: str, root: Path):
    """`official.open_official`, but a failed download leaves none of the (empty) folders it
    created behind, e.g. data/cache/official/zinc."""
    from .official import open_official

    target = _official_root(root) / ("ogb" if name == "ogbg-molhiv" else "zinc")
    new = [d for d in [*reversed(target.parents), target] if not d.exists()]  # outermost first
    try:
        return open_official(name, _official_root(root))
    except BaseException:
        if new:  # in the outermost new folder, remove every empty folder, deepest first
            for d in sorted([new[0], *new[0].rglob("*")], key=lambda q: len(q.parts), reverse=True):
                if d.is_dir() and not any(d.iterdir()):
                    d.rmdir()
        raise


def _key(name: str, source: str, checksum: str, featurizer) -> dict:
    return {"format": CACHE_FORMAT, "name": name, "source": source,
            "source_checksum": checksum, "featurizer": featurizer.to_dict(),
            "label_version": _label_version(name, source)}


def dataset_featurizer(name: str, featurizer=None):
    """The FeaturizerConfig to build `name` with: ``featurizer`` (checked against the
    dataset's vocabulary), else the default config of that vocabulary."""
    from graphnorm.chem import FeaturizerConfig

    vocab = dataset_info(name)["vocab"]
    if featurizer is None:
        return FeaturizerConfig(vocab=vocab)
    if featurizer.vocab != vocab:
        raise ValueError(f"{name} is featurized with the {vocab!r} vocabulary, not "
                         f"{featurizer.vocab!r}")
    featurizer.check_current(f"a {name} featurizer config")
    return featurizer


def key_digest(key: dict) -> str:
    """The data checksum reported to runs: sha256 of the cache key (source bytes + cache
    format + featurizer config + label version), identical wherever it is rebuilt."""
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def _build_raw(name: str, files: dict[str, Path], featurizer, workers: int,
               progress: bool) -> dict:
    from . import build, raw

    if name == "ogbg-molhiv":
        smiles, active = raw.read_molhiv(files["csv"])
        splits = build.build_molhiv(smiles, active, featurizer, workers, progress)
        total = sum(len(v[0]) for v in splits.values())
        if total != MOLHIV_ROWS:
            raise DatasetError(f"ogbg-molhiv: built {total} graphs, expected {MOLHIV_ROWS}")
        actives = {s: int(splits[s][2].sum()) for s in SPLITS}
        if actives != MOLHIV_ACTIVES:
            warnings.warn(f"ogbg-molhiv: actives per split {actives} differ from OGB's "
                          f"{MOLHIV_ACTIVES}; check {files['csv']}", stacklevel=3)
        return splits
    rows = raw.read_zinc_smiles(files)
    index = None
    if name == "zinc-subset":
        index = {s: raw.read_zinc_index(files[f"index_{s}"], len(rows[s])) for s in SPLITS}
        check_split_sizes(name, {s: len(v) for s, v in index.items()},
                          source=str(files["index_train"].parent))
    return build.build_zinc(name, rows, index, featurizer, workers, progress)


def _official_root(root: Path) -> Path:
    return root / "official"


def load_dataset(name: str, raw_dir: Optional[os.PathLike | str] = None,
                 root: Optional[os.PathLike | str] = None, featurizer=None,
                 progress: bool = True, *, source: Optional[str] = None,
                 workers: int = 2) -> DatasetSplits:
    """Featurized, cached, checked splits of a benchmark.

    Args:
        name: "zinc-subset", "zinc-full" or "ogbg-molhiv" (metadata: `DATASET_INFO[name]`).
        raw_dir: offline raw directory (default $GRAPHNORM_RAW_DIR, then <checkout>/data/raw).
        root: cache root (default $GRAPHNORM_CACHE, <checkout>/data/cache, ~/.cache/graphnorm).
        featurizer: a `graphnorm.chem.FeaturizerConfig` (default: the dataset vocabulary's
            defaults); it keys the cache.
        progress: tqdm bars while building.
        source: None (raw dir if available, else official), "raw" or "official".
        workers: featurization processes when building.

    Returns:
        `DatasetSplits`: {"train", "val", "test"} -> `GraphDataset` (PyG InMemoryDataset;
        items carry x, edge_index, edge_attr, spd, path, num_nodes, smiles, y float [1, T]),
        with `.checksum` (see `key_digest`), `.source_checksum`, `.manifest`, `.info`.
    """
    featurizer = dataset_featurizer(name, featurizer)
    if source not in (None, "raw", "official"):
        raise ValueError(f"source must be None, 'raw' or 'official', got {source!r}")
    root = cache_root(root)
    files = _resolve_raw(name, raw_dir, source)
    if files is not None:
        src, handle = "raw", None
        checksum, per_file = source_checksum(files)
    else:
        src, per_file = "official", {}
        try:
            handle, checksum = _open_official(name, root)
        except Exception as e:  # network, HTTP, extraction errors: all mean "not available"
            raise DatasetUnavailableError(_unavailable_message(
                name, f"no raw directory, and the official loader failed "
                      f"({type(e).__name__}: {e})")) from e
    key = _key(name, src, checksum, featurizer)
    directory = cache_dir(root, name, src, featurizer)
    cached = load_cache(directory, key, SPLITS)
    if cached is None:
        from .build import stage

        start = time.perf_counter()
        stage(progress, f"{name}: building from the {src} source (first use only; later runs "
                        f"read the cache {directory})")
        if src == "raw":
            _warn_unknown_copies(name, files, per_file)
            data = _build_raw(name, files, featurizer, workers, progress)
        else:
            from .official import convert_official

            data = convert_official(name, handle, featurizer, progress)
        check_split_sizes(name, {s: len(v[0]) for s, v in data.items()}, source=src)
        extra = _manifest_extra(data, files, per_file, time.perf_counter() - start)
        payload = {s: pack_split(*data.pop(s)) for s in SPLITS}  # pop: frees arrays early
        manifest = save_cache(directory, key, payload, extra)
        stage(progress, f"{name}: {sum(extra['split_sizes'].values()):,} graphs built and cached "
                        f"in {time.perf_counter() - start:.0f} s")
    else:
        payload, manifest = cached
    splits = {s: split_dataset(payload[s], name, s) for s in SPLITS}
    check_split_sizes(name, {s: len(v) for s, v in splits.items()}, source=str(directory))
    out = DatasetSplits(splits, manifest, directory)
    out.checksum = key_digest(key)
    return out


def _warn_unknown_copies(name: str, files: dict, per_file: dict) -> None:
    from .raw import unknown_copies

    odd = unknown_copies(name, files, per_file)
    if odd:
        warnings.warn(f"{name}: {', '.join(odd)} differ(s) from the reference copies "
                      f"(sha256 in graphnorm/data/raw.py); split-size checks still apply",
                      stacklevel=3)


def _manifest_extra(data: dict, files, per_file: dict, seconds: float) -> dict:
    from graphnorm import __version__

    from .build import label_stats

    return {"split_sizes": {s: len(data[s][0]) for s in SPLITS},
            "label_stats": {s: label_stats(data[s][2]) for s in SPLITS},
            "source_files": {k: {"path": str(files[k]), "sha256": v}
                             for k, v in per_file.items()} if files else {},
            "build_seconds": round(seconds, 1), "graphnorm_version": __version__}


def dataset_checksum(name: str, raw_dir: Optional[os.PathLike | str] = None,
                     root: Optional[os.PathLike | str] = None, featurizer=None,
                     source: Optional[str] = None) -> str:
    """`load_dataset(...).checksum` without building: hashes the raw (or official) files."""
    featurizer = dataset_featurizer(name, featurizer)
    files = _resolve_raw(name, raw_dir, source)
    if files is not None:
        return key_digest(_key(name, "raw", source_checksum(files)[0], featurizer))
    _, checksum = _open_official(name, cache_root(root))
    return key_digest(_key(name, "official", checksum, featurizer))
