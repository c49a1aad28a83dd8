"""Separate normalization (SepNorm) of the special token and the other tokens.

Chen et al. 2023, "On Separate Normalization in Self-supervised Transformers",
https://arxiv.org/abs/2309.12931, Eq. 5:

    H' = [ Norm_special(h_[CLS]) ; Norm_tokens(h_1 ... h_L) ]

with separate parameters (and, for BN, separate statistics) per channel. The paper's SepNorm
is ``sep:bn+ln`` (BN+LN, the default) and ``sep:bn+bn`` (BN+BN), against ShareNorm ``ln`` and
``bn``; ``sep:ln+ln`` and ``sep:ln+bn`` complete the grid (``sep:ln+ln`` separates only the
parameters, a control for "is it the batch statistics?"). The first name normalizes
position 0 ([CLS] / [VNode]), the second the rest.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from .base import TokenNorm


class SepNorm(TokenNorm):
    def __init__(self, special: TokenNorm, tokens: TokenNorm):
        if special.dim != tokens.dim:
            raise ValueError(f"special and token norms differ in width: {special.dim} vs {tokens.dim}")
        super().__init__(special.dim)
        self.special, self.tokens = special, tokens
        self.spec = f"sep:{special.spec}+{tokens.spec}"

    def reset_parameters(self) -> None:
        self.special.reset_parameters()
        self.tokens.reset_parameters()

    def forward(self, x: Tensor, padding_mask: Optional[Tensor] = None) -> Tensor:
        # The special token is never padding; batch statistics of the special channel are
        # therefore taken over the B special tokens of the batch.
        head = self.special(x[:, :1], None)
        rest_mask = None if padding_mask is None else padding_mask[:, 1:]
        tail = self.tokens(x[:, 1:], rest_mask)
        return torch.cat([head, tail], dim=1)

    def forward_packed(self, x: Tensor, specials: int) -> Tensor:
        # the special tokens as B sequences of one token, the rest as one sequence
        head = self.special(x[:specials].unsqueeze(1), None).squeeze(1)
        return torch.cat([head, self.tokens.forward_packed(x[specials:], 0)])
