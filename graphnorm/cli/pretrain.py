"""``graphnorm pretrain``: multi-task pre-training on the ADMET corpus (resumable), and its two
diagnostics as subcommands (``curve``, ``step-cost``); the flags and the command are
graphnorm/pretrain/cli.py's, wired here. What is built from a trained run is ``graphnorm
panel`` (graphnorm/cli/panel.py).
"""
from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    from graphnorm.pretrain.cli import add_pretrain_args, add_pretrain_modes  # torch-free

    r = sub.add_parser("pretrain", help="multi-task pre-training on the ADMET corpus "
                       "(resumable); `curve` and `step-cost` compare runs and models")
    add_pretrain_args(r)
    add_pretrain_modes(r)
    r.set_defaults(func=run)
    return r


def run(args: argparse.Namespace) -> int:
    from graphnorm.pretrain.cli import run_pretrain

    return run_pretrain(args)
