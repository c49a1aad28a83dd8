"""Per-token and per-batch normalizations with the ``(x, padding_mask)`` interface.

- LayerNorm (Ba et al. 2016, https://arxiv.org/abs/1607.06450):
  ``y = (x - E_d[x]) / sqrt(Var_d[x] + eps) * gamma + beta`` over the channels of one token.
- RMSNorm (Zhang & Sennrich 2019, https://arxiv.org/abs/1910.07467):
  ``y = x / sqrt(mean_d(x^2) + eps) * gamma``.
- BatchNorm (Ioffe & Szegedy 2015, https://arxiv.org/abs/1502.03167) over all real tokens
  of the batch: ``y = (x - mu_B) / sqrt(var_B + eps) * gamma + beta`` with mu_B, var_B per
  channel over non-padded tokens; running statistics for evaluation.
"""
from __future__ import annotations

from collections import deque
from typing import Optional

import torch
from torch import Tensor, nn

from .base import TokenNorm, masked_moments, real_token_weights


class LayerNorm(TokenNorm):
    spec = "ln"

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__(dim)
        self.norm = nn.LayerNorm(dim, eps=eps)

    def reset_parameters(self) -> None:
        self.norm.reset_parameters()

    def forward(self, x: Tensor, padding_mask: Optional[Tensor] = None) -> Tensor:
        return self.norm(x)  # per token: padding cannot leak


class RMSNorm(TokenNorm):
    spec = "rms"

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__(dim)
        self.norm = nn.RMSNorm(dim, eps=eps)

    def reset_parameters(self) -> None:
        self.norm.reset_parameters()

    def forward(self, x: Tensor, padding_mask: Optional[Tensor] = None) -> Tensor:
        return self.norm(x)


class NoNorm(TokenNorm):
    spec = "none"

    def forward(self, x: Tensor, padding_mask: Optional[Tensor] = None) -> Tensor:
        return x


class BatchNorm(TokenNorm):
    """BatchNorm over the real tokens of a batch.

    Fewer than two real tokens in training mode (e.g. the [VNode] of a single graph) give no
    variance estimate; instead of crashing like ``nn.BatchNorm1d`` we normalize with the
    running statistics and leave them unchanged, as in evaluation mode.
    """

    spec = "bn"

    def __init__(self, dim: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__(dim)
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.empty(dim))
        self.bias = nn.Parameter(torch.empty(dim))
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
        # a deque of (count, mean, biased var) of the last training batches, when kept
        # (graphnorm.norms.calibrate.keep_batch_moments): running statistics without extra passes
        self.batch_moments: Optional[deque] = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.ones_(self.weight)
        nn.init.zeros_(self.bias)
        self.running_mean.zero_()
        self.running_var.fill_(1.0)
        self.num_batches_tracked.zero_()

    def forward(self, x: Tensor, padding_mask: Optional[Tensor] = None) -> Tensor:
        w, count = real_token_weights(x, padding_mask)
        # count is a 0-d tensor; comparing on CPU syncs once per call, cheap next to the matmuls
        if self.training and count.item() > 1:
            mean, var = masked_moments(x, w, count)
            with torch.no_grad():
                unbiased = var * (count / (count - 1))
                self.running_mean.lerp_(mean.detach(), self.momentum)
                self.running_var.lerp_(unbiased.detach(), self.momentum)
                self.num_batches_tracked += 1
                if self.batch_moments is not None:
                    self.batch_moments.append((count.detach(), mean.detach(), var.detach()))
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias
