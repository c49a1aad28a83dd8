"""``graphnorm benchmark --suite tdc-admet``: every variant of ``benchmark`` on the TDC
ADMET group, the official protocol: seeds 0..4 are PyTDC's seeds 1..5, each a scaffold
train/valid split of ``train_val`` (``--split tdc:tdc_set``, graphnorm/data/tdc.py), the
task's own metric picks the checkpoint. Only with ``--final`` does it read and score the fixed
test set, and every such scoring of a (task, configuration) is appended to the test ledger
(graphnorm/bench/tdc_ledger.py); without it the runs see train_val alone and report
validation. Each task is an ordinary benchmark in ``OUT/<task>`` (resumable: finished runs
are skipped); the board (``OUT/board.md``, ``board.csv``; graphnorm/bench/tdc_board.py) is
rebuilt after each task. A task folder holds runs of one kind: selection (no test score) or
final, never both, so neither can pass for the other.
With ``--tree-features maplight+admet``, a task whose labels the shipped ADMET boosters learned
reads leave-own-task-out boosters instead (graphnorm/baselines/admet_loto.py).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional

SUITES = ("tdc-admet",)


def default_leaderboard(tdc_dir: Optional[str]) -> Optional[Path]:
    """leaderboard.csv beside the archive: in --tdc-dir, or $GRAPHNORM_RAW_DIR/tdc_admet_group."""
    for base in (tdc_dir, os.environ.get("GRAPHNORM_RAW_DIR") and
                 Path(os.environ["GRAPHNORM_RAW_DIR"]) / "tdc_admet_group"):
        if base and (Path(base) / "leaderboard.csv").is_file():
            return Path(base) / "leaderboard.csv"
    return None


def task_settings(task: str, group_dir: Path, cache=None, final: bool = False) -> dict:
    """The train flags that make one TDC task a user table under the official protocol;
    the table holds the test rows only when ``final``."""
    from graphnorm.data.tdc import SET_COLUMN, TDC_ADMET_TASKS, task_kind, task_table

    return {"data": str(task_table(task, group_dir, cache, final)), "smiles_column": "Drug",
            "target_columns": ["Y"], "task": task_kind(task), "metric": TDC_ADMET_TASKS[task],
            "split": f"tdc:{SET_COLUMN}",
            # a selection run records every validation: its choices can be cross-fitted
            # (graphnorm/bench/crossfit.py; `compare --suite`)
            "trace_validation": not final}


def needs_loto_boosters(task: str, cfg) -> bool:
    """Whether ``task`` needs leave-own-task-out boosters (`graphnorm.baselines.admet_loto`):
    the shipped ones learned its labels, so their predictions there are in-sample and the board
    would flatter them. A boosters file of the user's that saw the task is refused."""
    from graphnorm.baselines.tree_features import FEATURE_SETS, has_admet

    features = getattr(cfg, "tree_features", None) or ""
    if features not in FEATURE_SETS or not has_admet(features):  # maplight+admet(+gnn)
        return False
    from graphnorm.baselines.admet_boosters import unseen_tasks

    own = getattr(cfg, "admet_boosters", None)
    if own is None:
        return task not in unseen_tasks()
    if task not in unseen_tasks(Path(own)):
        raise ValueError(f"--admet-boosters {own} on {task}: those boosters were fitted on this "
                         "task's molecules, so their predictions are not out-of-sample here; "
                         "leave the flag out and the suite fits boosters without them")
    return False


def with_loto_boosters(task: str, cfg, group: Path):
    """``cfg`` reading the leave-own-task-out boosters of ``task`` (built here once, cached;
    the config as planned by graphnorm/train/plan.py)."""
    from graphnorm.baselines.admet_loto import loto_boosters
    from graphnorm.train.plan import with_boosters

    path = loto_boosters(task, group, getattr(cfg, "cache_root", None), cfg.threads or 1,
                         cfg.progress)
    return with_boosters(cfg, str(path))


def run_records(task_dir: Path) -> dict[Path, dict]:
    """{run folder: its record} of every finished run ``runs/<variant>/seed<k>`` of a task."""
    from graphnorm.run_folder import METRICS_FILE, read_metrics

    return {p.parent: read_metrics(p) for p in sorted(task_dir.glob(f"runs/*/seed*/{METRICS_FILE}"))}


def check_kind(task_dir: Path, final: bool) -> None:
    """Refuse a task folder whose runs (ensemble members included) are of the other kind: a
    final suite would skip its finished selection runs and score nothing on test; a selection
    suite would show the test scores of its final runs."""
    from graphnorm.run_folder import METRICS_FILE, read_record

    tested = {read_record(p).test is not None for p in task_dir.glob(f"runs/*/seed*/**/{METRICS_FILE}")}
    if final and False in tested:
        raise ValueError(f"--final: {task_dir} holds selection runs, trained without the test "
                         "set; --final trains and scores its own runs: give it another --out")
    if not final and True in tested:
        raise ValueError(f"{task_dir} holds runs scored on test (a --final suite): add --final "
                         "to rebuild it, or give the selection runs another --out")


def ledger_path(args) -> Path:
    """Where a final suite records its test scorings: --ledger, else the checkout's."""
    from graphnorm.bench.tdc_ledger import default_ledger

    path = Path(args.ledger) if args.ledger else default_ledger()
    if path is None:
        raise ValueError("--final records every test scoring in a ledger: give --ledger PATH "
                         "(outside a graphnorm checkout there is no default)")
    return path


def run_tdc_suite(args, resolve: Callable, run: Callable) -> None:
    """For each task: resolve the config from ``args`` with the task's table flags over them
    (``resolve(args, settings)``: recipe, file, flags; ``args`` itself is left as given), then ``run(cfg, out)`` -- one benchmark per task; with
    ``args.final``, the runs scored on test now go to the ledger, one row per variant."""
    from graphnorm.bench.tdc_board import board_markdown, write_board
    from graphnorm.bench.tdc_clean import check_tdc_clean
    from graphnorm.data.tdc import admet_group_dir, parse_tasks

    if args.data or args.dataset:
        raise ValueError("--suite tdc-admet brings its own tables: leave out --data and --dataset")
    if args.repeats is not None:
        raise ValueError("--suite tdc-admet runs the official seeds: use --seeds (at most 5)")
    if not 1 <= args.seeds <= 5:
        raise ValueError(f"--seeds {args.seeds}: the TDC protocol has 5 seeds (PyTDC 1..5)")
    final = bool(getattr(args, "final", False))
    if getattr(args, "ledger", None) and not final:
        raise ValueError("--ledger records --final runs; without --final nothing is scored on test")
    ledger = ledger_path(args) if final else None
    tasks = parse_tasks(args.tasks)
    out = Path(args.out)
    group = admet_group_dir(args.tdc_dir, getattr(args, "cache_root", None))
    leaderboard = Path(args.leaderboard) if args.leaderboard else default_leaderboard(args.tdc_dir)
    configs, loto, checked = {}, set(), {}
    for task in tasks:  # every task's config first: a refusal comes before any training
        check_kind(out / task, final)
        settings = task_settings(task, group, getattr(args, "cache_root", None), final)
        configs[task] = resolve(args, settings)
        check_tdc_clean(configs[task], checked)
        if needs_loto_boosters(task, configs[task]):
            loto.add(task)
    for k, task in enumerate(tasks, 1):
        print(f"[tdc-admet] task {k}/{len(tasks)}: {task}" + (" (final: scored on test)"
                                                            if final else ""), flush=True)
        if not args.summary_only or (out / task).is_dir():
            cfg = configs[task]
            if task in loto and not args.summary_only:
                cfg = with_loto_boosters(task, cfg, group)
            before = set(run_records(out / task)) if final else set()
            try:
                run(cfg, out / task)
            finally:  # a failed run's finished seeds were scored on test too: recorded
                if final:
                    record_scorings(ledger, task, out / task, before)
        write_board(out, leaderboard, final)
    print(board_markdown(write_board(out, leaderboard, final)), flush=True)
    if final:
        print(f"[tdc-admet] test scorings recorded in {ledger}", flush=True)


def record_scorings(ledger: Path, task: str, task_dir: Path, before: set) -> None:
    """Append a ledger row for each variant with a run scored on test since ``before`` (the
    run folders finished then); nothing when this call scored none (a --summary-only, or a
    rerun of finished runs)."""
    from graphnorm.bench.tdc_ledger import append_rows, ledger_rows

    records = run_records(task_dir)
    fresh = [p.parent.name for p, r in records.items()
             if p not in before and r.get(f"test_{r['metric']}") is not None]
    if fresh:
        append_rows(ledger, ledger_rows(task, task_dir, fresh, records))
