"""What may start or feed a TDC ADMET run: only a network that provably never saw a TDC molecule.

Each TDC seed draws its validation split from ``train_val``, and test is test, so a network
that read any TDC table -- the product panel, built on every public label by design -- would
be scored on molecules it learned. A checkpoint is accepted as ``--init-from`` or
``--feature-backbone`` under ``benchmark --suite tdc-admet`` only when its record says its
pre-training left every TDC molecule out (``graphnorm pretrain`` without ``--keep-tdc``:
``train_config.pretrain.exclude_tdc`` is true, `graphnorm.pretrain.splits`). Anything else --
a build that kept TDC, a model fine-tuned on some table, a checkpoint of unknown history -- is
refused by name before any training, since its history cannot be shown clean.
"""
from __future__ import annotations

from typing import Optional

# the run settings that bring a pre-trained network into a run
FIELDS = ("init_from", "feature_backbone")


def tdc_refusal(value: str) -> Optional[str]:
    """Why the checkpoint ``value`` (a path, a run folder or a shipped name) may have seen a
    TDC molecule; None when its pre-training record shows every one left out."""
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.pretrained import resolve_init_from

    return refusal_of(load_checkpoint(resolve_init_from(value)), value)


def refusal_of(loaded, value: str) -> Optional[str]:
    """`tdc_refusal` of a checkpoint already loaded (``value``: how it was named)."""
    pretrain = (loaded.meta.get("train_config") or {}).get("pretrain") or {}
    if pretrain.get("exclude_tdc") is True:
        return None
    if pretrain.get("exclude_tdc") is False:
        return f"{value} ({loaded.path}) was pre-trained with the TDC molecules kept (--keep-tdc)"
    return (f"{value} ({loaded.path}) does not record a pre-training that left every TDC "
            "molecule out (only `graphnorm pretrain` checkpoints without --keep-tdc do)")


def check_tdc_clean(cfg, seen: Optional[dict] = None) -> None:
    """Refuse ``cfg`` when a network it reads (`FIELDS`) may have seen a TDC molecule.
    ``seen``: value -> refusal of checkpoints already checked (each file is read once)."""
    seen = {} if seen is None else seen
    for field in FIELDS:
        value = getattr(cfg, field, None)
        if not value:
            continue
        if value not in seen:
            seen[value] = tdc_refusal(str(value))
        if seen[value]:
            flag = "--" + field.replace("_", "-")
            raise ValueError(f"--suite tdc-admet: {flag} {seen[value]}; a TDC score from it "
                             "would count molecules it may have learned. Use a backbone "
                             "pre-trained without TDC (the shipped 'admet'), or --init-from none")
