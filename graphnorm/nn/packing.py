"""Tokens of sequences of unequal length stored packed: the special tokens, then the others.

A padded batch ``[B, L, D]`` of sequences whose real lengths differ (molecules of 10 and of
130 atoms in one batch) spends the token-wise work -- norms, the Q/K/V and output projections,
the FFN, the local branch -- on padding as well. Packed, the B special tokens (position 0 of
each sequence) come first, then every real ordinary token in row-major order (sequence 0's,
then sequence 1's, ...; PyG's node order for graphs): ``[B + T, D]``. Only attention needs
the padded layout, so :class:`TokenPacking` scatters Q/K/V into it and gathers the output back.

On the small TDC ADMET tables, after size-bucketed batching, 20-39 % of the padded tokens of
a training batch are padding (measured at commit ff74c75: experiments/results/tdc_admet/cost/packed_tokens.md there).
"""
from __future__ import annotations

import torch
from torch import Tensor


class TokenPacking:
    """The packed layout of a padded batch with ``padding_mask`` bool ``[B, L]`` (True =
    padding; position 0, the special token, is never padding).

    ``pack(dense [B, L, C]) -> [B + T, C]``; ``unpack(packed) -> [B, L, C]`` with zeros on
    padding. Both are index copies whose gradients are the other one."""

    def __init__(self, padding_mask: Tensor):
        B, L = padding_mask.shape
        self.batch_size, self.length, self.padding_mask = B, L, padding_mask
        real = ~padding_mask[:, 1:]  # [B, L - 1] ordinary tokens
        b, j = real.nonzero(as_tuple=True)  # row-major: sequence by sequence
        specials = torch.arange(B, device=padding_mask.device) * L
        self.index = torch.cat([specials, b * L + j + 1])  # [B + T] flat positions in B * L
        self.sequence = b  # [T] the sequence of each ordinary token

    @property
    def specials(self) -> int:
        """The number of special tokens, the first rows of a packed tensor."""
        return self.batch_size

    def pack(self, dense: Tensor) -> Tensor:
        return dense.reshape(-1, dense.shape[-1]).index_select(0, self.index)

    def unpack(self, packed: Tensor) -> Tensor:
        B, L = self.batch_size, self.length
        out = packed.new_zeros(B * L, packed.shape[-1]).index_copy(0, self.index, packed)
        return out.view(B, L, -1)

    def lengths(self) -> Tensor:
        """The number of ordinary tokens of each sequence: long ``[B]``."""
        return (~self.padding_mask[:, 1:]).sum(1)

    def token_sum(self, packed: Tensor) -> Tensor:
        """Per sequence, the sum of its ordinary tokens: ``[B, C]`` (0 for none)."""
        out = packed.new_zeros(self.batch_size, packed.shape[-1])
        return out.index_add(0, self.sequence, packed[self.batch_size:])
