"""The schema of a run's settings: each TrainConfig field says, where it is declared, which
block it belongs to and what it means (`setting`); everything that reads settings by block
or by flag comes from there, not from lists kept beside it:

- ``TrainConfig.blocks()`` and ``cfg.block(name)``: the fields of each block, and one
  block's settings as a frozen dataclass of their own (`block_view`);
- config files nested by block (``optimization: {lr: 0.001}``) read as flat ones
  (`unnest_blocks`; graphnorm/train/config.py `read_yaml`);
- the flags of ``train``, ``benchmark`` and ``hpopt``: one per setting, named after it
  (``max_steps`` -> ``--max-steps``), its type from the annotation, its help and choices from
  here (graphnorm/train/cli.py `add_setting_flags`). A new setting is one field with its
  `setting`; it needs no hand-written flag.

Torch-free and free of graphnorm imports: config.py, the CLI parser and the docs read it.
"""
from __future__ import annotations

import dataclasses
import difflib
import typing
from functools import lru_cache
from typing import Any, Callable, Mapping, Optional, Sequence, Union

# the blocks, in the order --help lists them, with what each holds (its help section).
# `data` and `ensemble` are also settings (a table file, a number of members): in a config
# file a mapping under them is the block, a value the setting. The model block is called
# `architecture` because `model:` is the setting of model-config overrides.
BLOCKS: dict[str, str] = {
    "data": "the molecules: a benchmark (--dataset) or your own table (--data; README: Your "
            "own molecules), the task, the split and the featurizer",
    "architecture": "the model: its kind (--model), size, norm and options",
    "optimization": "how it trains: the recipe, batches, loss, learning-rate schedule, "
                    "budget, validation and stopping",
    "ensemble": "several members: seeds, and a tree model as one more member",
    "runtime": "where and how it runs: seed, run folder, hardware, checkpoints, progress",
}
# the commands whose flags a setting gets unless its `commands` says otherwise
COMMANDS = ("train", "benchmark", "hpopt")

Text = Union[str, Callable[[], str]]  # a help text, or one made when the parser is built
Choices = Union[Sequence, Callable[[], Sequence], None]  # e.g. a registry's current names


def setting(default: Any = dataclasses.MISSING, block: str = "", help: Text = "", *,
            factory: Optional[Callable[[], Any]] = None, flag: Union[str, bool] = True,
            choices: Choices = None, commands: Sequence[str] = COMMANDS,
            help_for: Optional[Mapping[str, str]] = None, **argparse_kwargs) -> Any:
    """A TrainConfig field with its schema: ``block`` (one of `BLOCKS`) and ``help`` (what
    the setting means, also its flag's help). ``factory``: a default_factory (dict settings).

    The flag: ``flag`` True names it after the field (``--max-steps``), a string names it
    otherwise (``--model``), False gives it none (a dict setting, or one only a config file
    sets). ``choices``: its valid values, or a function returning them when the parser is
    built (a registry's names). ``commands``: the commands that get it; ``help_for``: help
    of one command's flag where it means more there. ``argparse_kwargs``: what argparse
    needs beyond name, type, choices and help (``nargs``, ``metavar``; ``const``: a flag
    without a value that stores it)."""
    if block not in BLOCKS:
        raise ValueError(f"setting block {block!r} is not one of {list(BLOCKS)}")
    metadata = {"block": block, "help": help, "flag": flag, "choices": choices,
                "commands": tuple(commands), "help_for": dict(help_for or {}),
                "argparse": argparse_kwargs}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def kebab(name: str) -> str:
    """A field's flag name: ``max_steps`` -> ``--max-steps``."""
    return "--" + name.replace("_", "-")


def blocks_of(cls) -> dict[str, tuple[str, ...]]:
    """block -> the names of its fields, in `BLOCKS` order and field order within a block."""
    out: dict[str, list[str]] = {b: [] for b in BLOCKS}
    for f in dataclasses.fields(cls):
        out[f.metadata["block"]].append(f.name)
    return {b: tuple(names) for b, names in out.items()}


def setting_type(cls, name: str) -> Any:
    """The field's annotation with Optional[...] taken off (``Optional[int]`` -> int)."""
    hint = typing.get_type_hints(cls)[name]
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if typing.get_origin(hint) is Union and len(args) == 1 else hint


@lru_cache(maxsize=None)
def block_class(cls, block: str) -> type:
    """The frozen dataclass of one block's settings (``OptimizationSettings``), typed as the
    fields of ``cls`` are."""
    hints = typing.get_type_hints(cls)
    return dataclasses.make_dataclass(
        f"{block.title()}Settings", [(n, hints[n]) for n in blocks_of(cls)[block]],
        frozen=True)


def block_view(config, block: str):
    """``config``'s settings of ``block`` as an instance of `block_class`."""
    if block not in BLOCKS:
        raise ValueError(f"unknown block {block!r}; blocks: {', '.join(BLOCKS)}")
    cls = block_class(type(config), block)
    return cls(**{f.name: getattr(config, f.name) for f in dataclasses.fields(cls)})


def unnest_blocks(data: dict, blocks: Mapping[str, Sequence[str]], source: str,
                  old_keys: Mapping[str, str] = {}) -> dict:
    """A config mapping with settings given flat (``lr: 0.001``) or nested by block
    (``optimization: {lr: 0.001}``), or both, as the flat mapping. ``source`` names the
    file in the errors: a setting under another block than its own, a block or key that
    does not exist, one setting given flat and nested with different values.
    ``old_keys``: earlier key names read flat (name -> what it says, for the errors)."""
    block_of = {name: b for b, names in blocks.items() for name in names}
    flat, nested = {}, {}
    for key, value in data.items():
        if key in blocks and (key not in block_of or isinstance(value, dict)):
            if not isinstance(value, (dict, type(None))):
                raise ValueError(f"config file {source}: {key} is a block of settings; give "
                                 f"it a mapping ({key}: {{name: value}}), not {value!r}")
            for name, v in (value or {}).items():
                if name not in block_of:
                    raise ValueError(f"config file {source}: {key}: {name} is not a setting"
                                     f"{_hint(name, block_of, old_keys)}; the settings of "
                                     f"{key}: {', '.join(blocks[key])}")
                if block_of[name] != key:
                    raise ValueError(f"config file {source}: {name} is a setting of block "
                                     f"{block_of[name]}, not {key}; move it there (or give "
                                     f"it flat, without a block)")
                nested[name] = (key, v)
        elif key not in block_of and key not in old_keys:
            what = "block" if isinstance(value, dict) else "setting"
            raise ValueError(f"config file {source}: unknown {what} {key!r}"
                             f"{_hint(key, {**block_of, **dict.fromkeys(blocks)}, old_keys)}; "
                             f"settings are given flat or under a block: {', '.join(blocks)}")
        else:
            flat[key] = value
    for name, (key, value) in nested.items():
        if name in flat and flat[name] != value:
            raise ValueError(f"config file {source}: {name} is given twice with different "
                             f"values: {name}: {flat[name]!r} and {key}: {{{name}: "
                             f"{value!r}}}; keep one")
        flat[name] = value
    return flat


def _hint(name: str, known: Mapping[str, Any], old_keys: Mapping[str, str]) -> str:
    if name in old_keys:
        return f" there ({old_keys[name]})"
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""
