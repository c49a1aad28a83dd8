"""Command line: ``graphnorm train | predict | embed | admet | benchmark | hpopt | compare |
board | analyze | explain | serve | pretrain | panel``.

One module per command (``graphnorm/cli/<command>.py``): ``add_parser(sub)`` registers the
command and its flags, ``run(args) -> int`` runs it; what they share is in ``common.py``.
Here are ``build_parser`` (the commands in their ``--help`` order) and ``main`` (the console
script ``graphnorm``; also ``python -m graphnorm.cli``). Heavy imports happen inside each
command so ``graphnorm --help`` stays instant.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

from graphnorm.cli import (admet, analyze, benchmark, board, compare, embed, explain, hpopt, panel,
                           predict, pretrain, serve, train)

DESCRIPTION = ("Graphormer with separate normalization (SepNorm) for molecular property "
               "prediction: train, predict, explain and serve models of your own tables and "
               "the ZINC, MolHIV and TDC ADMET benchmarks.")

# the order of `graphnorm --help`
COMMANDS = (train, predict, embed, admet, benchmark, hpopt, compare, board, analyze, explain, serve,
            pretrain, panel)


def command_name(module) -> str:
    """The command a module registers (``graphnorm.cli.train`` -> ``train``)."""
    return module.__name__.rsplit(".", 1)[1]


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """Every command's parser; only the named one's when ``argv`` starts with a command:
    some commands' flags import their settings' modules (~0.5 s for ``train``'s), which a
    one-molecule ``graphnorm admet`` should not wait for."""
    parser = argparse.ArgumentParser(prog="graphnorm", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    named = [c for c in COMMANDS if argv and command_name(c) == argv[0]]
    for command in named or COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    # Before torch loads OpenMP: libgomp's default spin-wait collapses multi-thread training
    # when another process shares the cores (README: how long training takes).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:
        _refuse_unrecognized(parser, args.command, extra)
    _plain_warnings(args.command)
    try:
        return args.func(args)
    except (FileNotFoundError, FileExistsError, ValueError, RuntimeError) as err:
        if os.environ.get("GRAPHNORM_DEBUG"):  # full traceback for bug reports
            raise
        print(f"graphnorm {args.command}: error: {err}", file=sys.stderr)
        return 2


def _refuse_unrecognized(parser: argparse.ArgumentParser, command: str, extra: list) -> None:
    """Arguments no flag took, refused by the command's own parser (its usage, not the
    top-level one's), with the flag a file was probably meant for: ``graphnorm admet
    mols.csv`` names ``--input`` (argparse alone prints ``usage: graphnorm [-h] {admet}``)."""
    own = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    own = own.choices[command]
    files = [e for e in extra if not e.startswith("-") and os.path.exists(e)]
    flag = next((f for f in ("--input", "--data") if f in own._option_string_actions), None)
    hint = f" (a file is given as {flag} {files[0]})" if files and flag else ""
    own.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def _plain_warnings(command: str) -> None:
    """graphnorm's own warnings read as its errors do (``graphnorm CMD: warning: ...``), not
    as Python's ``file.py:72: UserWarning: ...`` followed by a line of our source; a
    third-party warning keeps Python's form, which names the package it came from."""
    import warnings

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    python_format = warnings.formatwarning

    def format(message, category, filename, lineno, line=None):
        if os.path.abspath(filename).startswith(package + os.sep):
            return f"graphnorm {command}: warning: {message}\n"
        return python_format(message, category, filename, lineno, line)

    warnings.formatwarning = format
