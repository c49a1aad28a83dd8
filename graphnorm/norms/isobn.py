"""Isotropic batch normalization (IsoBN).

Zhou et al. 2021, "IsoBN: Fine-Tuning BERT with Isotropic Batch Normalization",
https://arxiv.org/abs/2005.02178, Algorithm 1 with Eq. 4, 6-8. In training, with the
real tokens h of the batch (m rows):

    sigma_B = std(h),  Sigma_B = (h - mu)^T (h - mu) / m
    sigma  <- sigma + alpha (sigma_B - sigma),  Sigma <- Sigma + alpha (Sigma_B - Sigma)

then (always, from the moving statistics)

    rho = Sigma / (sigma sigma^T),  gamma_i = sum_j rho_ij^2                 (Eq. 4)
    theta_i = (sigma_i gamma_i + eps)^(-beta)                                (Eq. 6)
    theta_bar = theta * sqrt(sum sigma^2 / sum sigma^2 theta^2)              (Eq. 7)
    h_hat = theta_bar ⊙ h                                                    (Eq. 8)

Eq. 7 is printed without the square root, but its stated purpose ("keep the sum of variances
in transformed embeddings same as the original one") requires it, since the variance of
theta_bar_i h_i is theta_bar_i^2 sigma_i^2. As in the paper the mean is not subtracted.
Defaults follow the paper: alpha = 0.95, eps = 0.1, beta in {0.25, 0.5, 1}.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from .base import TokenNorm, masked_moments, real_token_weights


class IsoBN(TokenNorm):
    spec = "isobn"

    def __init__(self, dim: int, beta: float = 0.5, momentum: float = 0.95, eps: float = 0.1):
        super().__init__(dim)
        self.beta, self.momentum, self.eps = beta, momentum, eps
        self.register_buffer("moving_std", torch.ones(dim))
        self.register_buffer("moving_cov", torch.eye(dim))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def reset_parameters(self) -> None:
        self.moving_std.fill_(1.0)
        self.moving_cov.copy_(torch.eye(self.dim))
        self.num_batches_tracked.zero_()

    @torch.no_grad()
    def _update(self, x: Tensor, w: Tensor, count: Tensor) -> None:
        mean, var = masked_moments(x, w, count)
        centered = ((x - mean) * w).reshape(-1, self.dim)
        cov = centered.T @ centered / count
        # the first batch replaces the arbitrary initial caches instead of averaging with them
        rate = 1.0 if int(self.num_batches_tracked) == 0 else self.momentum
        self.moving_std.lerp_(var.sqrt(), rate)
        self.moving_cov.lerp_(cov, rate)
        self.num_batches_tracked += 1

    def scale(self) -> Tensor:
        """theta_bar of Eq. 7, from the moving statistics."""
        std = self.moving_std.clamp_min(1e-12)
        rho = self.moving_cov / (std[:, None] * std[None, :])
        gamma = (rho**2).sum(dim=1)
        theta = (std * gamma + self.eps) ** (-self.beta)
        total = (std**2).sum()
        return theta * torch.sqrt(total / ((std**2) * theta**2).sum().clamp_min(1e-12))

    def forward(self, x: Tensor, padding_mask: Optional[Tensor] = None) -> Tensor:
        w, count = real_token_weights(x, padding_mask)
        if self.training and count.item() > 1:
            self._update(x.detach(), w, count)
        return x * self.scale()

    def extra_repr(self) -> str:
        return f"{self.dim}, beta={self.beta}, momentum={self.momentum}, eps={self.eps}"


class VectorIsoBN(torch.nn.Module):
    """IsoBN on a batch of vectors ``[B, D]`` (e.g. [CLS] embeddings before a classifier)."""

    def __init__(self, dim: int, beta: float = 0.5):
        super().__init__()
        self.iso = IsoBN(dim, beta=beta)

    def reset_parameters(self) -> None:
        self.iso.reset_parameters()

    def forward(self, h: Tensor) -> Tensor:
        return self.iso(h[:, None], None)[:, 0]
