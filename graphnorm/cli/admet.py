"""``graphnorm admet``: the shipped ADMET panel's predictions (graphnorm/inference/cli.py) or,
with --explain, one endpoint's atom attributions (graphnorm/explain/panel_cli.py).
"""
from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    from graphnorm.inference.cli import add_admet_args  # torch-free

    m = sub.add_parser("admet", help="the ADMET panel of a pre-trained model: every endpoint "
                       "that held up on held-out molecules, with intervals")
    add_admet_args(m)
    from graphnorm.explain.panel_cli import add_admet_explain_args  # torch-free

    add_admet_explain_args(m)
    m.set_defaults(func=run)
    return m


def run(args: argparse.Namespace) -> int:
    if args.explain and not args.list:  # atom attributions of one endpoint: explain/panel_cli.py
        from graphnorm.explain.panel_cli import run_admet_explain

        return run_admet_explain(args)
    if args.drawings and not args.list:
        raise ValueError("--drawings is --explain's folder: give --explain ENDPOINT too")
    from graphnorm.inference.cli import run_admet

    return run_admet(args)
