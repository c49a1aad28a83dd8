"""Learning-rate schedule of Graphormer v1: linear warm-up to the peak, then linear decay."""
from __future__ import annotations

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR


def warmup_linear_decay(optimizer: Optimizer, warmup_steps: int, total_steps: int,
                        peak_lr: float, end_lr: float) -> LambdaLR:
    """lr(t) = peak * t / warmup for t < warmup, then linear from peak to end_lr at total."""
    warmup_steps = max(1, warmup_steps)
    total_steps = max(total_steps, warmup_steps + 1)
    floor = end_lr / peak_lr

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        done = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
        return 1.0 - (1.0 - floor) * done

    return LambdaLR(optimizer, factor)
