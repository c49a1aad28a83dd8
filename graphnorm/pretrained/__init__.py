"""Pre-trained backbones shipped with the package, fine-tuned by name (``--init-from NAME``).

Each is a graphnorm checkpoint stripped to the model's weights and its ``graphnorm`` block
(no optimizer state), installed as package data. How each was trained, on what data and with
which command, is in ``graphnorm/pretrained/README.md`` and, with its numbers, in
``experiments/results/pretrained/``.

- ``admet``: the ADMET backbone, ``--recipe admet``'s default start (RULE.md M): the
  Graphormer pre-trained on ``admet_corpus`` (no TDC molecule) read through the shared map
  of endpoints to quantities, warm-started from ``admet-panel`` (``admet_backbone.ckpt``,
  sha256 ``d9d594cf``).
- ``admet-panel``: the model behind ``graphnorm admet``, pre-trained on every task of
  ``admet_corpus`` (no TDC molecule); its folder ``admet/`` also holds the panel
  (``panel.json``) and ``MODEL_CARD.md``, installed by ``graphnorm panel ship``. It was the
  ``admet`` backbone until the quantity-map backbone replaced it as the start.
- ``zinc250k``: the small-table recipe's Graphormer (4 x 64, GINE branch, ``sep:bn+bn``)
  pre-trained to regress the RDKit 2D descriptors of ~217k ZINC250k training molecules.
  ``graphnorm train --data TABLE --target-columns Y --init-from zinc250k`` fine-tunes it; the
  descriptors then enter at the head beside a fresh head.

Also shipped here, as data: ``admet_boosters.json.xz``, the 9 boosters of measured ADMET
labels behind gbm's ``maplight+admet`` features (code: `graphnorm.baselines.admet_boosters`).
"""
from __future__ import annotations

from pathlib import Path

# name -> file in this folder; "admet-panel": the ADMET panel's model (`panel ship`)
BACKBONES = {"zinc250k": "zinc250k.ckpt", "admet": "admet_backbone.ckpt",
             "admet-panel": "admet/best.ckpt"}
# the ADMET panel `graphnorm admet` reads by default: a folder of the pre-trained model
# (best.ckpt), its panel.json and MODEL_CARD.md (graphnorm/panel/build.py, card.py)
ADMET_PANEL = "admet"


class PretrainedError(ValueError):
    pass


def pretrained_path(name: str) -> Path:
    """The installed checkpoint of backbone ``name``; a clear error for a missing file."""
    if name not in BACKBONES:
        raise PretrainedError(f"no pre-trained backbone named {name!r}; shipped: "
                              f"{', '.join(BACKBONES)}")
    path = Path(__file__).parent / BACKBONES[name]
    if not path.is_file():
        raise PretrainedError(f"the pre-trained backbone {name!r} is not installed ({path} is "
                              "missing); reinstall graphnorm from a full source tree")
    return path


def admet_panel_path() -> Path:
    """Where the installed package keeps its ADMET panel, whether or not it holds one."""
    return Path(__file__).parent / ADMET_PANEL


def admet_panel_folder() -> Path:
    """The shipped ADMET panel's folder; a clear error where this graphnorm ships none."""
    folder = admet_panel_path()
    if not (folder / "panel.json").is_file():
        raise PretrainedError("this graphnorm ships no ADMET panel yet: build one with "
                              "`graphnorm pretrain --out RUN` then `graphnorm panel build RUN`, and pass "
                              "--model RUN (docs/pretraining.md)")
    return folder


def resolve_init_from(value: str | Path) -> Path:
    """``--init-from``: a shipped backbone's name, or a checkpoint / run directory path."""
    text = str(value)
    if text in BACKBONES and not Path(text).exists():  # a local folder of that name wins
        return pretrained_path(text)
    return Path(value)
