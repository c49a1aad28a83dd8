"""Common interface of token normalizations.

Every norm maps ``x: [B, L, D]`` and ``padding_mask: [B, L]`` (True = padding) to
``[B, L, D]``. Position 0 holds the special token ([VNode] in graphs, [CLS] in text and
vision) and is never padding. Norms with batch statistics compute them over real tokens
only, so padded values never reach the output of real tokens.

``forward_packed(x [R, D], specials)`` is the same norm on tokens stored packed (no padding):
rows ``[0, specials)`` are the special tokens, the rest ordinary ones (``graphnorm.nn.packing``).
"""
from __future__ import annotations

from typing import Optional

from torch import Tensor, nn


class TokenNorm(nn.Module):
    """Base class: ``forward(x [B, L, D], padding_mask [B, L] | None) -> [B, L, D]``."""

    spec: str = "?"

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def reset_parameters(self) -> None:  # pragma: no cover - overridden
        pass

    def forward(self, x: Tensor, padding_mask: Optional[Tensor] = None) -> Tensor:
        raise NotImplementedError

    def forward_packed(self, x: Tensor, specials: int) -> Tensor:
        """The norm of packed tokens ``x [R, D]``, the first ``specials`` rows special: every
        row is a real token, so one sequence without padding holds them all (a norm that
        treats the special tokens apart, SepNorm, overrides this)."""
        return self.forward(x.unsqueeze(0), None).squeeze(0)

    def extra_repr(self) -> str:
        return f"{self.dim}, spec={self.spec!r}"


def real_token_weights(x: Tensor, padding_mask: Optional[Tensor]) -> tuple[Tensor, Tensor]:
    """Return weights ``w [B, L, 1]`` (1 = real token) and the real-token count.

    Multiplying by weights instead of boolean indexing keeps the hot path free of
    data-dependent shapes.
    """
    if padding_mask is None:
        w = x.new_ones(x.shape[0], x.shape[1], 1)
    else:
        if padding_mask.shape != x.shape[:2]:
            raise ValueError(
                f"padding_mask has shape {tuple(padding_mask.shape)}, expected {tuple(x.shape[:2])}"
            )
        w = (~padding_mask).to(x.dtype).unsqueeze(-1)
    return w, w.sum()


def masked_moments(x: Tensor, w: Tensor, count: Tensor) -> tuple[Tensor, Tensor]:
    """Per-channel mean and biased variance over the tokens with weight 1."""
    mean = (x * w).sum(dim=(0, 1)) / count
    var = (((x - mean) * w) ** 2).sum(dim=(0, 1)) / count
    return mean, var
