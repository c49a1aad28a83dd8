"""``graphnorm benchmark``: norm variants x seeds, summarized in OGB leaderboard form.

Every (norm, seed) run is an ordinary training run in ``OUT/runs/<norm>/seed<k>``; a run
with a ``metrics.json`` is finished and skipped, one with only ``last.ckpt`` is resumed, so an
interrupted benchmark continues where it stopped. The summary is rebuilt from the
``metrics.json`` files alone. ``jobs`` > 1 trains that many runs at once in separate
processes (each with ``threads`` threads, default 1): on a CPU, independent one-thread runs
use the cores better than one run with many threads.
"""
from __future__ import annotations

import dataclasses
import io
import json
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from graphnorm.benchmark_plots import plot_curves, plot_summary


def slug(norm: str) -> str:
    return norm.replace(":", "-").replace("+", "-")


def variant(model: str | None, norm: str) -> str:
    """A run's row label: the norm for a Graphormer, the model name for a baseline GNN
    (baselines have their own fixed BatchNorms; ``--norms`` does not apply to them)."""
    return norm if model in (None, "graphormer") else model


def _what(cfg) -> str:
    return f"{variant(cfg.model_name, cfg.norm)} seed {cfg.seed}" + (" (resuming)" if cfg.resume else "")


def _train_one(cfg) -> None:
    from graphnorm.train.run import train

    train(cfg)


class _Labelled(io.TextIOBase):
    """A parallel worker's stdout/stderr: each line starts with its run's name, so the
    epoch lines of runs trained at once can be told apart in one log."""

    def __init__(self, stream, label: str):
        self.stream, self.label, self.line_start = stream, label, True

    def write(self, text: str) -> int:
        out = []
        for piece in text.splitlines(keepends=True):
            out.append(self.label + piece if self.line_start else piece)
            self.line_start = piece.endswith(("\n", "\r"))
        self.stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:  # several runs share the terminal: lines, never bars
        return False


def _train_labelled(cfg) -> None:
    label = f"[{variant(cfg.model_name, cfg.norm)} seed {cfg.seed}] "
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Labelled(sys.stdout, label), _Labelled(sys.stderr, label)
    try:
        _train_one(cfg)
    finally:
        sys.stdout, sys.stderr = streams


def run_benchmark(cfg, norms: Sequence[str], seeds: int, out: Path, jobs: int = 1,
                  models: Sequence[str] | None = None) -> pd.DataFrame:
    """Every (model, norm, seed): Graphormers once per norm, baseline GNNs once per seed;
    seed by seed, so that ``jobs`` parallel runs of one seed finish as a paired set."""
    from graphnorm.models import MODEL_NAMES
    from graphnorm.norms import build_norm

    for norm in norms:  # fail fast on a typo before hours of training
        build_norm(norm, 8)
    models = list(models or [cfg.model_name])
    for m in models:
        if m not in MODEL_NAMES:
            raise ValueError(f"unknown model {m!r}; choose from {', '.join(MODEL_NAMES)}")
    out.mkdir(parents=True, exist_ok=True)
    # seed-major: an interrupted campaign leaves whole seeds, i.e. paired comparisons
    plan = [(m, n, s) for s in range(seeds) for m in models
            for n in (norms if m == "graphormer" else [cfg.norm])]
    todo = []
    for k, (model, norm, seed) in enumerate(plan, 1):
        run_dir = out / "runs" / slug(variant(model, norm)) / f"seed{seed}"
        if (run_dir / "metrics.json").is_file():
            print(f"[benchmark] run {k}/{len(plan)}: {variant(model, norm)} seed {seed} done, skipped")
            continue
        resume = (run_dir / "last.ckpt").is_file()
        own = model == cfg.model_name  # a config's preset and `model:` overrides are its own
        # model's; the other models of --models run at their default preset
        todo.append((k, dataclasses.replace(cfg, model_name=model, norm=norm, seed=seed,
                                            out=str(run_dir), resume=resume,
                                            preset=cfg.preset if own else None,
                                            model=dict(cfg.model) if own else {})))
    if jobs <= 1:
        for k, run_cfg in todo:
            print(f"[benchmark] run {k}/{len(plan)}: {_what(run_cfg)}", flush=True)
            _train_one(run_cfg)
            print(finished_line(k, len(plan), run_cfg), flush=True)
    elif todo:
        _prepare_data(todo[0][1])
        _run_parallel(todo, len(plan), jobs)
    return summarize(out, list(dict.fromkeys(variant(m, n) for m, n, _ in plan)))


def finished_line(k: int, total: int, run_cfg) -> str:
    """One line per finished run with its result, read back from its metrics.json."""
    head = f"[benchmark] run {k}/{total}: {_what(run_cfg)}"
    try:
        r = json.loads((Path(run_cfg.out) / "metrics.json").read_text())
        m = r["metric"]
        return (f"{head} finished: test {m} {r[f'test_{m}']:.4f}, val {m} {r[f'val_{m}']:.4f} "
                f"(best epoch {r.get('best_epoch')}, {r.get('wall_time_s')} s)")
    except (OSError, ValueError, KeyError, TypeError) as err:  # never fail a benchmark on this
        return f"{head} finished (no result: {type(err).__name__}: {err})"


def _prepare_data(cfg) -> None:
    """Before parallel runs: featurize and cache the data once, here. Otherwise every worker
    builds the same cache at once, and a dataset that cannot be loaded fails every queued run
    with the same long message instead of failing once."""
    from graphnorm.train.datamodule import GraphDataModule

    GraphDataModule.from_config(cfg).setup()


def _die_with_parent() -> None:
    """In a worker: ask Linux to send SIGTERM when the benchmark process dies, so that killing
    a benchmark (or its session ending) does not leave trainings running on the cores."""
    import ctypes
    import signal
    import sys

    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _run_parallel(todo: list, total: int, jobs: int) -> None:
    """Runs in ``jobs`` spawned processes; a failed run is reported and the others go on."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    failed = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"),
                             initializer=_die_with_parent) as pool:
        futures = {}
        for k, run_cfg in todo:
            run_cfg = dataclasses.replace(run_cfg, threads=run_cfg.threads or 1)
            futures[pool.submit(_train_labelled, run_cfg)] = (k, run_cfg)
            print(f"[benchmark] run {k}/{total}: {_what(run_cfg)} queued", flush=True)
        for fut in as_completed(futures):
            k, run_cfg = futures[fut]
            name = f"{variant(run_cfg.model_name, run_cfg.norm)} seed {run_cfg.seed}"
            try:
                fut.result()
                print(finished_line(k, total, run_cfg), flush=True)
            except Exception as err:  # keep the other runs; report at the end
                failed.append(f"{name}: {type(err).__name__}: {err}")
                print(f"[benchmark] run {k}/{total}: {name} FAILED: {err}", flush=True)
    if failed:
        raise RuntimeError(f"{len(failed)} benchmark run(s) failed (rerun to retry them):\n"
                           + "\n".join(failed))


def load_runs(out: Path) -> pd.DataFrame:
    rows = [json.loads(p.read_text()) for p in sorted(out.glob("runs/*/seed*/metrics.json"))]
    if not rows:
        raise FileNotFoundError(f"no finished runs (runs/*/seed*/metrics.json) under {out}")
    runs = pd.DataFrame(rows)
    if "model" not in runs:
        runs["model"] = "graphormer"
    runs["model"] = runs["model"].fillna("graphormer")
    # the summary's rows are variants: a Graphormer's norm, or a baseline's model name
    runs["norm"] = [variant(m, n) for m, n in zip(runs["model"], runs["norm"])]
    return runs


def summarize(out: Path, norms: Sequence[str] | None = None) -> pd.DataFrame:
    runs = load_runs(out)
    metric = runs["metric"].iloc[0]
    norms = list(norms) if norms else list(dict.fromkeys(runs["norm"]))
    table = []
    for norm in norms:
        r = runs[runs["norm"] == norm]
        if r.empty:
            continue
        table.append({
            "norm": norm, "seeds": len(r),
            f"test_{metric}_mean": r[f"test_{metric}"].mean(), f"test_{metric}_std": r[f"test_{metric}"].std(ddof=0),
            f"val_{metric}_mean": r[f"val_{metric}"].mean(), f"val_{metric}_std": r[f"val_{metric}"].std(ddof=0),
            "params": int(r["params"].iloc[0]), "epochs": int(r["epochs"].max()),
            "wall_time_s_mean": r["wall_time_s"].mean(), "hardware": r["hardware"].iloc[0],
            **paired_vs_baseline(runs, norm, metric),
            **seed_ensemble(out, norm, sorted(r["seed"]), metric),
        })
    df = pd.DataFrame(table)
    df.to_csv(out / "summary.csv", index=False)
    meta = {"dataset": runs["dataset"].iloc[0], "metric": metric,
            "git_sha": sorted(set(runs["git_sha"])), "data_checksum": sorted(set(map(str, runs["data_checksum"]))),
            "variants": df.to_dict(orient="records")}
    # strict JSON: NaN (e.g. the reference variant's paired diff) becomes null
    (out / "summary.json").write_text(json.dumps(json_safe(meta), indent=2, allow_nan=False))
    (out / "summary.md").write_text(to_markdown(df, metric, meta["dataset"]))
    plot_summary(df, metric, out / "summary.png", title=plot_title(runs, meta["dataset"]))
    plot_curves(run_logs(out, runs), metric, out / "curves.png",
                title=plot_title(runs, meta["dataset"], stat=""))
    return df


def seed_ensemble(out: Path, name: str, seeds: Sequence[int], metric: str) -> dict:
    """Test metric of the seeds' mean prediction (an ensemble that costs the seeds' runs, not
    a per-run number), from each run's ``predictions_test.csv.gz``; NaN unless >= 2 runs have
    one and all scored the same molecules with the same labels."""
    import torch

    from graphnorm.task import compute_metric

    none = {f"ensemble_test_{metric}": np.nan, "ensemble_seeds": 0}
    paths = [out / "runs" / slug(name) / f"seed{s}" / "predictions_test.csv.gz" for s in seeds]
    if len(paths) < 2 or not all(p.is_file() for p in paths):
        return none
    frames = [pd.read_csv(p) for p in paths]
    labels = [c for c in frames[0].columns if c.startswith("y:")]
    if not labels or any(not f[["smiles", *labels]].equals(frames[0][["smiles", *labels]])
                         for f in frames[1:]):
        return none
    preds = [c.replace("y:", "pred:", 1) for c in labels]
    mean = np.mean([f[preds].to_numpy() for f in frames], axis=0)
    score = compute_metric(metric, torch.tensor(mean), torch.tensor(frames[0][labels].to_numpy()))
    return {f"ensemble_test_{metric}": float(score), "ensemble_seeds": len(frames)}


def run_logs(out: Path, runs: pd.DataFrame) -> dict[str, list[Path]]:
    """Variant -> the CSV logs of its runs, seeds in order."""
    return {name: [out / "runs" / slug(name) / f"seed{seed}" / "logs" / "metrics.csv"
                   for seed in sorted(runs.loc[runs["norm"] == name, "seed"])]
            for name in dict.fromkeys(runs["norm"])}


def json_safe(obj):
    """Numpy scalars -> Python numbers, NaN/inf -> None, recursively (dicts, lists)."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def plot_title(runs: pd.DataFrame, dataset: str, stat: str = ", mean ± std") -> str:
    """'<dataset>: <budget> per run, seeds 0-2 (n=3)'; the budget is a time when the runs
    had one (--max-time), else their epoch limit."""
    if "budget_s" in runs and runs["budget_s"].notna().any():
        budget = f"{float(runs['budget_s'].max()) / 60:g} min"
    else:
        configs = runs["config"] if "config" in runs else pd.Series(dtype=object)
        limits = {c.get("max_epochs") for c in configs if isinstance(c, dict)} - {None}
        epochs = max(limits) if limits else int(runs["epochs"].max())
        budget = f"{epochs} epochs"
    seeds = sorted({int(s) for s in runs["seed"]})
    span = (f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1))
            else ",".join(map(str, seeds)))
    return f"{dataset}: {budget} per run, seeds {span} (n={len(seeds)}){stat}"


def paired_vs_baseline(runs: pd.DataFrame, norm: str, metric: str, baseline: str = "ln") -> dict:
    """(variant - baseline) test metric over the seeds both have run: mean, std, a 95 %
    t-interval of the mean (what the spread supports: a CI that holds 0 is no verdict) and
    the number of seeds where the variant did better."""
    from scipy import stats

    from graphnorm.task import HIGHER_IS_BETTER

    a = runs[runs["norm"] == norm].set_index("seed")[f"test_{metric}"]
    b = runs[runs["norm"] == baseline].set_index("seed")[f"test_{metric}"]
    common = a.index.intersection(b.index)
    if norm == baseline or len(common) == 0:
        return {"paired_diff_mean": np.nan, "paired_diff_std": np.nan, "paired_seeds": 0,
                "paired_ci95_low": np.nan, "paired_ci95_high": np.nan, "paired_wins": 0}
    d = a[common] - b[common]
    n, low, high = len(d), np.nan, np.nan
    if n > 1:
        half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / np.sqrt(n)
        low, high = d.mean() - half, d.mean() + half
    wins = int((d > 0).sum() if HIGHER_IS_BETTER.get(metric, False) else (d < 0).sum())
    return {"paired_diff_mean": float(d.mean()), "paired_diff_std": float(d.std(ddof=0)),
            "paired_seeds": int(n), "paired_ci95_low": float(low), "paired_ci95_high": float(high),
            "paired_wins": wins}


def _paired_cell(r: dict) -> str:
    cell = f"{r['paired_diff_mean']:+.4f} ± {r['paired_diff_std']:.4f}"
    if np.isfinite(r["paired_ci95_low"]):  # NaN for a single pair
        cell += f", 95% CI [{r['paired_ci95_low']:+.4f}, {r['paired_ci95_high']:+.4f}]"
    return cell + f", better on {r['paired_wins']}/{r['paired_seeds']} (n={r['paired_seeds']})"


def to_markdown(df: pd.DataFrame, metric: str, dataset: str) -> str:
    better = "lower" if metric == "mae" else "higher"
    lines = [f"# {dataset}: norm variants ({metric}, {better} is better)", "",
             f"| norm | test {metric} | val {metric} | Δ test vs ln (paired) | seeds | #params | epochs | wall time/run | hardware |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in df.to_dict(orient="records"):
        diff = "—" if not r["paired_seeds"] else _paired_cell(r)
        lines.append(
            f"| {r['norm']} | {r[f'test_{metric}_mean']:.4f} ± {r[f'test_{metric}_std']:.4f} "
            f"| {r[f'val_{metric}_mean']:.4f} ± {r[f'val_{metric}_std']:.4f} | {diff} | {r['seeds']} "
            f"| {r['params']:,} | {r['epochs']} | {r['wall_time_s_mean']:.0f} s | {r['hardware']} |")
    ens = df[df["ensemble_seeds"] > 0]
    if len(ens):
        lines += ["", "Ensemble of the seeds (mean prediction of every seed's best checkpoint; it "
                  "costs all the seeds' training): " + ", ".join(
                      f"{r['norm']} test {metric} {r[f'ensemble_test_{metric}']:.4f} "
                      f"(n={r['ensemble_seeds']})" for r in ens.to_dict(orient="records")) + "."]
    lines += ["", "Mean ± std over seeds, test and validation at the best validation epoch. "
              "Δ: mean ± std of the per-seed differences to `ln` on the same seeds, their 95 % "
              "t-interval, and on how many seeds the variant did better; an interval that "
              "holds 0 does not separate the two."]
    return "\n".join(lines) + "\n"
