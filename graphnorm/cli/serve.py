"""``graphnorm serve``: a web page and JSON API for predictions (FastAPI); the flags and the
command are graphnorm/serve/cli.py's, wired here.
"""
from __future__ import annotations

import argparse

from graphnorm.cli.common import show_defaults


def add_parser(sub) -> argparse.ArgumentParser:
    from graphnorm.serve.cli import add_serve_args  # torch-free

    s = sub.add_parser("serve", help="web page and JSON API for predictions (FastAPI)")
    add_serve_args(s)
    s.set_defaults(func=run)
    show_defaults(s, train=False)
    return s


def run(args: argparse.Namespace) -> int:
    from graphnorm.serve.cli import run_serve  # issue 28: prediction web page + JSON API

    return run_serve(args)
