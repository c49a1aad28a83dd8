"""Fixtures on the real offline raw directory ($GRAPHNORM_RAW_DIR, else ../shared/datasets
beside the checkout). Expensive builds happen once per session, in a temporary cache root."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _raw_dir() -> Path:
    env = os.environ.get("GRAPHNORM_RAW_DIR")
    return Path(env) if env else REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def raw_dir() -> Path:
    path = _raw_dir()
    if not (path / "zinc").is_dir() or not (path / "molhiv").is_dir():
        pytest.skip(f"raw data directory {path} not found (set GRAPHNORM_RAW_DIR)")
    return path


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("graphnorm-cache")


def _timed_load(name, raw_dir, root):
    from graphnorm.data import load_dataset

    start = time.perf_counter()
    splits = load_dataset(name, raw_dir=raw_dir, root=root, progress=False)
    splits.build_seconds = time.perf_counter() - start
    return splits


@pytest.fixture(scope="session")
def zinc_subset(raw_dir, cache_root):
    return _timed_load("zinc-subset", raw_dir, cache_root)


@pytest.fixture(scope="session")
def molhiv(raw_dir, cache_root):
    return _timed_load("ogbg-molhiv", raw_dir, cache_root)
