"""``faked``: a benchmark of two norms x three seeds whose runs are faked (tests/faked_bench.py)."""
import pytest

import graphnorm.bench.benchmark as bench
from faked_bench import _fake_train
from graphnorm.train.config import TrainConfig


@pytest.fixture
def faked(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "train_run", _fake_train)
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", max_epochs=3, progress=False)
    df = bench.run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=3, out=tmp_path)
    return tmp_path, df, capsys.readouterr().out
