"""State-dict key migration: checkpoints written before a module moved still load.

A module that renamed or moved submodules overrides ``_load_from_state_dict`` and calls
:func:`rename_keys` with its old-to-new names before torch reads its own keys. Torch then
hands each child the keys under the child's (new) prefix, so renames compose along the tree
(the Graphormer moves ``blocks.*`` under ``transformer.``; each block then renames its own
``qkv`` to ``attn.qkv``).
"""
from __future__ import annotations

from typing import Mapping


def rename_keys(state_dict: dict, prefix: str, renames: Mapping[str, str]) -> None:
    """In place: every key ``prefix + old + rest`` becomes ``prefix + new + rest``.

    ``old`` names a whole path component or dotted path (``"norm"`` matches ``norm.weight``,
    not ``norm1.weight``). Keys already in the new layout are left alone.
    """
    for key in [k for k in state_dict if k.startswith(prefix)]:
        local = key[len(prefix):]
        for old, new in renames.items():
            if local == old or local.startswith(old + "."):
                state_dict[prefix + new + local[len(old):]] = state_dict.pop(key)
                break
