"""``graphnorm predict``: properties of SMILES from a checkpoint; the flags and the command are
graphnorm/inference/cli.py's, wired here.
"""
from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    from graphnorm.inference.cli import add_predict_args  # torch-free

    p = sub.add_parser("predict", help="predict properties from SMILES")
    add_predict_args(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from graphnorm.inference.cli import run_predict  # predict/embed: inference/cli.py

    return run_predict(args)
