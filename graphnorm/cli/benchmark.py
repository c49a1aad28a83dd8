"""``graphnorm benchmark``: norm variants (and models) x seeds or repeated splits in one table,
or the TDC ADMET suite task by task (graphnorm/bench/benchmark.py, bench/tdc_suite.py).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from graphnorm.cli.common import TRAIN_DEFAULTS_NOTE, show_defaults
from graphnorm.train.cli import add_train_args, adder, config_dests, resolved_config


def add_parser(sub) -> argparse.ArgumentParser:
    b = sub.add_parser("benchmark", help="norm variants x seeds, OGB leaderboard format",
                       description=TRAIN_DEFAULTS_NOTE, conflict_handler="resolve")
    add_train_args(b, "benchmark")
    b_own = adder(b)
    b_own("--norms", help="comma list of norm specs, one table row each, e.g. "
          "ln,bn,sep:bn+ln (default: the recipe's or config's norm)")
    # train's --norm (one spec) replaced: here it is an undocumented alias of --norms
    b_own("--norm", dest="norms", help=argparse.SUPPRESS)
    b_own("--models", help="comma list of models in one table, e.g. graphormer,gine "
          "(--norms apply to the Graphormer; each baseline is one row)")
    b_own("--seeds", type=int, default=3, help="number of seeds (0..N-1)")
    b_own("--repeats", type=int, help="own tables: N repeated splits instead of "
          "seeds; repeat k draws its own --split with split seed k and trains with "
          "seed k, every model on the same split (paired)")
    b_own("--baseline", help="the variant every other is paired against (default: "
          "rf when --models has it, else ln)")
    b_own("--suite", choices=["tdc-admet"], help="tdc-admet: the 22 tasks of the TDC "
          "ADMET group under its official protocol (5 seeds, scaffold valid split, "
          "each task's metric), one benchmark per task in OUT/<task>, the leaderboard "
          "form in OUT/board.md")
    b_own("--tasks", help="--suite: comma list of task names (default: all 22)")
    b_own("--tdc-dir", dest="tdc_dir", help="--suite: a PyTDC admet_group download or "
          "the folder holding admet_group.zip (default: $GRAPHNORM_TDC_DIR, else "
          "$GRAPHNORM_RAW_DIR/tdc_admet_group)")
    b_own("--leaderboard", help="--suite: the leaderboard snapshot to rank against "
          "(default: leaderboard.csv beside the archive)")
    b_own("--final", action="store_true", help="--suite: also read and score each task's "
          "test set, and append one row per (task, configuration) to the test ledger; "
          "without it the runs never see test.csv and report validation only")
    b_own("--ledger", help="--suite --final: the test ledger CSV to append to (default: "
          "experiments/results/tdc_admet/ledger.csv of the graphnorm checkout)")
    b_own("--ledger-summary", dest="ledger_summary", action="store_true",
          help="--suite: print the ledger's count of test scorings per task, run nothing")
    b_own("--out", help="the benchmark's folder (required, except with --ledger-summary)")
    b_own("--jobs", type=int, default=1,
          help="runs trained at once, one process each with --threads threads (1 if unset)")
    b_own("--summary-only", dest="summary_only", action="store_true",
          help="train nothing: write the summary of the runs finished so far")
    b.set_defaults(func=run, config_dests=config_dests(b))
    show_defaults(b)
    return b


def run(args: argparse.Namespace) -> int:
    from graphnorm.bench.benchmark import run_benchmark

    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    if (args.final or args.ledger or args.ledger_summary) and not args.suite:
        raise ValueError("--final, --ledger and --ledger-summary belong to --suite tdc-admet")
    if args.ledger_summary:  # the count of test scorings, nothing run
        from graphnorm.bench.tdc_ledger import ledger_summary
        from graphnorm.bench.tdc_suite import ledger_path

        print(ledger_summary(ledger_path(args)), end="")
        return 0
    if not args.out:
        raise ValueError("benchmark needs --out DIR")
    if args.suite:  # one benchmark per task of the suite
        from graphnorm.bench.tdc_suite import run_tdc_suite

        run_tdc_suite(args, resolved_config,
                      lambda cfg, out: run_benchmark(
                          cfg, norms=_norms(args, cfg), seeds=args.seeds, out=out, jobs=args.jobs,
                          models=models, summary_only=args.summary_only, repeats=True,
                          baseline=args.baseline))
        return 0
    cfg = resolved_config(args)
    if args.repeats is not None and not cfg.data:
        raise ValueError("--repeats draws a new split per run: it takes a user table (--data); "
                         "the benchmark datasets have fixed splits (use --seeds)")
    run_benchmark(cfg, norms=_norms(args, cfg),
                  seeds=args.repeats or args.seeds, out=Path(args.out), jobs=args.jobs,
                  models=models, summary_only=args.summary_only,
                  repeats=args.repeats is not None, baseline=args.baseline)
    return 0


def _norms(args, cfg) -> list[str]:
    return [n.strip() for n in args.norms.split(",") if n.strip()] if args.norms else [cfg.norm]
