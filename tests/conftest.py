"""Shared fixtures: the real raw data directory and one dataset cache per test session.

Two tiers. `make test` (`pytest -m "not slow"`) runs in minutes and never reads ../shared;
`make test-all` (plain `pytest`, what CI runs) runs everything. A test is `slow` when

- it needs the real raw data: it requests `raw_dir`, directly or through another fixture
  (`zinc_subset`, `tiny_run`, `real_bench`, `molhiv`, ...); `pytest_collection_modifyitems`
  below marks these, so no list is kept by hand;
- or it carries `@pytest.mark.slow` / `pytestmark = pytest.mark.slow` in its file (the comment
  says why): tests that read ../shared without the fixture, start processes (DDP, tutorials,
  workers, a server, kill-and-resume), fuzz, or train or fit for more than ~5 CPU-seconds.

The end-to-end tests of the fast tier train on `tests/fixtures/zinc_properties.csv`
(`zinc_property_table`), a committed table of 500 real ZINC molecules.
"""
import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Hypothesis (under Schemathesis) keeps its example database and caches in ./.hypothesis/:
# a temporary folder instead, so a test run leaves the repository as it found it
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

set_hypothesis_home_dir(Path(os.environ.get("TMPDIR", "/tmp")) / "graphnorm-hypothesis")


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


@pytest.fixture(scope="session")
def tiny_run(raw_dir, cache_root, zinc_subset, tmp_path_factory):
    """(run directory, metrics) of one tiny training run, shared by the train, checkpoint,
    predict and analyze tests."""
    from graphnorm.train.run import train
    from tiny_runs import tiny_config

    out = tmp_path_factory.mktemp("run")
    return out, train(tiny_config(raw_dir, cache_root, out))


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """Small tensors: extra OpenMP threads only add overhead (and spin on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def zinc_property_table():
    """The first 500 molecules of the real ZINC test file with targets RDKit computes (so
    learning is checkable): Crippen logP, TPSA and a QED > 0.7 class; an ``id`` column.
    Committed as tests/fixtures/zinc_properties.csv (no raw data needed);
    tests/test_fixtures.py rebuilds it from the raw file (slow tier)."""
    import pandas as pd

    return pd.read_csv(FIXTURES / "zinc_properties.csv")


@pytest.fixture(scope="session")
def real_bench(raw_dir, cache_root, zinc_subset, tmp_path_factory):
    """(out, config, summary) of a tiny benchmark: ln and sep:bn+ln x 2 seeds, one epoch;
    shared by the benchmark and the seed-analysis tests (neither changes its runs)."""
    from graphnorm.bench.benchmark import run_benchmark
    from graphnorm.train.config import TrainConfig

    out = tmp_path_factory.mktemp("bench")
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", raw_dir=str(raw_dir), cache_root=str(cache_root),
                      max_epochs=1, batch_size=64, limit_train=128, limit_eval=64, progress=False)
    df = run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=2, out=out)
    return out, cfg, df


def pytest_collection_modifyitems(config, items):
    """The tier rule (module docstring): whatever needs `raw_dir` is `slow`."""
    for item in items:
        if "raw_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
