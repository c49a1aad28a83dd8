"""``graphnorm train``: one training run (or an ensemble) of a table or benchmark; the flags
are TrainConfig's (graphnorm/train/cli.py), the run is graphnorm/train/processes.py's.
"""
from __future__ import annotations

import argparse

from graphnorm.cli.common import TRAIN_DEFAULTS_NOTE, show_defaults
from graphnorm.models import model_kind
from graphnorm.train.cli import add_train_args, adder, config_dests, resolved_config


def add_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser("train", help="train a Graphormer (Lightning)",
                       description=TRAIN_DEFAULTS_NOTE)
    add_train_args(t, "train")  # the settings' flags (TrainConfig's schema), --config
    t_own = adder(t)  # flags of the command, not TrainConfig values
    t_own("--jobs", type=int, default=1,
          help="--ensemble: members trained at once, one process each")
    show_defaults(t)
    t.set_defaults(func=run, config_dests=config_dests(t))
    return t


def run(args: argparse.Namespace) -> int:
    from graphnorm.train.processes import train_run

    cfg = resolved_config(args)
    if cfg.is_ensemble:  # members into OUT/model_<k> (and OUT/forest or OUT/gbm)
        from graphnorm.train.ensemble import train_ensemble

        train_ensemble(cfg, jobs=args.jobs)
        return 0
    result = train_run(cfg)
    if result:
        m = result["metric"]
        what = f"norm={cfg.norm}" if model_kind(cfg.model_name).norm_variants else f"model={cfg.model_name}"
        epoch = "" if result["best_epoch"] is None else f"best epoch {result['best_epoch']}, "
        test = result[f"test_{m}"]  # None: a table without test rows (TDC selection)
        print(f"[graphnorm] {result['dataset']} {what} seed={cfg.seed}: "
              f"val {m} {result[f'val_{m}']:.4f}" + ("" if test is None else f", test {m} {test:.4f}")
              + f" ({epoch}{result['wall_time_s']} s) -> {cfg.out}/metrics.json")
    return 0
