"""Vision Transformer encoder whose norms come from the token-norm core.

ViT (Dosovitskiy et al. 2020, "An Image is Worth 16x16 Words", https://arxiv.org/abs/2010.11929):
an image ``x in R^{C x H x W}`` is cut into ``P = (H/p)(W/p)`` non-overlapping ``p x p``
patches, each flattened to ``p*p*C`` values (channel-last inside a patch) and embedded,

    z_0 = [ cls ; E(x_1) + e_1 ; ... ; E(x_P) + e_P ]        ([CLS] at position 0)
    z'_l = z_{l-1} + MHSA(Norm_{l,1}(z_{l-1}))                 (pre-norm block)
    z_l  = z'_l + MLP(Norm_{l,2}(z'_l))
    h    = Norm_final(z_L),   h_CLS = h[:, 0]

E is the linear patch projection, optionally wrapped by Dual PatchNorm
(Kumar et al. 2023, https://arxiv.org/abs/2302.01327, Eq. 4: ``E(x) = LN(W LN(x) + b)``).
Every ``Norm`` is ``build_norm(spec, dim)``; with ``sep:A+B`` (Chen et al. 2023,
https://arxiv.org/abs/2309.12931, Eq. 5) the [CLS] token at position 0 gets norm A and the
patch tokens norm B. The [CLS] token's own position embedding is folded into ``cls_token``.

MHSA uses ``torch.nn.functional.scaled_dot_product_attention``:
``softmax(Q K^T / sqrt(d_head) + mask) V`` per head. Blocks, final norm and the rule that the
first norm (which sees the constant learned [CLS]) keeps LayerNorm for [CLS] are the shared
core (:class:`graphnorm.nn.TransformerEncoder`). Position embeddings are learned
(trunc-normal, std 0.02) or fixed 2-D sin-cos as in MAE (He et al. 2021,
https://arxiv.org/abs/2111.06377).
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor, nn

from graphnorm.nn import TransformerEncoder
from graphnorm.norms import DualPatchNorm, TokenNorm


def patchify(images: Tensor, patch_size: int) -> Tensor:
    """``[B, C, H, W] -> [B, P, p*p*C]``, patches in row-major order, pixels (row, col, chan)."""
    b, c, h, w = images.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f"image size {h}x{w} is not divisible by patch size {p}")
    x = images.reshape(b, c, h // p, p, w // p, p)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), p * p * c)


def unpatchify(patches: Tensor, patch_size: int, channels: int, height: int, width: int) -> Tensor:
    """Inverse of :func:`patchify`: ``[B, P, p*p*C] -> [B, C, H, W]``."""
    b, p = patches.shape[0], patch_size
    gh, gw = height // p, width // p
    x = patches.reshape(b, gh, gw, p, p, channels)
    return x.permute(0, 5, 1, 3, 2, 4).reshape(b, channels, height, width)


def sincos_pos_embed_2d(dim: int, grid_h: int, grid_w: int) -> Tensor:
    """Fixed 2-D sin-cos position embedding ``[grid_h * grid_w, dim]`` (MAE's recipe).

    Half the channels encode the row, half the column; within each half
    ``[sin(pos * w_k), cos(pos * w_k)]`` with ``w_k = 10000^(-k / (dim/4))``.
    """
    if dim % 4:
        raise ValueError(f"sin-cos position embedding needs dim divisible by 4, got {dim}")
    omega = 1.0 / 10000 ** (torch.arange(dim // 4, dtype=torch.float64) / (dim / 4))
    rows, cols = torch.meshgrid(
        torch.arange(grid_h, dtype=torch.float64), torch.arange(grid_w, dtype=torch.float64), indexing="ij"
    )

    def encode(pos: Tensor) -> Tensor:
        angles = pos.reshape(-1, 1) * omega[None, :]
        return torch.cat([angles.sin(), angles.cos()], dim=1)

    return torch.cat([encode(rows), encode(cols)], dim=1).float()


def init_weights(module: nn.Module) -> None:
    """MAE-style init: Xavier-uniform linears with zero bias; norms reset themselves."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (TokenNorm, nn.LayerNorm)):
            m.reset_parameters()  # incl. BN running statistics


class VisionTransformer(nn.Module):
    """ViT encoder: ``images [B, C, H, W] -> tokens [B, 1 + P, dim]`` ([CLS] first).

    Args:
        norm: token-norm spec for every block norm and the final norm (any ``build_norm``
            spec, e.g. ``"ln"`` or ``"sep:bn+ln"``).
        pre_patch_norm / post_patch_norm: the two LayerNorms of Dual PatchNorm around the
            patch projection; both False gives the plain linear ViT embedding.
        pos_embed: ``"learned"`` or ``"sincos"`` (fixed buffer).

    ``embed_patches`` and ``encode`` are split so MAE can drop masked patches in between.
    """

    def __init__(
        self,
        image_size: int | tuple[int, int] = 8,
        patch_size: int = 2,
        in_chans: int = 1,
        dim: int = 64,
        depth: int = 4,
        heads: int = 4,
        mlp_ratio: float = 4.0,
        norm: str = "ln",
        pre_patch_norm: bool = False,
        post_patch_norm: bool = False,
        pos_embed: str = "learned",
    ):
        super().__init__()
        h, w = (image_size, image_size) if isinstance(image_size, int) else image_size
        if h % patch_size or w % patch_size:
            raise ValueError(f"image size {h}x{w} is not divisible by patch size {patch_size}")
        if pos_embed not in ("learned", "sincos"):
            raise ValueError(f"pos_embed must be 'learned' or 'sincos', got {pos_embed!r}")
        self.image_size, self.patch_size, self.in_chans = (h, w), patch_size, in_chans
        self.grid = (h // patch_size, w // patch_size)
        self.num_patches = self.grid[0] * self.grid[1]
        self.patch_dim = patch_size * patch_size * in_chans
        self.dim, self.norm_spec, self.pos_embed_kind = dim, norm, pos_embed

        self.patch_embed = DualPatchNorm(self.patch_dim, dim, pre_patch_norm, post_patch_norm)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        if pos_embed == "learned":
            self.pos_embed = nn.Parameter(torch.zeros(1, self.num_patches, dim))
        else:
            self.register_buffer("pos_embed", sincos_pos_embed_2d(dim, *self.grid)[None])
        self.transformer = TransformerEncoder(dim, depth, heads, int(dim * mlp_ratio), norm)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init_weights(self)
        self.patch_embed.reset_parameters()
        # MAE: initialize the patch projection like a Linear on the flattened patch
        nn.init.xavier_uniform_(self.patch_embed.proj.weight)
        nn.init.zeros_(self.patch_embed.proj.bias)
        nn.init.normal_(self.cls_token, std=0.02)
        if isinstance(self.pos_embed, nn.Parameter):
            nn.init.trunc_normal_(self.pos_embed, std=0.02)

    def embed_patches(self, images: Tensor) -> Tensor:
        """``[B, C, H, W] -> [B, P, dim]``: patch embedding plus position embedding."""
        if tuple(images.shape[1:]) != (self.in_chans, *self.image_size):
            raise ValueError(
                f"expected images [B, {self.in_chans}, {self.image_size[0]}, {self.image_size[1]}], "
                f"got {tuple(images.shape)}"
            )
        return self.patch_embed(patchify(images, self.patch_size)) + self.pos_embed

    def encode(self, tokens: Tensor, padding_mask: Optional[Tensor] = None) -> Tensor:
        """Prepend [CLS] to patch tokens ``[B, N, dim]`` and run blocks + final norm.

        ``padding_mask [B, N]`` (True = padding) refers to the patch tokens; [CLS] is never
        padding. Returns ``[B, 1 + N, dim]``.
        """
        return self.transformer(tokens, padding_mask, special=self.cls_token)

    def forward(self, images: Tensor) -> Tensor:
        return self.encode(self.embed_patches(images))

    @torch.no_grad()
    def cls_embedding(self, images: Tensor, batch_size: int = 512) -> Tensor:
        """[CLS] features ``[B, dim]`` after the final norm, no grad, in the current mode.

        For probing call ``eval()`` first (or use ``probe.extract_cls``): in train mode a
        BN on [CLS] would use the statistics of each chunk.
        """
        return torch.cat(
            [self(images[i:i + batch_size])[:, 0] for i in range(0, images.shape[0], batch_size)]
        )

    def extra_repr(self) -> str:
        return (
            f"image_size={self.image_size}, patch_size={self.patch_size}, "
            f"num_patches={self.num_patches}, norm={self.norm_spec!r}, pos_embed={self.pos_embed_kind!r}"
        )
