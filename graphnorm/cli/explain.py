"""``graphnorm explain``: per-atom attributions of a checkpoint's predictions, as a table and
molecule drawings; the flags and the command are graphnorm/explain/cli.py's, wired here.
"""
from __future__ import annotations

import argparse

from graphnorm.cli.common import show_defaults


def add_parser(sub) -> argparse.ArgumentParser:
    from graphnorm.explain.cli import add_explain_args  # torch-free

    x = sub.add_parser("explain", help="per-atom attributions: table + molecule drawings")
    add_explain_args(x)
    x.set_defaults(func=run)
    show_defaults(x, train=False)
    return x


def run(args: argparse.Namespace) -> int:
    from graphnorm.explain.cli import run_explain  # issue 28: atom attributions

    return run_explain(args)
