"""Uniformity losses on a batch of [VNode]/[CLS] embeddings, for training (U-MAE term).

Uniformity (seed paper, Chen et al. 2023, "On Separate Normalization in Self-supervised
Transformers", https://arxiv.org/abs/2309.12931, Eq. 4, after Wang & Isola 2020,
https://arxiv.org/abs/2005.10242), on L2-normalized rows h_hat = h / ||h||:

    L_U = log( 1 / (B(B-1)) * sum_{i != j} exp(-t * ||h_hat_i - h_hat_j||^2) ),   t = 2

U-MAE term (seed paper Eq. 8): L = L_MAE + lambda * L_U, negatives = the other rows of the
batch. Graph training (``uniformity_weight``) and MAE (``unif_weight``) both use it;
``graphnorm.analysis.metrics.uniformity`` is the streaming, non-differentiable measurement.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def uniformity_loss(z: torch.Tensor, t: float = 2.0) -> torch.Tensor:
    """Differentiable L_U of a batch `z` [B, D] (Eq. 4), for lambda * L_unif in Eq. 8.

    The negatives of row i are the other B-1 rows of the batch. Returns a scalar tensor in
    the dtype of `z`; its value equals `analysis.metrics.uniformity(z, t, max_samples=None)`.
    """
    if z.dim() != 2 or z.shape[0] < 2:
        raise ValueError(f"uniformity_loss needs a [B>=2, D] batch, got shape {tuple(z.shape)}")
    h = F.normalize(z, dim=1)
    sq_norm = (h * h).sum(1)  # 1, or 0 for an all-zero row (as in `uniformity`)
    # ||a - b||^2 = |a|^2 + |b|^2 - 2 a.b avoids pdist's NaN gradient at distance 0
    sq = (sq_norm[:, None] + sq_norm[None, :] - 2.0 * h @ h.T).clamp_min(0.0)
    # ordered pairs i != j: same mean as n < m (symmetric), without a B^2/2 index tensor
    b = z.shape[0]
    eye = torch.eye(b, dtype=torch.bool, device=z.device)
    logits = (-t * sq).masked_fill(eye, -math.inf)
    return torch.logsumexp(logits.flatten(), dim=0) - math.log(b * (b - 1))


def spectral_uniformity_loss(z: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    """U-MAE's regularizer (spectral contrastive form): mean_{i != j} (cos(z_i, z_j) / tau)^2.

    0 for mutually orthogonal rows, 1/tau^2 for identical ones. Provided because the U-MAE
    code uses this form; `uniformity_loss` is the Wang & Isola form of Eq. 4.
    """
    if z.dim() != 2 or z.shape[0] < 2:
        raise ValueError(f"spectral_uniformity_loss needs a [B>=2, D] batch, got {tuple(z.shape)}")
    h = F.normalize(z, dim=1)
    sim = (h @ h.T / tau).pow(2)
    b = z.shape[0]
    off_diag = sim.sum() - sim.diagonal().sum()
    return off_diag / (b * (b - 1))
