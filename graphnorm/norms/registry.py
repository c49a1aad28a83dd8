"""String resolver for token norms: ``build_norm("sep:bn+ln", 80)``.

A spec is a base norm (``ln``, ``bn``, ``rms``, ``none``, ``isobn``) or ``sep:A+B`` with
two base norms: A for the special token at position 0, B for all other tokens.
"""
from __future__ import annotations

from typing import Callable

from .base import TokenNorm
from .basic import BatchNorm, LayerNorm, NoNorm, RMSNorm
from .isobn import IsoBN
from .sep import SepNorm

BASE_NORMS: dict[str, Callable[..., TokenNorm]] = {
    "ln": LayerNorm,
    "bn": BatchNorm,
    "rms": RMSNorm,
    "none": NoNorm,
    "isobn": IsoBN,
}

# The documented specs: the paper's four SepNorm combos plus IsoBN on the special token.
NORM_SPECS: tuple[str, ...] = (
    "ln", "bn", "rms", "none", "isobn",
    "sep:bn+ln", "sep:bn+bn", "sep:ln+ln", "sep:ln+bn", "sep:isobn+ln",
)


def _base(name: str, dim: int, spec: str, isobn_beta: float) -> TokenNorm:
    if name not in BASE_NORMS:
        raise ValueError(_unknown(spec))
    if name == "isobn":
        return IsoBN(dim, beta=isobn_beta)
    return BASE_NORMS[name](dim)


def _unknown(spec: str) -> str:
    return (
        f"unknown norm spec {spec!r}; valid specs: {', '.join(NORM_SPECS)} "
        f"(any 'sep:A+B' with A, B in {', '.join(BASE_NORMS)} also works)"
    )


def build_norm(spec: str, dim: int, isobn_beta: float = 0.5) -> TokenNorm:
    """Build the token norm named by ``spec`` for width ``dim``."""
    if not isinstance(spec, str):
        raise TypeError(f"norm spec must be a string, got {type(spec).__name__}")
    spec = spec.strip().lower()
    if spec.startswith("sep:"):
        parts = spec[4:].split("+")
        if len(parts) != 2:
            raise ValueError(_unknown(spec))
        special, tokens = (_base(p, dim, spec, isobn_beta) for p in parts)
        return SepNorm(special, tokens)
    return _base(spec, dim, spec, isobn_beta)


BATCH_STAT_NORMS = ("bn", "isobn")


def constant_special_spec(spec: str) -> str:
    """``spec`` for a norm whose special token is the same vector for every sample.

    The first norm of a pre-norm encoder sees the learned [CLS]/[VNode] embedding before any
    attention: a constant across the batch. Batch statistics of a constant have zero
    variance, so in training BN outputs its bias while its running variance decays to 0, and
    in evaluation any drift of the embedding is amplified by up to 1/sqrt(eps) ~ 316 — a
    train/eval mismatch. There a batch-statistics special channel is replaced by ``ln``
    (``sep:bn+ln`` -> ``sep:ln+ln``); every other spec is returned unchanged.
    """
    s = spec.strip().lower()
    if s.startswith("sep:") and "+" in s:
        special, tokens = s[4:].split("+", 1)
        if special in BATCH_STAT_NORMS:
            return f"sep:ln+{tokens}"
    return spec
