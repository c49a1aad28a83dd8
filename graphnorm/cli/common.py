"""What the command modules of ``graphnorm/cli/`` share: the defaults note of the training
commands and ``show_defaults``, which writes each flag's default into its ``--help`` line.

Torch-free: ``graphnorm --help`` stays instant.
"""
from __future__ import annotations

import argparse

TRAIN_DEFAULTS_NOTE = ("Without --config, the recipe measured for the data (--recipe auto, "
                       "graphnorm/train/recipes.py) sets the model and training; a --config file "
                       "replaces it (its values over TrainConfig's defaults, graphnorm/train/"
                       "config.py), and flags replace both.")


def show_defaults(parser: argparse.ArgumentParser, train: bool = True) -> None:
    """Append '(default: ...)' to each optional flag's help: argparse's own default, else
    (train=True) the TrainConfig field's (train flags default to None so that only given
    flags override a --config file, which hides the real default from argparse)."""
    from graphnorm.train.config import TrainConfig

    from graphnorm.train.recipes import RECIPES

    cfg = TrainConfig() if train else None
    derived = {"max_epochs": f"{cfg.epochs_limit}; no limit when --max-time is set"} if train else {}
    by_recipe = {k for r in RECIPES.values() for k in r} if train else set()
    for action in parser._actions:
        if (action.required or action.help == argparse.SUPPRESS
                or "(default" in (action.help or "")):
            continue
        value = action.default if action.default not in (None, argparse.SUPPRESS) else \
            derived.get(action.dest, getattr(cfg, action.dest, None))
        if action.dest in by_recipe and action.default in (None, argparse.SUPPRESS):
            # the recipe decides first; a --config file falls back to TrainConfig's value
            shown = "the recipe's" + ("" if value is None or isinstance(value, (bool, dict))
                                      else f"; under a config file: {value}")
            action.help = f"{action.help} (default: {shown})" if action.help else f"default: {shown}"
            continue
        if value is None or isinstance(value, (bool, dict)):
            continue
        action.help = f"{action.help} (default: {value})" if action.help else f"default: {value}"
