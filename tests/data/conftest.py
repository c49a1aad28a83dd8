"""Data-layer fixtures. `raw_dir`, `cache_root` and `zinc_subset` come from tests/conftest.py
(one ZINC-subset build per session, shared with the training tests); the MolHIV build is
only needed here."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def molhiv(raw_dir, cache_root):
    from graphnorm.data import load_dataset

    if not (raw_dir / "molhiv").is_dir():
        if os.environ.get("GRAPHNORM_RAW_DIR"):
            pytest.fail(f"GRAPHNORM_RAW_DIR={raw_dir} has no molhiv/ directory")
        pytest.skip(f"{raw_dir} has no molhiv/ directory")
    return load_dataset("ogbg-molhiv", raw_dir=raw_dir, root=cache_root, progress=False)
