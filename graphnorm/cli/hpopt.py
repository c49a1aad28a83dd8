"""``graphnorm hpopt``: an Optuna search over a table's recipe, scored on validation, whose best
trial becomes OUT/best.yaml (graphnorm/train/hpopt.py).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from graphnorm.cli.common import TRAIN_DEFAULTS_NOTE, show_defaults
from graphnorm.train.cli import add_train_args, adder, config_dests, resolved_config


def add_parser(sub) -> argparse.ArgumentParser:
    h = sub.add_parser("hpopt", help="hyperparameter search on a table (Optuna) -> best.yaml",
                       description="Trials are training runs of the table's recipe with sampled "
                       "settings, scored on the validation split; OUT/best.yaml is the best "
                       "one's config for `train --config`. " + TRAIN_DEFAULTS_NOTE,
                       conflict_handler="resolve")
    add_train_args(h, "hpopt")
    h_own = adder(h)
    h_own("--max-time", dest="max_time",
          help="budget of the whole search, e.g. 30m (no new trial starts after it)")
    h_own("--trials", type=int, help="at most this many trials (also: --max-time)")
    h_own("--search-seed", dest="search_seed", type=int, default=0,
          help="seed of Optuna's sampler")
    h_own("--out", required=True, help="search folder: study.db (a rerun continues "
          "it), trials/, trials.csv, best.yaml")
    h.set_defaults(func=run, config_dests=config_dests(h))
    show_defaults(h)
    return h


def run(args: argparse.Namespace) -> int:
    from graphnorm.train.config import parse_duration
    from graphnorm.train.hpopt import run_hpopt

    budget = parse_duration(args.max_time) if args.max_time else None
    cfg = resolved_config(args)  # hpopt's --max-time is the search's budget (not a config value)
    run_hpopt(cfg, Path(args.out), budget, trials=args.trials, seed=args.search_seed)
    return 0
