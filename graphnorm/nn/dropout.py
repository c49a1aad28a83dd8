"""Inverted dropout with cheap CPU masks: ``y * m / (1 - p)``, m ~ Bernoulli(1 - p).

Srivastava et al. 2014, "Dropout", https://jmlr.org/papers/v15/srivastava14a.html.

Why not ``F.dropout`` on CPU: ``bernoulli_`` (and ``torch.randint``) draw one Mersenne-Twister
number per element, ~10-20 ns each here, which made dropout masks the largest elementwise
cost of a Graphormer training step. Here NumPy's SFC64 fills 64-bit words (~0.6 ns each)
that are read as four 16-bit lanes; a lane below ``round(p * 2^16) - 2^15`` drops its
element, so p is exact to 2^-16. Masks are float 0/1: on CPU ``torch.ge`` into a float
output, ``mul`` and ``addcmul`` are 2-3x faster than making a bool mask and ``masked_fill``. The SFC64 stream is seeded from torch's default generator,
so ``torch.manual_seed`` (and Lightning's ``seed_everything``) still fixes every mask.
Other devices use ``F.dropout``.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor


def keep_mask(shape, p: float, dtype: torch.dtype = torch.float32) -> Tensor:
    """0/1 tensor of ``shape`` and ``dtype``: each element independently 0 with P = p."""
    n = math.prod(shape)
    seed = int(torch.randint(0, 2**62, (1,)))  # ties the mask stream to torch's RNG state
    words = np.random.SFC64(seed).random_raw((n + 3) // 4)  # uint64
    lanes = torch.from_numpy(words.view(np.int16)[:n]).view(shape)  # uniform on [-2^15, 2^15)
    return torch.ge(lanes, round(p * 65536) - 32768, out=torch.empty(shape, dtype=dtype))


def _mask(x: Tensor, p: float, packing) -> Tensor:
    """The CPU keep mask of ``x``; for packed tokens (``graphnorm.nn.packing``) drawn on the
    padded shape and packed, so that a seed draws the same masks either way."""
    if packing is None:
        return keep_mask(x.shape, p, x.dtype)
    shape = (packing.batch_size, packing.length, x.shape[-1])
    return packing.pack(keep_mask(shape, p, x.dtype))


def residual_dropout(h: Tensor, y: Tensor, p: float, training: bool, packing=None) -> Tensor:
    """``h + dropout(y)``; on CPU a single ``addcmul`` applies mask, scale and residual."""
    if not training or p == 0.0:
        return h + y
    if y.device.type != "cpu" or p >= 1.0:
        return h + F.dropout(y, p, training=True)
    return torch.addcmul(h, y, _mask(y, p, packing), value=1.0 / (1.0 - p))


def dropout(x: Tensor, p: float, training: bool, packing=None) -> Tensor:
    """Inverted dropout ``x * m / (1 - p)`` with the cheap CPU mask of :func:`keep_mask`."""
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or p >= 1.0:
        return F.dropout(x, p, training=True)
    return x * _mask(x, p, packing).mul_(1.0 / (1.0 - p))
