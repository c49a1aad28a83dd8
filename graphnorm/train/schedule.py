"""Learning-rate schedule of Graphormer v1: linear warm-up to the peak, then linear decay.

The schedule is a function of training progress: steps done / total steps for an epoch or
step budget, or the elapsed fraction of a time budget (``progress``), so a run given 25
minutes warms up and decays over those 25 minutes whatever its step rate.
"""
from __future__ import annotations

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
