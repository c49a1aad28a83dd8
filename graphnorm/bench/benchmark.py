"""``graphnorm benchmark``: norm variants x seeds, summarized in OGB leaderboard form.

Every (norm, seed) run is an ordinary training run in ``OUT/runs/<norm>/seed<k>``; a run
with a ``metrics.json`` is finished and skipped, one with only ``last.ckpt`` is resumed, so an
interrupted benchmark continues where it stopped. The summary is rebuilt from the
``metrics.json`` files alone (``bench.summary``). ``jobs`` > 1 trains that many runs at
once in separate processes (each with ``threads`` threads, default 1): on a CPU, independent
one-thread runs use the cores better than one run with many threads.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Sequence

import pandas as pd

from graphnorm.bench.summary import slug, summarize, variant
from graphnorm.run_folder import LAST_CHECKPOINT, RunInProgress, is_finished, read_metrics
from graphnorm.train.processes import die_with_parent, train_run


def _what(cfg) -> str:
    return f"{variant(cfg.model_name, cfg.norm)} seed {cfg.seed}" + (" (resuming)" if cfg.resume else "")


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


def run_one(cfg) -> None:
    """A benchmark run: one training run, or an ensemble (``--ensemble N``) whose members
    train one after another into the run's folder."""
    if cfg.is_ensemble:
        from graphnorm.train.ensemble import train_ensemble

        train_ensemble(cfg, jobs=1)
    else:
        train_run(cfg)


def _train_labelled(cfg) -> None:
    label = f"[{variant(cfg.model_name, cfg.norm)} seed {cfg.seed}] "
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Labelled(sys.stdout, label), _Labelled(sys.stderr, label)
    try:
        run_one(cfg)
    finally:
        sys.stdout, sys.stderr = streams


def run_benchmark(cfg, norms: Sequence[str], seeds: int, out: Path, jobs: int = 1,
                  models: Sequence[str] | None = None, summary_only: bool = False,
                  repeats: bool = False, baseline: str | None = None) -> pd.DataFrame:
    """Every (model, norm, seed): Graphormers once per norm, baseline models once per seed;
    seed by seed, so that ``jobs`` parallel runs of one seed finish as a paired set. With
    ``repeats`` (own tables), seed k also draws its own split (split seed k): every model
    of a repeat sees the same split, each repeat another. With ``summary_only``, nothing is
    trained: the summary of the runs finished so far (e.g. of a campaign that spans
    sessions, or while another process trains its runs). ``baseline``: the variant the
    others are paired against (default rf when run, else ln)."""
    from graphnorm.models import RUNNABLE_MODELS, model_kind
    from graphnorm.norms import build_norm
    from graphnorm.train.plan import benchmark_runs

    for norm in norms:  # fail fast on a typo before hours of training
        build_norm(norm, 8)
    models = list(models or [cfg.model_name])
    for m in models:
        if m not in RUNNABLE_MODELS:
            raise ValueError(f"unknown model {m!r}; choose from {', '.join(RUNNABLE_MODELS)}")
    if baseline is None:
        baseline = next((m for m in models if model_kind(m).paired_baseline), "ln")
    if not summary_only:  # a summary of nothing leaves no empty folder behind
        out.mkdir(parents=True, exist_ok=True)
    # every run with its final config (graphnorm/train/plan.py); here they are only executed
    plan = benchmark_runs(cfg, models, norms, seeds, out,
                          folder=lambda model, norm: slug(variant(model, norm)),
                          finished=is_finished,
                          resumable=lambda run_dir: (run_dir / LAST_CHECKPOINT).is_file(),
                          repeats=repeats, parallel=jobs > 1 and not summary_only)
    todo = []
    for run in plan:
        if run.cfg is None:
            print(f"[benchmark] run {run.index}/{len(plan)}: {variant(run.model, run.norm)} "
                  f"seed {run.seed} done, skipped")
            continue
        todo.append((run.index, run.cfg))
    if summary_only:
        if todo:
            print(f"[benchmark] --summary-only: {len(todo)} of {len(plan)} runs not finished, "
                  "not trained", flush=True)
        if len(todo) == len(plan):
            raise FileNotFoundError(f"{out}: no finished run of this plan to summarize")
    elif jobs <= 1:
        elsewhere = []
        for k, run_cfg in todo:
            print(f"[benchmark] run {k}/{len(plan)}: {_what(run_cfg)}", flush=True)
            try:
                run_one(run_cfg)
            except RunInProgress as err:  # another benchmark on this folder trains it now
                elsewhere.append(skipped_line(k, len(plan), run_cfg, err))
                print(elsewhere[-1], flush=True)
                continue
            print(finished_line(k, len(plan), run_cfg), flush=True)
        note_elsewhere(elsewhere)
    elif todo:
        _prepare_data(todo[0][1])
        run_parallel(todo, len(plan), jobs)
    return summarize(out, list(dict.fromkeys(variant(r.model, r.norm) for r in plan)),
                     baseline=baseline)


def finished_line(k: int, total: int, run_cfg) -> str:
    """One line per finished run with its result, read back from its metrics.json."""
    head = f"[benchmark] run {k}/{total}: {_what(run_cfg)}"
    try:
        r = read_metrics(run_cfg.out)
        m, test = r["metric"], r[f"test_{r['metric']}"]  # test None: a TDC selection run
        return (f"{head} finished: " + ("" if test is None else f"test {m} {test:.4f}, ")
                + f"val {m} {r[f'val_{m}']:.4f} "
                f"(best epoch {r.get('best_epoch')}, {r.get('wall_time_s')} s)")
    except (OSError, ValueError, KeyError, TypeError) as err:  # never fail a benchmark on this
        return f"{head} finished (no result: {type(err).__name__}: {err})"


def skipped_line(k: int, total: int, run_cfg, err: Exception) -> str:
    return f"[benchmark] run {k}/{total}: {_what(run_cfg)} skipped: {err}"


def note_elsewhere(skipped: list[str]) -> None:
    if skipped:
        print(f"[benchmark] {len(skipped)} run(s) are training in another process: the "
              "summary below leaves them out; rerun (or --summary-only) once they finish",
              flush=True)


def _prepare_data(cfg) -> None:
    """Before parallel runs: featurize and cache the data once, here. Otherwise every worker
    builds the same cache at once, and a dataset that cannot be loaded fails every queued run
    with the same long message instead of failing once."""
    from graphnorm.train.datamodule import GraphDataModule

    GraphDataModule.from_config(cfg).setup()


def run_parallel(todo: list, total: int, jobs: int) -> None:
    """Runs in ``jobs`` spawned processes; a failed run is reported and the others go on."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    failed = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"),
                             initializer=die_with_parent) as pool:
        futures = {}
        for k, run_cfg in todo:  # planned for a worker: one thread (plan.for_worker)
            futures[pool.submit(_train_labelled, run_cfg)] = (k, run_cfg)
            print(f"[benchmark] run {k}/{total}: {_what(run_cfg)} queued", flush=True)
        elsewhere = []
        for fut in as_completed(futures):
            k, run_cfg = futures[fut]
            name = f"{variant(run_cfg.model_name, run_cfg.norm)} seed {run_cfg.seed}"
            try:
                fut.result()
                print(finished_line(k, total, run_cfg), flush=True)
            except RunInProgress as err:  # another benchmark on this folder trains it now
                elsewhere.append(skipped_line(k, total, run_cfg, err))
                print(elsewhere[-1], flush=True)
            except Exception as err:  # keep the other runs; report at the end
                failed.append(f"{name}: {type(err).__name__}: {err}")
                print(f"[benchmark] run {k}/{total}: {name} FAILED: {err}", flush=True)
    note_elsewhere(elsewhere)
    if failed:
        raise RuntimeError(f"{len(failed)} benchmark run(s) failed (rerun to retry them):\n"
                           + "\n".join(failed))
