"""Masked autoencoder (MAE) pretraining with an optional [CLS] uniformity term (U-MAE).

MAE (He et al. 2021, https://arxiv.org/abs/2111.06377): per image, a random subset of
``K = floor(P * (1 - r))`` patches stays visible (r = 0.75); the encoder sees only those
plus [CLS]. A light decoder gets the encoded visible tokens, a shared learned mask token
at every masked position, its own position embedding, and predicts the pixels of every
patch. With ``m_{b,i} = 1`` for masked patches and per-patch targets ``t``:

    L_MAE = sum_{b,i} m_{b,i} * mean_j (pred_{b,i,j} - t_{b,i,j})^2 / sum_{b,i} m_{b,i}

``norm_pix_loss=True`` uses MAE's normalized-pixel target ``t = (x - mean(x)) / sqrt(var(x) + 1e-6)``
per patch; otherwise the raw (already dataset-standardized) pixels.

U-MAE term (seed paper, Chen et al. 2023, https://arxiv.org/abs/2309.12931, Sec. 3.2, Eq. 8):
``L = L_MAE + lambda * L_unif`` on the encoder's [CLS] output (after its final norm, i.e.
after SepNorm's special norm), negatives = the other images of the batch. We use the
Wang & Isola uniformity form (seed paper Eq. 4, on L2-normalized z):

    L_unif = log mean_{i != j} exp(-2 ||z_i - z_j||^2)

from ``graphnorm.nn.losses`` (shared with graph training). (Eq. 8 as printed reads
``E_i E_j[h_i^T h_j]``; the brief and the analysis module use the form above.)
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor, nn

from graphnorm.nn import TransformerBlock, uniformity_loss

from .vit import VisionTransformer, init_weights, patchify, sincos_pos_embed_2d


def random_masking(
    batch: int, num_patches: int, mask_ratio: float = 0.75, noise: Optional[Tensor] = None,
    device: Optional[torch.device] = None,
) -> tuple[Tensor, Tensor]:
    """Choose visible patches per image.

    Returns ``ids_keep [B, K]`` (sorted indices of visible patches) and ``mask [B, P]``
    (True = masked), with exactly ``P - K`` masked patches per image, ``K = floor(P (1 - r))``.
    ``noise [B, P]`` (uniform) fixes the draw: the K smallest values stay visible.
    """
    keep = int(num_patches * (1 - mask_ratio))
    if not 1 <= keep <= num_patches:
        raise ValueError(f"mask_ratio {mask_ratio} keeps {keep} of {num_patches} patches")
    if noise is None:
        noise = torch.rand(batch, num_patches, device=device)
    ids_keep = noise.argsort(dim=1)[:, :keep].sort(dim=1).values
    mask = torch.ones(batch, num_patches, dtype=torch.bool, device=noise.device)
    mask.scatter_(1, ids_keep, False)
    return ids_keep, mask


def patch_targets(patches: Tensor, norm_pix: bool) -> Tensor:
    """Reconstruction target per patch; MAE's per-patch normalized pixels if ``norm_pix``."""
    if not norm_pix:
        return patches
    mean = patches.mean(dim=-1, keepdim=True)
    var = patches.var(dim=-1, keepdim=True, unbiased=False)
    return (patches - mean) / (var + 1e-6).sqrt()


def masked_mse(pred: Tensor, target: Tensor, mask: Tensor) -> Tensor:
    """Mean over masked patches of the per-patch MSE; visible patches contribute nothing."""
    per_patch = ((pred - target) ** 2).mean(dim=-1)
    m = mask.to(per_patch.dtype)
    return (per_patch * m).sum() / m.sum()


class MaskedAutoencoder(nn.Module):
    """MAE around a :class:`VisionTransformer` encoder.

    The decoder (width ``decoder_dim``, ``decoder_depth`` blocks, LayerNorm, fixed sin-cos
    positions) is kept narrow so the encoder has to carry the content. ``forward`` returns a
    dict with ``loss`` (= mae_loss + unif_weight * unif_loss), ``mae_loss``, ``unif_loss``,
    ``pred [B, P, patch_dim]``, ``target``, ``mask [B, P]`` and ``cls [B, dim]``.
    """

    def __init__(
        self,
        encoder: VisionTransformer,
        decoder_dim: int = 32,
        decoder_depth: int = 2,
        decoder_heads: int = 4,
        mask_ratio: float = 0.75,
        norm_pix_loss: bool = True,
        unif_weight: float = 0.0,
    ):
        super().__init__()
        self.encoder = encoder
        self.mask_ratio, self.norm_pix_loss, self.unif_weight = mask_ratio, norm_pix_loss, unif_weight
        p = encoder.num_patches
        self.decoder_embed = nn.Linear(encoder.dim, decoder_dim)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, decoder_dim))
        # position 0 of the decoder is [CLS]: zero position embedding, as in MAE
        pos = torch.cat([torch.zeros(1, decoder_dim), sincos_pos_embed_2d(decoder_dim, *encoder.grid)])
        self.register_buffer("decoder_pos_embed", pos[None])
        self.decoder_blocks = nn.ModuleList(  # pre-norm, LayerNorm, no dropout
            TransformerBlock(decoder_dim, decoder_heads, 4 * decoder_dim, "ln")
            for _ in range(decoder_depth)
        )
        self.decoder_norm = nn.LayerNorm(decoder_dim)
        self.decoder_pred = nn.Linear(decoder_dim, encoder.patch_dim)
        self.num_patches = p
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.encoder.reset_parameters()
        for m in (self.decoder_embed, self.decoder_blocks, self.decoder_norm, self.decoder_pred):
            init_weights(m)
            if hasattr(m, "reset_parameters") and not isinstance(m, nn.Linear):
                m.reset_parameters()
        nn.init.normal_(self.mask_token, std=0.02)

    def forward(self, images: Tensor, noise: Optional[Tensor] = None) -> dict[str, Tensor]:
        enc = self.encoder
        b, p = images.shape[0], self.num_patches
        ids_keep, mask = random_masking(b, p, self.mask_ratio, noise, images.device)

        # encoder: only visible patches (+ [CLS]); masked pixels never reach it
        tokens = enc.embed_patches(images)
        visible = torch.gather(tokens, 1, ids_keep[..., None].expand(-1, -1, enc.dim))
        latent = enc.encode(visible)  # [B, 1 + K, dim]

        # decoder: scatter visible tokens back, mask tokens elsewhere
        y = self.decoder_embed(latent)
        full = self.mask_token.expand(b, p, -1).clone()
        full.scatter_(1, ids_keep[..., None].expand(-1, -1, y.shape[-1]), y[:, 1:])
        x = torch.cat([y[:, :1], full], dim=1) + self.decoder_pos_embed
        for block in self.decoder_blocks:
            x = block(x)
        pred = self.decoder_pred(self.decoder_norm(x))[:, 1:]

        target = patch_targets(patchify(images, enc.patch_size), self.norm_pix_loss)
        mae = masked_mse(pred, target, mask)
        cls = latent[:, 0]
        if b > 1:
            unif = uniformity_loss(cls)
            if self.unif_weight == 0:
                unif = unif.detach()  # logged only; keeps the pure-MAE graph unchanged
        else:
            unif = mae.new_zeros(())
        return {
            "loss": mae + self.unif_weight * unif, "mae_loss": mae, "unif_loss": unif,
            "pred": pred, "target": target, "mask": mask, "cls": cls,
        }
