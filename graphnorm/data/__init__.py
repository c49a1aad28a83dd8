"""Benchmark datasets: ZINC-subset, ZINC-full, ogbg-molhiv as cached PyG splits.

    from graphnorm.data import load_dataset, DATASET_INFO
    splits = load_dataset("zinc-subset")   # {"train", "val", "test"} -> GraphDataset
    splits["train"][0]      # Data(x, edge_index, edge_attr, spd, path, y, smiles)
    splits.checksum         # data checksum for metrics.json

Sources and cache layout: data/README.md.
"""
from .cache import ENV_CACHE, CacheWarning, DatasetSplits, GraphDataset, cache_root
from .datasets import DatasetUnavailableError, dataset_checksum, key_digest, load_dataset
from .info import (DATASET_INFO, SPLITS, DatasetError, SplitSizeError, check_split_sizes,
                   dataset_info)
from .raw import ENV_RAW_DIR, RawDataError

__all__ = [
    "CacheWarning", "DATASET_INFO", "DatasetError", "DatasetSplits", "DatasetUnavailableError",
    "ENV_CACHE", "ENV_RAW_DIR", "GraphDataset", "RawDataError", "SPLITS", "SplitSizeError",
    "cache_root", "check_split_sizes", "dataset_checksum", "dataset_info", "key_digest",
    "load_dataset",
]
