"""Learning-rate schedules: Graphormer v1's linear warm-up to the peak, then linear decay
(training runs), and warm-up then inverse square root (pre-training, open-ended).

The schedule is a function of training progress: steps done / total steps for an epoch or
step budget, or the elapsed fraction of a time budget (``progress``), so a run given 25
minutes warms up and decays over those 25 minutes whatever its step rate.
"""
from __future__ import annotations

import math

from typing import Callable, Optional

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR


def lr_factor(done: float, warmup: float, floor: float) -> float:
    """Peak-relative lr at progress ``done`` (same unit as ``warmup``, total = 1 or steps)."""
    if done < warmup:
        return done / warmup
    return 1.0 - (1.0 - floor) * min(1.0, (done - warmup) / max(1e-12, 1.0 - warmup))


def warmup_linear_decay(optimizer: Optimizer, warmup_steps: int, total_steps: int,
                        peak_lr: float, end_lr: float, warmup_fraction: float = 0.06,
                        progress: Optional[Callable[[], float]] = None) -> LambdaLR:
    """lr(t) = peak * t / warmup for t < warmup, then linear from peak to end_lr at total.

    With ``progress`` (a callable returning the elapsed fraction in [0, 1]) the step count is
    ignored and warm-up lasts ``warmup_fraction`` of the budget.
    """
    floor = end_lr / peak_lr
    if progress is not None:
        return LambdaLR(optimizer, lambda step: lr_factor(progress(), warmup_fraction, floor))
    warmup_steps = max(1, warmup_steps)
    total_steps = max(total_steps, warmup_steps + 1)

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        done = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
        return 1.0 - (1.0 - floor) * done

    return LambdaLR(optimizer, factor)


def lr_at(step: int, base: float, warmup: int) -> float:
    """Linear warm-up to ``base`` over ``warmup`` steps, then base * sqrt(warmup / step)
    (the inverse-square-root schedule of Vaswani et al. 2017, https://arxiv.org/abs/1706.03762)."""
    step = max(step, 1)
    return base * min(step / warmup, math.sqrt(warmup / step))


def warmup_inverse_sqrt(optimizer: Optimizer, peak_lr: float, warmup_steps: int,
                        offset: int = 0) -> LambdaLR:
    """`lr_at` as a scheduler: optimizer step k (from 0) runs at lr_at(offset + k + 1). It
    needs no planned length, so a run continued for more hours goes on smoothly, and
    ``offset`` (the steps a warm start's source trained) continues a schedule begun elsewhere."""
    return LambdaLR(optimizer, lambda k: lr_at(offset + k + 1, peak_lr, warmup_steps) / peak_lr)
