"""``graphnorm pretrain``: multi-task pre-training on the ADMET corpus (resumable); the flags and
the command are graphnorm/pretrain/cli.py's, wired here.
"""
from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    from graphnorm.pretrain.cli import add_pretrain_args  # torch-free

    r = sub.add_parser("pretrain", help="multi-task pre-training on the ADMET corpus "
                       "(resumable)")
    add_pretrain_args(r)
    r.set_defaults(func=run)
    return r


def run(args: argparse.Namespace) -> int:
    from graphnorm.pretrain.cli import run_pretrain

    return run_pretrain(args)
