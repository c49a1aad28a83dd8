"""The transformer core on top of the norms: attention, block, encoder stack, losses.

Layer order: ``norms`` -> ``nn`` -> ``graph`` / ``text`` / ``vision``. This package imports
only ``graphnorm.norms`` (and torch/numpy).
"""
from .attention import ATTENTION_IMPLS, BiasedAttentionCPU, MultiheadAttention, biased_attention
from .block import FeedForward, TransformerBlock
from .dropout import dropout, keep_mask, residual_dropout
from .encoder import TransformerEncoder, first_norm_spec
from .losses import spectral_uniformity_loss, uniformity_loss

__all__ = [
    "ATTENTION_IMPLS", "BiasedAttentionCPU", "MultiheadAttention", "biased_attention",
    "FeedForward", "TransformerBlock", "TransformerEncoder", "first_norm_spec",
    "dropout", "keep_mask", "residual_dropout", "spectral_uniformity_loss", "uniformity_loss",
]
