"""`graphnorm benchmark` resumes and summarizes; `graphnorm analyze` writes its report."""
import json

import pandas as pd
import pytest

from graphnorm.benchmark import run_benchmark, summarize
from graphnorm.train.config import TrainConfig


@pytest.fixture(scope="module")
def bench(raw_dir, cache_root, zinc_subset, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", raw_dir=str(raw_dir), cache_root=str(cache_root),
                      max_epochs=1, batch_size=64, limit_train=128, limit_eval=64, progress=False)
    df = run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=2, out=out)
    return out, cfg, df


def test_benchmark_summary_files_and_pairing(bench):
    out, _, df = bench
    for name in ("summary.csv", "summary.json", "summary.md", "summary.png"):
        assert (out / name).is_file(), name
    assert df.norm.tolist() == ["ln", "sep:bn+ln"] and df.seeds.tolist() == [2, 2]
    runs = {(r["norm"], r["seed"]): r["test_mae"] for r in
            (json.loads(p.read_text()) for p in out.glob("runs/*/seed*/metrics.json"))}
    sep = df.set_index("norm").loc["sep:bn+ln"]
    diffs = [runs[("sep:bn+ln", s)] - runs[("ln", s)] for s in (0, 1)]
    assert sep.paired_diff_mean == pytest.approx(sum(diffs) / 2)
    assert sep.test_mae_mean == pytest.approx((runs[("sep:bn+ln", 0)] + runs[("sep:bn+ln", 1)]) / 2)
    assert "± " in (out / "summary.md").read_text()


def test_benchmark_skips_finished_runs(bench, capsys):
    out, cfg, _ = bench
    stamp = {p: p.stat().st_mtime for p in out.glob("runs/*/seed*/metrics.json")}
    run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=2, out=out)
    assert "run 4/4: sep:bn+ln seed 1 done, skipped" in capsys.readouterr().out
    assert {p: p.stat().st_mtime for p in stamp} == stamp


@pytest.mark.slow
def test_parallel_benchmark_matches_sequential_runs(bench, tmp_path):
    out, cfg, _ = bench
    df = run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=1, out=tmp_path, jobs=2)
    assert df.seeds.tolist() == [1, 1]
    for norm in ("ln", "sep-bn-ln"):
        seq = json.loads((out / "runs" / norm / "seed0" / "metrics.json").read_text())
        par = json.loads((tmp_path / "runs" / norm / "seed0" / "metrics.json").read_text())
        assert par["test_mae"] == pytest.approx(seq["test_mae"], rel=1e-5), norm


def test_benchmark_rejects_unknown_norm_before_training(bench, tmp_path):
    _, cfg, _ = bench
    with pytest.raises(ValueError, match="unknown norm spec"):
        run_benchmark(cfg, norms=["ln", "groupnorm"], seeds=1, out=tmp_path)


def test_analyze_compares_two_checkpoints(bench, raw_dir, cache_root, tmp_path, monkeypatch):
    from graphnorm.analysis.analyze import analyze

    out, _, _ = bench
    monkeypatch.setenv("GRAPHNORM_CACHE", str(cache_root))
    a = out / "runs" / "ln" / "seed0" / "best.ckpt"
    b = out / "runs" / "sep-bn-ln" / "seed0" / "best.ckpt"
    report = analyze(str(a), "zinc-subset", tmp_path, compare=str(b), raw_dir=str(raw_dir), limit=200)
    assert len(report["runs"]) == 2 and report["graphs"] == 200
    for r in report["runs"].values():
        assert r["vnode"]["n"] == 200 and r["tokens"]["n"] > 200
        assert -4.0 <= r["vnode"]["uniformity"] <= 0.0
        assert 0 < r["vnode"]["ev_1"] <= 1
    for name in ("analysis.json", "spectrum_vnode.png", "explained_variance_tokens.png",
                 "dimension_distributions.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_models_share_one_table_and_predict(bench, tmp_path):
    """--models graphormer,gine: the Graphormer per norm, the baseline once, one summary;
    the baseline's checkpoint serves predict and analyze like a Graphormer's."""
    import dataclasses

    from graphnorm.analysis.analyze import analyze
    from graphnorm.predict import load_predictor

    _, cfg, _ = bench
    df = run_benchmark(dataclasses.replace(cfg, max_time="5m"), norms=["sep:bn+ln"], seeds=1,
                       out=tmp_path, models=["graphormer", "gine"])
    assert df.norm.tolist() == ["sep:bn+ln", "gine"]
    gine = json.loads((tmp_path / "runs" / "gine" / "seed0" / "metrics.json").read_text())
    assert gine["model"] == "gine" and gine["budget_s"] == 300
    assert "gine" in (tmp_path / "summary.md").read_text()
    preds = load_predictor(tmp_path / "runs" / "gine" / "seed0" / "best.ckpt").predict(["CCO", "c1ccccc1"])
    assert preds.prediction.notna().all()
    with pytest.raises(ValueError, match="unknown model"):
        run_benchmark(cfg, norms=["ln"], seeds=1, out=tmp_path / "x", models=["gat"])


@pytest.mark.slow
def test_killed_benchmark_takes_its_workers_along(raw_dir, cache_root, zinc_subset, tmp_path):
    """kill -9 of `graphnorm benchmark --jobs 2` must not leave trainings running."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import psutil

    cmd = [str(Path(sys.executable).with_name("graphnorm")), "benchmark", "--dataset", "zinc-subset",
           "--preset", "tiny", "--raw-dir", str(raw_dir), "--cache-root", str(cache_root),
           "--norms", "ln,sep:bn+ln", "--seeds", "1", "--jobs", "2", "--max-time", "5m",
           "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parent = psutil.Process(proc.pid)
    deadline = time.time() + 120
    while time.time() < deadline and len(parent.children()) < 2:
        time.sleep(0.5)
    workers = parent.children(recursive=True)
    assert len(workers) >= 2
    time.sleep(3)  # let the workers start training
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    gone, alive = psutil.wait_procs(workers, timeout=30)
    for p in alive:
        p.kill()
    assert not alive, f"{len(alive)} worker(s) outlived the benchmark"
