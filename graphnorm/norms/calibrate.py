"""Re-estimate the running statistics of every batch-statistics norm from chosen batches.

"Precise BN" (Wu & Johnson 2021, "Rethinking 'Batch' in BatchNorm",
https://arxiv.org/abs/2105.07576): the moving averages of a training run track the last few
batches; when batches are not i.i.d. (size-bucketed molecules, masked MAE inputs, padded
text) they describe the wrong population. Here each running estimate becomes the plain
average of the batch statistics of the given batches, layer by layer in one train-mode pass
per batch; weights do not change, other modules stay in evaluation mode (no dropout).
Works for the core's BatchNorm and IsoBN and for ``torch.nn`` BatchNorm layers.

Without extra passes (:func:`keep_batch_moments`, :func:`load_batch_moments`; the core's
BatchNorm only): each BatchNorm keeps the count, mean and variance of its last training
batches, and the running estimates become those of their union by the law of total variance,
``mu = sum_b n_b mu_b / N``, ``var = sum_b n_b (var_b + (mu_b - mu)^2) / (N - 1)``. Size-
bucketed batches then give the statistics of all their molecules together, not the mean of
per-bucket ones; the price is that the last batches ran on slightly older weights.
"""
from __future__ import annotations

from collections import deque
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


def keep_batch_moments(model: nn.Module, num_batches: int) -> list[BatchNorm]:
    """Make every batch-statistics norm of ``model`` keep its last ``num_batches`` training
    batch moments; returns those norms. Empty (nothing kept) when one of them is not the
    core's BatchNorm (IsoBN, ``torch.nn`` BatchNorm), whose statistics only
    :func:`recalibrate_batch_stats` gives."""
    norms = batch_stat_norms(model)
    if not all(isinstance(m, BatchNorm) for m in norms):
        return []
    for m in norms:
        m.batch_moments = deque(maxlen=num_batches)
    return norms


@torch.no_grad()
def load_batch_moments(model: nn.Module) -> int:
    """Running statistics of every kept BatchNorm from the union of its kept batches; returns
    the number of batches used (0, nothing changed, when some norm kept none)."""
    norms = batch_stat_norms(model)
    if not norms or not all(getattr(m, "batch_moments", None) for m in norms):
        return 0
    for m in norms:
        counts, means, variances = (torch.stack(t) for t in zip(*m.batch_moments))
        n = counts.to(means.dtype).unsqueeze(1)  # [K, 1]
        total = n.sum()
        mean = (n * means).sum(0) / total
        spread = (n * (variances + (means - mean) ** 2)).sum(0)
        m.running_mean.copy_(mean)
        m.running_var.copy_(spread / (total - 1).clamp(min=1))
    return min(len(m.batch_moments) for m in norms)
