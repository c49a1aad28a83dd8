"""Dual PatchNorm: LayerNorm before and after the patch embedding.

Kumar et al. 2023, "Dual PatchNorm", https://arxiv.org/abs/2302.01327, Eq. 4:

    x = LN(PE(LN(x)))

where PE is the linear patch projection applied to flattened patches. Either norm can be
switched off to recover the plain ViT embedding (both off) or the ablations of Table 6.
"""
from __future__ import annotations

from torch import Tensor, nn


class DualPatchNorm(nn.Module):
    """Patch embedding ``[B, P, patch_dim] -> [B, P, dim]`` with optional pre/post LayerNorm."""

    def __init__(self, patch_dim: int, dim: int, pre_norm: bool = True, post_norm: bool = True):
        super().__init__()
        self.pre = nn.LayerNorm(patch_dim) if pre_norm else nn.Identity()
        self.proj = nn.Linear(patch_dim, dim)
        self.post = nn.LayerNorm(dim) if post_norm else nn.Identity()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for m in (self.pre, self.proj, self.post):
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()

    def forward(self, patches: Tensor) -> Tensor:
        return self.post(self.proj(self.pre(patches)))
