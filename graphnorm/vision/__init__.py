"""Vision adapter: ViT with token-norm specs, MAE / U-MAE pretraining, linear probe."""
from .mae import MaskedAutoencoder, masked_mse, patch_targets, random_masking, uniformity_loss
from .probe import extract_cls, linear_probe, recalibrate_batch_stats
from .vit import VisionTransformer, patchify, sincos_pos_embed_2d, unpatchify

__all__ = [
    "VisionTransformer", "patchify", "unpatchify", "sincos_pos_embed_2d",
    "MaskedAutoencoder", "random_masking", "patch_targets", "masked_mse", "uniformity_loss",
    "extract_cls", "linear_probe", "recalibrate_batch_stats",
]
