"""Config resolution: the one place that turns what a user gave into a run's TrainConfig.

Layers, lowest first; each replaces the values of the one below key by key (the dict settings
``featurizer`` and ``model`` merge key by key as well):

1. TrainConfig's defaults (graphnorm/train/config.py);
2. the recipe (graphnorm/train/recipes.py): the file's ``recipe:``, else ``--recipe``; without
   a config file ``auto`` (picked by the data); a config file without ``recipe:`` has none,
   so it means what it always meant: its values over the defaults;
3. the config file's values (flat; a file nested by block is read flat by
   `graphnorm.train.config.read_yaml`);
4. the flags given (``None`` = not given);
5. the rules that follow the data, last because they read what the layers above chose:
   ``--task auto`` decided from the table's labels, the recipe's backbone stepping aside for
   a model it was not trained as (`recipes.settle_backbone`), then the small-table and admet
   recipes' table-size rules (`recipes.table_size_rules`), which read whether the run
   starts from a backbone. Explicit values (file or flag) win over the rules.

It lives in ``train/`` because it needs the recipes and TrainConfig (train) and the data
rules (data, below); the CLI, ``hpopt`` and ``benchmark`` (above) call it. It is pure: no
argparse (the CLI turns its flags into ``flag_values``), no printing (notes go to ``note``),
and it reads a file only through the ``read_table`` it is handed. Its second half,
graphnorm/train/plan.py, derives every run of a command from the config made here (ensemble
members, benchmark runs, hpopt trials, suite tasks); no other module edits a config.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from .config import TrainConfig, fold_old_keys
from .recipes import SIZED_RECIPES, apply_recipe, settle_backbone, table_size_rules

__all__ = ["resolve_config"]


def resolve_config(file_values: Optional[dict], flag_values: dict, *,
                   read_table: Optional[Callable[[str, Optional[str]], Any]] = None,
                   note: Optional[Callable[[str], None]] = None) -> TrainConfig:
    """The run's TrainConfig from its config file and flags (see the module's layers).

    ``file_values``: the config file's mapping, or None when no file was given (``{}`` is an
    empty file: no ``auto`` recipe then). ``flag_values``: TrainConfig keys the flags set
    (dict settings as dicts, e.g. ``{"featurizer": {"fingerprint_bits": 2048}}``); ``None``
    values count as not given. ``read_table(path, smiles_column)``: reads a user table for
    the data rules; without it they do not apply. A table it cannot read (it raises) leaves
    the rules out: the run then fails reading it, with that reader's own message.
    ``note(text)``: receives what the rules decided and why (the CLI prints it).
    """
    given = _over(fold_old_keys(dict(file_values or {})),
                  {k: v for k, v in flag_values.items() if v is not None})
    recipe = given.get("recipe") or (None if file_values is not None else "auto")
    merged = apply_recipe(given, recipe)
    wants_task = merged.get("task", "auto") == "auto"
    table = None
    sized = merged.get("recipe") in SIZED_RECIPES
    if read_table is not None and merged.get("data") and (wants_task or sized):
        table = _read_or_none(read_table, merged)
    if table is not None and wants_task:
        merged = dict(merged, task=_table_task(table, merged, note))
    # the recipe's backbone steps aside before the size rules read it: a run that ends up
    # from scratch gets the scratch rules (the admet recipe's 3 blocks). A file's
    # `init_from: null` counts as given, as before: the recipe's backbone is not used
    settled = settle_backbone(TrainConfig.from_dict(merged), given="init_from" in given,
                              note=note or _silent)
    merged = dict(merged, init_from=settled.init_from)
    if table is not None and sized:
        merged = table_size_rules(merged, given, len(table))
    return TrainConfig.from_dict(merged)


def _over(low: dict, high: dict) -> dict:
    """``high``'s values over ``low``'s; dict settings merge key by key (a flag sets one key of
    ``featurizer`` without dropping the file's others)."""
    out = dict(low)
    for key, value in high.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = {**out[key], **value} if both else value
    return out


def _read_or_none(read_table: Callable, values: dict):
    # on purpose: an unreadable table is not this function's error to report; the run reads
    # the table again and fails with the reader's message (a missing file, a bad column)
    try:
        return read_table(values["data"], values.get("smiles_column"))
    except Exception:
        return None


def _table_task(table, values: dict, note: Optional[Callable[[str], None]]) -> str:
    """``--task auto`` decided from the table's labels; "auto" when they cannot be read (the
    run fails with its own message when it reads them)."""
    from graphnorm.data.table_dataset import auto_task
    from graphnorm.data.table_split import split_kind

    try:
        kind, arg = split_kind(values.get("split") or "scaffold")
        exclude = [arg] if kind in ("column", "tdc") else []
        task, why = auto_task(table, values.get("target_columns") or [], exclude)
    except Exception:
        return "auto"
    if note:
        note(why)
    return task


def _silent(text: str) -> None:
    pass
