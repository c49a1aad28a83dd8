"""Griffe extension: docstrings write tensor shapes after names ("[VNode] [B, D]"), which
Markdown reads as a reference link (and strict mode as a missing cross-reference). The
second bracket is escaped, so shapes render as written; the package's docstrings stay as
they are."""
from __future__ import annotations

import re

import griffe

_ADJACENT = re.compile(r"\]([ \t]?)\[")


class ShapeBrackets(griffe.Extension):
    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ADJACENT.sub(r"]\1\\[", obj.docstring.value)
