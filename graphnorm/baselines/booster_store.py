"""A LightGBM booster on disk: the one stored form every graphnorm file uses.

Three files hold boosters -- a tree member's ``gbm.json``, the shipped ADMET boosters
(``admet_boosters.json.xz``) and a panel's readout bundle (``readouts.json.xz``) -- each with
its own record around them (what the boosters read, their task, their transforms), and all
store a booster the same way, through `encode` and `decode`:

- a fitted booster: LightGBM's own text model format (``Booster.model_to_string``) -- no
  pickle, so loading runs no stored code, and the text is readable across LightGBM versions;
- a target whose training rows held one class: that class's rate (a number);
- a target with no label at all: ``None``.

Bundles written before this module stored a one-class rate as the JSON text of the number
(``"0.25"``); `decode` still reads it.
"""
from __future__ import annotations

import json
from typing import Optional, Union

Stored = Union[str, float, None]


class StoredBoosterError(ValueError):
    """A stored booster that is neither LightGBM text, a number nor null."""


def encode(model) -> Stored:
    """What a file stores for ``model``: a ``lightgbm.Booster``, a one-class rate or None."""
    if model is None:
        return None
    if isinstance(model, (int, float)):
        return float(model)
    return model.model_to_string()


def decode(stored: Stored, where: Optional[str] = None):
    """The booster (``lightgbm.Booster``), rate (float) or None that ``stored`` holds;
    StoredBoosterError naming ``where`` (a file, a target) when it holds none of them."""
    if stored is None or isinstance(stored, (int, float)):
        return None if stored is None else float(stored)
    if not isinstance(stored, str):
        raise StoredBoosterError(f"{where or 'a stored booster'}: a {type(stored).__name__} is "
                                 "not a LightGBM model, a rate or null")
    try:
        rate = json.loads(stored)
    except ValueError:
        rate = None
    if isinstance(rate, (int, float)) and not isinstance(rate, bool):
        return float(rate)
    import lightgbm as lgb

    try:
        return lgb.Booster(model_str=stored)
    except Exception as err:  # LightGBM raises its own error class for a damaged model text
        raise StoredBoosterError(f"{where or 'a stored booster'}: not a LightGBM model "
                                 f"({type(err).__name__}: {str(err)[:200]})") from err


def as_text(stored: Stored) -> str:
    """A stored booster as one text (a per-booster file: a rate as its JSON number);
    `decode` reads it back."""
    return stored if isinstance(stored, str) else json.dumps(stored)
