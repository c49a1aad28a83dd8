"""Shared fixtures: the real raw data directory and one dataset cache per test session."""
import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


def _raw_dir() -> Path:
    env = os.environ.get("GRAPHNORM_RAW_DIR")
    path = Path(env) if env else REPO.parent / "shared" / "datasets"
    return path.resolve()


@pytest.fixture(scope="session")
def raw_dir() -> Path:
    path = _raw_dir()
    if not (path / "zinc").is_dir():
        if os.environ.get("GRAPHNORM_RAW_DIR"):  # CI sets it: missing data is a failure
            pytest.fail(f"GRAPHNORM_RAW_DIR={path} has no zinc/ directory")
        pytest.skip("no raw data directory (set GRAPHNORM_RAW_DIR)")
    return path


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory) -> Path:
    """One cache for the whole session: ZINC-subset is featurized once, not per test."""
    return tmp_path_factory.mktemp("graphnorm-cache")


@pytest.fixture(scope="session")
def zinc_subset(raw_dir, cache_root):
    from graphnorm.data import load_dataset

    return load_dataset("zinc-subset", raw_dir=raw_dir, root=cache_root, progress=False)


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """Small tensors: extra OpenMP threads only add overhead (and spin on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
