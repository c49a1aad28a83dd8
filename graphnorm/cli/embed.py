"""``graphnorm embed``: the [VNode] embedding of each molecule; the flags and the command are
graphnorm/inference/cli.py's, wired here.
"""
from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    from graphnorm.inference.cli import add_embed_args  # torch-free

    e = sub.add_parser("embed", help="[VNode] embedding per molecule (.npy, .csv, .parquet)")
    add_embed_args(e)
    e.set_defaults(func=run)
    return e


def run(args: argparse.Namespace) -> int:
    from graphnorm.inference.cli import run_embed

    return run_embed(args)
