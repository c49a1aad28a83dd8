"""The training flags (shared by ``train``, ``benchmark`` and ``hpopt``) and how they feed
TrainConfig: the argparse side of config resolution (graphnorm/train/resolve.py).

The flags come from TrainConfig's schema (graphnorm/train/config_schema.py): every setting
gets its flag there (`add_setting_flags`: name, type, choices and help from the field), in a
help section per block. Written here are only the flags that are not one setting each:
``--config``, the flags that set one key of a dict setting (``featurizer``, ``model``) and
the hidden earlier names. Which flags are config values is derived, not listed: a flag whose
dest is a TrainConfig field sets that field; a flag that sets one key of a dict setting says
so where it is added (`adder`), and so does a flag of the command itself. `config_dests`
refuses any other flag, so a new one cannot be dropped on its way to the config. Here,
beside inference/cli.py and explain/cli.py, because the flags are the training package's;
graphnorm/cli/ wires the commands. Torch-free: ``graphnorm --help`` stays instant.
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Callable, Optional

from graphnorm.graph.options import FINGERPRINT_AT
from graphnorm.train.config_schema import BLOCKS, kebab, setting_type
from graphnorm.train.recipes import print_note


def add_train_args(p: argparse.ArgumentParser, command: str = "train") -> None:
    """The training flags of ``command`` (train, benchmark or hpopt) on ``p``: ``--config``,
    then a help section per block with its settings' flags and the flags of that block
    written here."""
    adder(p)("--config", help="YAML config, settings flat or nested by block (see "
             "experiments/configs/)")
    written = {"data": _featurizer_flags, "architecture": _model_key_flags,
               "ensemble": _earlier_names}
    for block in BLOCKS:
        group = add_setting_flags(p, command, block)
        if block in written:
            written[block](group)


def _featurizer_flags(group: argparse._ArgumentGroup) -> None:
    featurizer = adder(group, "featurizer")
    featurizer("--fingerprint-bits", dest="fingerprint_bits", type=int,
               help="featurizer: each molecule's Morgan fingerprint (radius 2) of this many "
               "bits joins the [VNode] (graphormer, gin-vn); 0 = none (default)")
    featurizer("--descriptors", dest="descriptors", nargs="?", const=True, type=_descriptor_flag,
               metavar="SET", help="featurizer: each molecule's RDKit descriptors, standardized "
               "on the training split, join the head's input (or the [VNode], --descriptors-at "
               "vnode); SET rdkit2d (the default: RDKit's 2D list, 205 numbers, ~8 ms a "
               "molecule) or fast (RDKit's C++ descriptors, 121 numbers, ~2 ms: for screening "
               "millions)")
    featurizer("--no-descriptors", dest="descriptors", action="store_const", const=False,
               help="featurizer: no RDKit descriptors (when a recipe has them)")


def _model_key_flags(group: argparse._ArgumentGroup) -> None:
    model = adder(group, "model")
    model("--descriptors-at", dest="descriptors_at", choices=list(FINGERPRINT_AT),
          help="graphormer: where the descriptors enter (default head)")
    model("--fingerprint-dropout", dest="fingerprint_dropout", type=float,
          help="model: dropout on those bits in training (default 0)")
    model("--fingerprint-at", dest="fingerprint_at", choices=list(FINGERPRINT_AT),
          help="graphormer: the bits join the [VNode] before the first block (default) "
          "or the head's input beside the readout (no [VNode] norm sees them)")


def _earlier_names(group: argparse._ArgumentGroup) -> None:
    """The tree member's flags under their names before issue 57 (a gbm member is not a
    forest): still read, not listed."""
    tree_model = next(a for a in group._group_actions if a.dest == "tree_model")
    group.add_argument("--forest-member", dest="tree_member",
                       action=argparse.BooleanOptionalAction, help=argparse.SUPPRESS)
    group.add_argument("--forest-model", dest="tree_model", choices=tree_model.choices,
                       help=argparse.SUPPRESS)


def add_setting_flags(parser: argparse.ArgumentParser, command: str,
                      block: str) -> argparse._ArgumentGroup:
    """The help section of ``block`` with one flag per TrainConfig setting of it that has one
    for ``command`` (`setting_flag`), in field order."""
    from graphnorm.train.config import TrainConfig  # here: a subclass in a test is seen

    group = parser.add_argument_group(block, BLOCKS[block])
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    for name in TrainConfig.blocks()[block]:
        flag = setting_flag(TrainConfig, fields[name], command)
        if flag is not None:
            group.add_argument(flag[0], **flag[1])
    return group


def setting_flag(cls, f: dataclasses.Field, command: str) -> Optional[tuple[str, dict]]:
    """The flag of setting ``f`` of ``cls`` in ``command``, (name, add_argument keywords), or
    None (no flag, or not in this command): named after the field unless its `setting` names
    it, a bool as --x/--no-x unless the setting gives the ``const`` its flag stores, an int
    or float parsed as one; choices and help from the setting (functions called now)."""
    meta = f.metadata
    if meta["flag"] is False or command not in meta["commands"]:
        return None
    kwargs: dict[str, Any] = dict(meta["argparse"], dest=f.name)
    text = meta["help_for"].get(command, meta["help"])
    if text:
        kwargs["help"] = text() if callable(text) else text
    if meta["choices"] is not None:
        choices = meta["choices"]
        kwargs["choices"] = list(choices() if callable(choices) else choices)
    kind = setting_type(cls, f.name)
    if "const" in kwargs:
        kwargs["action"] = "store_const"
    elif kind is bool:
        kwargs["action"] = argparse.BooleanOptionalAction
    elif kind in (int, float):
        kwargs["type"] = kind
    elif kind not in (str, Any) and "nargs" not in kwargs:
        raise TypeError(f"setting {f.name} ({kind}) has no flag type: give its setting nargs "
                        "(a list), or flag=False (only a config file sets it)")
    return (kebab(f.name) if meta["flag"] is True else meta["flag"]), kwargs


def _descriptor_flag(text: str) -> bool | str:
    from graphnorm.chem.descriptors import descriptor_set  # here: the parser imports no RDKit

    try:
        return descriptor_set(text)
    except ValueError as e:  # argparse shows an ArgumentTypeError's own words
        raise argparse.ArgumentTypeError(str(e)) from None


def adder(parser, block: Optional[str] = None) -> Callable[..., argparse.Action]:
    """``parser.add_argument`` (or an argument group's) for the flags that are not TrainConfig
    fields, declared where they are added: ``block`` "featurizer" or "model": the flag sets
    one key (its dest) of that dict setting (--fingerprint-bits: featurizer.fingerprint_bits);
    None: a flag of the command itself, not a config value (--config, --jobs; benchmark's
    --out is the benchmark's folder, not a run's)."""
    def add(*names, **kwargs) -> argparse.Action:
        action = parser.add_argument(*names, **kwargs)
        action.config_block = block
        return action
    return add


def config_dests(parser: argparse.ArgumentParser) -> dict[str, Optional[str]]:
    """The flags of a train/benchmark/hpopt parser that feed its TrainConfig: dest -> None
    (the dest is a TrainConfig field) or the dict setting it sets one key of (`adder`).
    Derived from TrainConfig's fields, not listed by hand; a flag that is neither a field,
    a dict setting's key nor declared by `adder` is an error here, so a new flag cannot be dropped
    on its way to the config without anyone noticing."""
    from graphnorm.train.config import TrainConfig

    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    out, unknown = {}, []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if hasattr(action, "config_block"):  # declared: a dict setting's key, or aside (None)
            if action.config_block is not None:
                out[action.dest] = action.config_block
        elif action.dest in fields:
            out[action.dest] = None
        else:
            unknown.append("/".join(action.option_strings) or action.dest)
    if unknown:
        raise ValueError(f"flags {unknown} are neither TrainConfig fields nor declared with "
                         "adder (one key of a dict setting, or not a config value)")
    return out


def config_flags(args: argparse.Namespace) -> dict:
    """The TrainConfig values the command's flags give (None: not given), a dict setting's keys
    nested in it: the ``flag_values`` of `graphnorm.train.resolve.resolve_config`."""
    out: dict = {}
    for dest, block in args.config_dests.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if block is None:
            out[dest] = value
        else:
            out.setdefault(block, {})[dest] = value
    return out


def resolved_config(args: argparse.Namespace, settings: Optional[dict] = None):
    """The run's TrainConfig: config file and flags through `resolve_config`, which reads the
    user's table (for the rules that follow it) with the data layer's reader and whose notes
    are printed. ``settings``: TrainConfig values given as if by flags, over ``args``'s (a
    TDC suite task's table flags), so that ``args`` is never edited."""
    from graphnorm.data.table import read_table
    from graphnorm.train.config import read_yaml
    from graphnorm.train.resolve import resolve_config

    flags = dict(config_flags(args), **(settings or {}))
    return resolve_config(read_yaml(args.config) if args.config else None, flags,
                          read_table=read_table, note=print_note)

