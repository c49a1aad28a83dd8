"""`graphnorm benchmark`: outputs with runs faked by writing their metrics.json, then real
tiny runs (resume, pairing, skipping finished runs, parallel jobs, several models)."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import graphnorm.bench.benchmark as bench
import graphnorm.bench.summary as summary
from graphnorm.bench.benchmark import run_benchmark
from graphnorm.train.config import TrainConfig
from faked_bench import _fake_train


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
    # every seed 0.05 lower than ln: a zero-width interval, won on all three seeds
    assert "-0.0500 ± 0.0000, 95% CI [-0.0500, -0.0500], better on 3/3 (n=3)" in (
        out / "summary.md").read_text()


def test_parallel_benchmark_fails_once_when_the_data_cannot_be_loaded(tmp_path, monkeypatch):
    from graphnorm.data import DatasetUnavailableError

    def unavailable(self, stage=None):
        raise DatasetUnavailableError("cannot load 'zinc-subset': no raw directory")

    launched = []
    monkeypatch.setattr("graphnorm.train.datamodule.GraphDataModule.setup", unavailable)
    monkeypatch.setattr(bench, "run_parallel", lambda *a: launched.append(a))
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", max_epochs=1, progress=False)
    with pytest.raises(DatasetUnavailableError, match="no raw directory"):
        run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=2, out=tmp_path, jobs=2)
    assert launched == []  # no worker was started


@pytest.mark.parametrize("metric,wins", [("mae", 1), ("rocauc", 2)])
def test_paired_difference_has_a_t_interval_and_counts_seeds_won(metric, wins):
    import pandas as pd
    from scipy import stats

    ln, sep = [1.0, 2.0, 3.0], [1.1, 1.9, 3.3]
    runs = pd.DataFrame({"norm": ["ln"] * 3 + ["sep"] * 3, "seed": [0, 1, 2] * 2,
                         f"test_{metric}": ln + sep})
    p = summary.paired_vs_baseline(runs, "sep", metric)
    ci = stats.ttest_rel(sep, ln).confidence_interval(0.95)
    assert p["paired_diff_mean"] == pytest.approx(0.1)
    assert (p["paired_ci95_low"], p["paired_ci95_high"]) == pytest.approx((ci.low, ci.high))
    assert p["paired_ci95_low"] < 0 < p["paired_ci95_high"]  # this spread supports no verdict
    assert p["paired_wins"] == wins and p["paired_seeds"] == 3
    one = summary.paired_vs_baseline(runs[runs.seed == 0], "sep", metric)
    assert one["paired_seeds"] == 1 and np.isnan(one["paired_ci95_low"])  # one pair: no interval
    assert summary.paired_cell(one) == f"+0.1000, better on {wins - 1}/1 (n=1)"  # and no spread


def test_summary_scores_the_ensemble_of_seeds_from_their_predictions(faked):
    out, df, _ = faked
    assert df.ensemble_test_mae.tolist() == pytest.approx([0.0, 0.0])  # the errors cancel
    assert df.ensemble_seeds.tolist() == [3, 3]
    assert "ln test mae 0.0000 (n=3)" in (out / "summary.md").read_text()
    other = out / "runs" / "ln" / "seed2" / "predictions_test.csv.gz"
    pd.read_csv(other).assign(**{"y:target": [9.0, 9.0, 9.0, 9.0]}).to_csv(other, index=False)
    again = summary.seed_ensemble(out, "ln", [0, 1, 2], "mae")  # different labels: no ensemble
    assert again["ensemble_seeds"] == 0 and np.isnan(again["ensemble_test_mae"])
    assert summary.seed_ensemble(out, "ln", [0], "mae")["ensemble_seeds"] == 0  # one run is no ensemble


def test_two_models_are_also_scored_as_a_pair_ensemble_per_seed(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "train_run", _fake_train)
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", max_epochs=3, progress=False)
    bench.run_benchmark(cfg, norms=["sep:bn+ln"], seeds=3, out=tmp_path, models=["graphormer", "gine"])
    meta = json.loads((tmp_path / "summary.json").read_text())
    (pair,) = meta["model_pair_ensembles"]
    # alone each has MAE 0.3, 0, 0.3 over the seeds; their pair cancels on every seed
    assert pair == {"members": "sep:bn+ln + gine", "seeds": 3, "test_mae_mean": 0.0, "test_mae_std": 0.0,
                    "all_runs": 6, "all_runs_test_mae": 0.0}
    text = (tmp_path / "summary.md").read_text()
    assert "sep:bn+ln + gine test mae 0.0000 ± 0.0000 (n=3)" in text
    assert "sep:bn+ln + gine test mae 0.0000 (6 runs)" in text
    # gine seed 0 off by +0.9 and seed 2 by -0.9 (were +0.3 and -0.3): the pairs of seeds 0 and 2
    # err by +0.3 and -0.3 (MAE 0.2 over the seeds), the mean of all six runs by 0
    runs = summary.load_runs(tmp_path)
    for seed, offset in ((0, 0.9), (2, -0.9)):
        path = tmp_path / "runs" / "gine" / f"seed{seed}" / "predictions_test.csv.gz"
        pd.read_csv(path).assign(**{"pred:target": lambda f: f["y:target"] + offset}).to_csv(path, index=False)
    (pair,) = summary.model_pair_ensembles(tmp_path, runs, "mae")
    assert pair["test_mae_mean"] == pytest.approx(0.2)
    assert pair["all_runs_test_mae"] == pytest.approx(0.0, abs=1e-9)
    path.unlink()
    (pair,) = summary.model_pair_ensembles(tmp_path, runs, "mae")
    assert pair["seeds"] == 2  # seed 2 lacks one
    assert pair["all_runs"] == 6 and np.isnan(pair["all_runs_test_mae"])  # a run without predictions
    assert summary.model_pair_ensembles(tmp_path, runs[runs.model == "graphormer"], "mae") == []


def _write_log(path: Path, column: str, values) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"epoch": range(len(values)), column: values}).to_csv(path, index=False)
    return path


def test_summary_says_whether_the_validation_curves_flattened(faked, tmp_path):
    out, _, _ = faked
    logs = [out / "runs" / "ln" / f"seed{k}" / "logs" / "metrics.csv" for k in (0, 1)]
    # seed 0 still improves by 0.01 in its last 2 of 10 epochs; seed 1 is flat
    _write_log(logs[0], "val/mae", [1.0, 0.8, 0.6, 0.5, 0.45, 0.42, 0.41, 0.40, 0.39, 0.40])
    _write_log(logs[1], "val/mae", [0.9, 0.7] + [0.5] * 8)
    gain = summary.late_gain(logs + [out / "missing.csv"], "mae")
    assert gain == pytest.approx({"val_late_gain_mean": 0.005, "val_late_gain_max": 0.01})
    df = summary.summarize(out)
    assert df.set_index("norm").loc["ln", "val_late_gain_max"] == pytest.approx(0.01)
    assert np.isnan(df.set_index("norm").loc["sep:bn+ln", "val_late_gain_mean"])  # no logs
    assert "flattened? " in (out / "summary.md").read_text() and "ln 0.0050 / 0.0100" in (out / "summary.md").read_text()
    rising = _write_log(tmp_path / "auc.csv", "val/rocauc", [0.5, 0.6, 0.7, 0.72, 0.74, 0.75, 0.76, 0.77, 0.78, 0.80])
    assert summary.late_gain([rising], "rocauc")["val_late_gain_max"] == pytest.approx(0.03)
    short = _write_log(tmp_path / "short.csv", "val/mae", [0.9, 0.5, 0.4])  # too few epochs to say
    assert np.isnan(summary.late_gain([short], "mae")["val_late_gain_mean"])


def test_labelled_stream_names_every_line_once():
    import io

    buf = io.StringIO()
    out = bench._Labelled(buf, "[ln seed 0] ")
    for piece in ("epoch 1: val/mae 0.5", " (3 s)\n", "\n", "a\nb\n"):
        out.write(piece)
    assert buf.getvalue() == "[ln seed 0] epoch 1: val/mae 0.5 (3 s)\n[ln seed 0] \n[ln seed 0] a\n[ln seed 0] b\n"
    assert not out.isatty()  # no progress bars from several processes on one terminal


def test_json_safe_turns_numpy_and_nan_into_plain_json():
    import numpy as np

    obj = {"a": np.float64("nan"), "b": [np.int64(3), float("inf"), 1.5], "c": "x"}
    assert summary.json_safe(obj) == {"a": None, "b": [3, None, 1.5], "c": "x"}
    json.dumps(summary.json_safe(obj), allow_nan=False)


def test_each_finished_run_prints_its_test_metric(faked):
    _, _, printed = faked
    lines = [line for line in printed.splitlines() if "finished" in line]
    assert len(lines) == 6  # one per run
    assert "run 1/6: ln seed 0 finished: test mae 0.5500" in lines[0]
    assert "run 6/6: sep:bn+ln seed 2 finished: test mae 0.7000" in lines[5]
    # seed-major: seed 0 of both norms runs before seed 1 of either (pairs finish together)
    assert "run 2/6: sep:bn+ln seed 0" in lines[1] and "run 3/6: ln seed 1" in lines[2]


# ---- real (tiny) training runs -------------------------------------------------------
def test_benchmark_summary_files_and_pairing(real_bench):
    out, _, df = real_bench
    for name in ("summary.csv", "summary.json", "summary.md", "summary.png", "curves.png"):
        assert (out / name).is_file(), name
    assert df.norm.tolist() == ["ln", "sep:bn+ln"] and df.seeds.tolist() == [2, 2]
    runs = {(r["norm"], r["seed"]): r["test_mae"] for r in
            (json.loads(p.read_text()) for p in out.glob("runs/*/seed*/metrics.json"))}
    sep = df.set_index("norm").loc["sep:bn+ln"]
    diffs = [runs[("sep:bn+ln", s)] - runs[("ln", s)] for s in (0, 1)]
    assert sep.paired_diff_mean == pytest.approx(sum(diffs) / 2)
    assert sep.test_mae_mean == pytest.approx((runs[("sep:bn+ln", 0)] + runs[("sep:bn+ln", 1)]) / 2)
    assert "± " in (out / "summary.md").read_text()


def test_benchmark_skips_finished_runs(real_bench, capsys):
    out, cfg, _ = real_bench
    stamp = {p: p.stat().st_mtime for p in out.glob("runs/*/seed*/metrics.json")}
    run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=2, out=out)
    assert "run 4/4: sep:bn+ln seed 1 done, skipped" in capsys.readouterr().out
    assert {p: p.stat().st_mtime for p in stamp} == stamp


@pytest.mark.slow
def test_parallel_benchmark_matches_sequential_runs(real_bench, tmp_path, capfd):
    import dataclasses

    out, cfg, _ = real_bench
    df = run_benchmark(dataclasses.replace(cfg, progress=True), norms=["ln", "sep:bn+ln"],
                       seeds=1, out=tmp_path, jobs=2)
    assert df.seeds.tolist() == [1, 1]
    printed = capfd.readouterr().out  # the workers' epoch lines, each named by its run
    assert "[ln seed 0] epoch 1:" in printed and "[sep:bn+ln seed 0] epoch 1:" in printed
    for norm in ("ln", "sep-bn-ln"):
        seq = json.loads((out / "runs" / norm / "seed0" / "metrics.json").read_text())
        par = json.loads((tmp_path / "runs" / norm / "seed0" / "metrics.json").read_text())
        assert par["test_mae"] == pytest.approx(seq["test_mae"], rel=1e-5), norm


def test_benchmark_rejects_unknown_norm_before_training(real_bench, tmp_path):
    _, cfg, _ = real_bench
    with pytest.raises(ValueError, match="unknown norm spec"):
        run_benchmark(cfg, norms=["ln", "groupnorm"], seeds=1, out=tmp_path)


def test_models_share_one_table_and_predict(real_bench, tmp_path):
    """--models graphormer,gine: the Graphormer per norm, the baseline once, one summary;
    the baseline's checkpoint serves predict and analyze like a Graphormer's."""
    import dataclasses

    from graphnorm.inference.predict import load_predictor

    _, cfg, _ = real_bench
    with pytest.warns(UserWarning, match="both set"):  # a 1-epoch run with a time budget, on purpose
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
    try:
        parent = psutil.Process(proc.pid)
        deadline = time.time() + 300  # generous: a loaded machine spawns slowly
        while time.time() < deadline and len(parent.children()) < 2:
            time.sleep(0.5)
        workers = parent.children(recursive=True)
        assert len(workers) >= 2
        time.sleep(3)  # let the workers start training
    finally:  # a failed check must not leave the benchmark training on the cores
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    gone, alive = psutil.wait_procs(workers, timeout=30)
    for p in alive:
        p.kill()
    assert not alive, f"{len(alive)} worker(s) outlived the benchmark"


def test_summary_only_trains_nothing_and_summarizes_the_finished_runs(faked, monkeypatch, capsys, tmp_path_factory):
    out, _, _ = faked

    def refuse(*args):
        raise AssertionError("--summary-only trained a run")

    monkeypatch.setattr(bench, "train_run", refuse)
    monkeypatch.setattr(bench, "run_parallel", refuse)
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", max_epochs=3, progress=False)
    (out / "summary.md").unlink()
    df = run_benchmark(cfg, norms=["ln", "sep:bn+ln", "bn"], seeds=4, out=out, jobs=2,
                       summary_only=True)
    assert "6 of 12 runs not finished, not trained" in capsys.readouterr().out
    assert df.norm.tolist() == ["ln", "sep:bn+ln"] and df.seeds.tolist() == [3, 3]
    assert (out / "summary.md").is_file()
    with pytest.raises(FileNotFoundError, match="no finished run"):
        run_benchmark(cfg, norms=["ln"], seeds=1, out=tmp_path_factory.mktemp("empty"),
                      summary_only=True)


def test_table_rows_show_no_spread_for_one_seed(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "train_run", _fake_train)
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", max_epochs=3, progress=False)
    bench.run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=1, out=tmp_path)
    rows = [line for line in (tmp_path / "summary.md").read_text().splitlines()
            if line.startswith(("| ln", "| sep:bn+ln"))]
    assert len(rows) == 2 and all("±" not in row.split("|")[2] for row in rows)
    three = (tmp_path / "three")
    bench.run_benchmark(cfg, norms=["ln"], seeds=3, out=three)
    assert " ± " in next(line for line in (three / "summary.md").read_text().splitlines()
                         if line.startswith("| ln"))


def test_a_summary_reads_each_prediction_file_once(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "train_run", _fake_train)
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", max_epochs=3, progress=False)
    bench.run_benchmark(cfg, norms=["sep:bn+ln"], seeds=2, out=tmp_path, models=["graphormer", "gine"])
    summary.summarize(tmp_path)  # the variants in the order found (run_benchmark's: its plan)
    before = json.loads((tmp_path / "summary.json").read_text())
    reads = []
    real = pd.read_csv
    monkeypatch.setattr(summary.pd, "read_csv", lambda p, *a, **k: reads.append(p) or real(p, *a, **k))
    summary.summarize(tmp_path)
    files = [p for p in reads if str(p).endswith("predictions_test.csv.gz")]
    assert len(files) == 4 and len(set(files)) == 4  # 2 models x 2 seeds, each once
    assert json.loads((tmp_path / "summary.json").read_text()) == before
    summary.summarize(tmp_path)  # a new summary reads the files again (they may have changed)
    assert len([p for p in reads if str(p).endswith("predictions_test.csv.gz")]) == 8


@pytest.mark.slow  # starts a process
def test_a_run_another_process_trains_is_skipped_and_left_out(tmp_path, monkeypatch, capsys):
    """Two benchmark commands on one campaign: each trains what the other is not training."""
    from held_runs import held_elsewhere

    from graphnorm.run_folder import hold_run

    def locked_fake(cfg):  # as processes.train_run: the fake run inside the folder's lock
        with hold_run(cfg.out):
            _fake_train(cfg)

    monkeypatch.setattr(bench, "train_run", locked_fake)
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", max_epochs=3, progress=False)
    busy = tmp_path / "runs" / "ln" / "seed1"
    with held_elsewhere(busy, tmp_path / "flag") as holder:
        df = bench.run_benchmark(cfg, norms=["ln"], seeds=3, out=tmp_path)
    out = capsys.readouterr().out
    assert f"run 2/3: ln seed 1 skipped: {busy} is being trained by process {holder.pid}" in out
    assert "1 run(s) are training in another process" in out
    assert not (busy / "metrics.json").exists()
    assert (tmp_path / "runs" / "ln" / "seed2" / "metrics.json").is_file()
    assert df.set_index("norm").loc["ln", "seeds"] == 2  # the summary of the finished ones
