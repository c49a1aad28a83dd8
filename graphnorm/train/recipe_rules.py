"""Recipes as data: a recipe is its TrainConfig values plus size rules, and one function,
`apply_size_rules`, interprets the rules of any recipe (the recipes themselves:
graphnorm/train/recipes.py).

A size rule reads as a sentence: *when* every condition holds (``"rows < 1000"``,
``"task == classification"``, ``"init_from == none"``: unset or the word none), and the user
gave none of ``unless_given``, *set* each key the user did not give. ``rows`` is the table's row count; any other name is a config key, read
from the values the layers below the rules chose (config resolution: graphnorm/train/resolve.py).
The conditions of every rule read those values before any rule ran, so the rules of a
recipe do not depend on their order. A key ``block.key`` (``model.num_layers``) sets one key
of a dict block; a value ``AtLeast(n)`` raises the key to ``n`` and keeps a larger one.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["AtLeast", "Condition", "Recipe", "SizeRule", "apply_size_rules", "is_given"]

_OPS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
        "<": operator.lt, ">": operator.gt}
ROWS = "rows"  # the condition name that reads the table's row count
NONE = "none"  # a config key compared with "none" matches it unset too (`--init-from none`)


@dataclass(frozen=True)
class Condition:
    """``name op value``, e.g. ``rows >= 2500`` or ``task == classification``."""
    name: str
    op: str
    value: Any

    @classmethod
    def parse(cls, text: str) -> "Condition":
        parts = text.split()
        if len(parts) != 3 or parts[1] not in _OPS:
            raise ValueError(f"size rule condition {text!r}: write NAME OP VALUE with OP one "
                             f"of {' '.join(_OPS)}, e.g. 'rows < 1000'")
        name, op, literal = parts
        if name == ROWS:
            try:
                return cls(name, op, int(literal))
            except ValueError:
                raise ValueError(f"size rule condition {text!r}: rows compare with a whole "
                                 "number") from None
        if op not in ("==", "!="):
            raise ValueError(f"size rule condition {text!r}: a config key compares with == or "
                             "!= only")
        return cls(name, op, literal)

    def holds(self, values: Mapping[str, Any], rows: int) -> bool:
        have = rows if self.name == ROWS else values.get(self.name)
        if self.value == NONE and have is None:  # unset reads as the literal "none"
            have = NONE
        return _OPS[self.op](have, self.value)


@dataclass(frozen=True)
class AtLeast:
    """A rule's value that raises a key to ``value``, keeping a larger one."""
    value: int


@dataclass(frozen=True)
class SizeRule:
    """When every ``when`` condition holds and none of ``unless_given`` was given: ``set``
    each key the user did not give."""
    when: tuple[str, ...]
    set: Mapping[str, Any]
    unless_given: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # a misspelt condition fails when the recipes are defined, not when a table is read
        object.__setattr__(self, "conditions", tuple(Condition.parse(c) for c in self.when))

    def applies(self, values: Mapping[str, Any], given: Mapping[str, Any], rows: int) -> bool:
        return (all(c.holds(values, rows) for c in self.conditions)
                and not any(is_given(given, key) for key in self.unless_given))


@dataclass(frozen=True)
class Recipe:
    """A named recipe: TrainConfig ``values`` (under the user's config file and flags) and
    the ``size_rules`` that follow the user's table (none: its values are the recipe)."""
    values: Mapping[str, Any]
    size_rules: tuple[SizeRule, ...] = ()


def is_given(given: Mapping[str, Any], key: str) -> bool:
    """Whether the user set ``key`` (config file or flag): a value other than None; a dict
    block's key (``model.num_layers``) counts once it is in the user's block."""
    if "." in key:
        block, sub = key.split(".", 1)
        return isinstance(given.get(block), dict) and sub in given[block]
    return given.get(key) is not None


def apply_size_rules(rules, values: dict, given: Mapping[str, Any], rows: int) -> dict:
    """``values`` (the recipe, the config file and the flags merged) after ``rules`` on a
    table of ``rows`` rows; ``given``: what the user set, which the rules keep."""
    out = dict(values)
    for rule in rules:
        if not rule.applies(values, given, rows):
            continue
        for key, value in rule.set.items():
            if not is_given(given, key):
                out = _put(out, key, value)
    return out


def _put(values: dict, key: str, value: Any) -> dict:
    if isinstance(value, AtLeast):
        value = max(_get(values, key) or 0, value.value)
    if "." in key:
        block, sub = key.split(".", 1)
        return dict(values, **{block: {**(values.get(block) or {}), sub: value}})
    return dict(values, **{key: value})


def _get(values: Mapping[str, Any], key: str) -> Any:
    if "." in key:
        block, sub = key.split(".", 1)
        return (values.get(block) or {}).get(sub)
    return values.get(key)
