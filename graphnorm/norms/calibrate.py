"""Re-estimate the running statistics of every batch-statistics norm from chosen batches.

"Precise BN" (Wu & Johnson 2021, "Rethinking 'Batch' in BatchNorm",
https://arxiv.org/abs/2105.07576): the moving averages of a training run track the last few
batches; when batches are not i.i.d. (size-bucketed molecules, masked MAE inputs, padded
text) they describe the wrong population. Here each running estimate becomes the plain
average of the batch statistics of the given batches, layer by layer in one train-mode pass
per batch; weights do not change, other modules stay in evaluation mode (no dropout).
Works for the core's BatchNorm and IsoBN and for ``torch.nn`` BatchNorm layers.
"""
from __future__ import annotations

from typing import Callable, Iterable

import torch
from torch import nn

from .basic import BatchNorm
from .isobn import IsoBN


def batch_stat_norms(model: nn.Module) -> list[nn.Module]:
    return [m for m in model.modules() if isinstance(m, (BatchNorm, IsoBN, nn.modules.batchnorm._BatchNorm))]


@torch.no_grad()
def recalibrate_batch_stats(model: nn.Module, batches: Iterable,
                            forward: Callable = lambda model, batch: model(batch)) -> int:
    """Replace running statistics by the average over ``batches``; returns the number of
    batches used (0 when the model has no batch-statistics norm: nothing is run)."""
    norms = batch_stat_norms(model)
    if not norms:
        return 0
    was_training, saved = model.training, [m.momentum for m in norms]
    model.eval()
    for m in norms:
        m.reset_running_stats() if hasattr(m, "reset_running_stats") else _reset(m)
        m.train()
    k = 0
    try:
        for k, batch in enumerate(batches, 1):
            for m in norms:  # average of k batch estimates: new = old + (batch - old) / k
                m.momentum = (k - 1) / k if isinstance(m, IsoBN) else 1.0 / k
            forward(model, batch)
    finally:
        for m, momentum in zip(norms, saved):
            m.momentum = momentum
        model.train(was_training)
    return k


def _reset(norm: nn.Module) -> None:
    """Running statistics back to their initial values (weights untouched)."""
    for name, buf in norm.named_buffers(recurse=False):
        if name == "num_batches_tracked":
            buf.zero_()
        elif name in ("running_var", "moving_std"):
            buf.fill_(1.0)
        elif name == "moving_cov":
            buf.copy_(torch.eye(buf.shape[-1]))
        elif name.startswith("running"):
            buf.zero_()
