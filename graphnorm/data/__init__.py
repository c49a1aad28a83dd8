"""Benchmark datasets: ZINC-subset, ZINC-full, ogbg-molhiv as cached PyG splits.

    from graphnorm.data import load_dataset, DATASET_INFO
    splits = load_dataset("zinc-subset")   # {"train", "val", "test"} -> GraphDataset
    splits["train"][0]      # Data(x, edge_index, edge_attr, spd, path, y, smiles)
    splits.checksum         # data checksum for metrics.json
    load_dataset("zinc-subset", featurizer=FeaturizerConfig(vocab="zinc", max_hops=20))

Sources and cache layout: data/README.md. The metadata (`info`) imports without torch, so
the CLI can offer its names; everything else loads on first use.
"""
from importlib import import_module

from .info import (DATASET_INFO, SPLITS, DatasetError, SplitSizeError, check_split_sizes,
                   dataset_info)

_LAZY = {
    "CacheWarning": "cache", "DatasetSplits": "cache", "GraphDataset": "cache",
    "ENV_CACHE": "cache", "cache_root": "cache",
    "DatasetUnavailableError": "datasets", "dataset_checksum": "datasets",
    "key_digest": "datasets", "load_dataset": "datasets",
    "ENV_RAW_DIR": "raw", "RawDataError": "raw",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted([*_LAZY, "DATASET_INFO", "DatasetError", "SPLITS", "SplitSizeError",
                  "check_split_sizes", "dataset_info"])
