"""benchmark's outputs without training: runs are faked by writing their metrics.json
(the real runs are covered in tests/train/test_benchmark_analyze.py)."""
import json
from pathlib import Path

import pytest

import graphnorm.benchmark as bench
from graphnorm.train.config import TrainConfig


def _fake_train(cfg) -> None:
    """Stands in for a training run: writes the metrics.json a real run writes."""
    test = 0.5 + 0.1 * cfg.seed + (0.05 if cfg.norm == "ln" else 0.0)
    result = {"dataset": cfg.dataset, "norm": cfg.norm, "seed": cfg.seed, "metric": "mae",
              "val_mae": test - 0.02, "test_mae": test, "best_epoch": 3, "epochs": 3,
              "steps": 30, "wall_time_s": 12.5, "budget_s": None, "model": cfg.model_name,
              "params": 1234, "train_graphs_per_s": 100.0, "hardware": "cpu",
              "git_sha": "abc", "data_checksum": "0" * 64, "config": cfg.to_dict()}
    Path(cfg.out).mkdir(parents=True, exist_ok=True)
    (Path(cfg.out) / "metrics.json").write_text(json.dumps(result))


@pytest.fixture
def faked(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "_train_one", _fake_train)
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", max_epochs=3, progress=False)
    df = bench.run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=3, out=tmp_path)
    return tmp_path, df, capsys.readouterr().out


def _strict(text: str):
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)  # NaN / Infinity are not JSON


def test_summary_json_is_strict_json_with_null_for_missing_numbers(faked):
    out, df, _ = faked
    meta = _strict((out / "summary.json").read_text())
    rows = {r["norm"]: r for r in meta["variants"]}
    assert rows["ln"]["paired_diff_mean"] is None and rows["ln"]["paired_seeds"] == 0
    assert rows["sep:bn+ln"]["paired_diff_mean"] == pytest.approx(-0.05)
    assert rows["sep:bn+ln"]["test_mae_mean"] == pytest.approx(df.test_mae_mean[1])


def test_json_safe_turns_numpy_and_nan_into_plain_json():
    import numpy as np

    obj = {"a": np.float64("nan"), "b": [np.int64(3), float("inf"), 1.5], "c": "x"}
    assert bench.json_safe(obj) == {"a": None, "b": [3, None, 1.5], "c": "x"}
    json.dumps(bench.json_safe(obj), allow_nan=False)


def test_each_finished_run_prints_its_test_metric(faked):
    _, _, printed = faked
    lines = [line for line in printed.splitlines() if "finished" in line]
    assert len(lines) == 6  # one per run
    assert "run 1/6: ln seed 0 finished: test mae 0.5500" in lines[0]
    assert "run 6/6: sep:bn+ln seed 2 finished: test mae 0.7000" in lines[5]


def test_summary_plot_starts_at_zero_and_names_dataset_budget_and_seeds(faked):
    out, df, _ = faked
    runs = bench.load_runs(out)
    title = bench.plot_title(runs, "zinc-subset")
    assert "zinc-subset" in title and "3 epochs" in title and "seeds 0-2 (n=3)" in title
    fig = bench.plot_summary(df, "mae", out / "again.png", title=title)
    low, high = fig.axes[0].get_ylim()
    assert low == 0 and high >= (df.test_mae_mean + df.test_mae_std).max()
    assert fig.axes[0].get_title() == title and (out / "summary.png").stat().st_size > 0


def test_plot_title_names_a_time_budget():
    import pandas as pd

    runs = pd.DataFrame({"seed": [0, 2], "budget_s": [1500.0, 1500.0], "epochs": [9, 8]})
    assert bench.plot_title(runs, "ogbg-molhiv") == \
        "ogbg-molhiv: 25 min per run, seeds 0,2 (n=2), mean ± std"
