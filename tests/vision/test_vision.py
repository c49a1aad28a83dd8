"""Tests of the vision adapter: ViT shapes, every norm spec, MAE masking/loss, DPN, [CLS]."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

from graphnorm.norms import NORM_SPECS, BatchNorm, LayerNorm
from graphnorm.vision import (
    MaskedAutoencoder, VisionTransformer, linear_probe, masked_mse, patchify, random_masking,
    recalibrate_batch_stats, unpatchify,
)

B, DIM = 8, 32


def tiny_vit(norm: str = "ln", **kw) -> VisionTransformer:
    args = dict(image_size=8, patch_size=2, in_chans=1, dim=DIM, depth=2, heads=4, norm=norm)
    args.update(kw)
    return VisionTransformer(**args)


def images(b: int = B, seed: int = 0) -> torch.Tensor:
    return torch.randn(b, 1, 8, 8, generator=torch.Generator().manual_seed(seed))


def test_patchify_order_and_inverse():
    x = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8)
    p = patchify(x, 4)
    assert p.shape == (2, 4, 4 * 4 * 3)
    # patch 1 is the top-right 4x4 block; inside a patch: (row, col, channel)
    assert torch.equal(p[0, 1].reshape(4, 4, 3), x[0, :, :4, 4:].permute(1, 2, 0))
    assert torch.equal(unpatchify(p, 4, 3, 8, 8), x)


def test_output_shapes():
    vit = tiny_vit(pos_embed="learned")
    out = vit(images())
    assert out.shape == (B, 1 + 16, DIM)
    assert vit.cls_embedding(images()).shape == (B, DIM)
    mae = MaskedAutoencoder(tiny_vit(pos_embed="sincos"), decoder_dim=16, decoder_depth=1)
    res = mae(images())
    assert res["pred"].shape == res["target"].shape == (B, 16, 4)
    assert res["mask"].shape == (B, 16) and res["cls"].shape == (B, DIM)
    assert res["loss"].dim() == 0 and torch.isfinite(res["loss"])
    with pytest.raises(ValueError):
        vit(torch.randn(B, 1, 6, 8))


@pytest.mark.parametrize("spec", NORM_SPECS)
def test_every_spec_forward_backward(spec):
    torch.manual_seed(0)
    vit = tiny_vit(spec, pre_patch_norm=True, post_patch_norm=True)
    out = vit(images())
    # a random projection: LN outputs have a constant sum of squares, so x.pow(2) would give 0 grads
    (out * torch.randn_like(out)).sum().backward()
    assert torch.isfinite(out).all()
    for name, p in vit.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    assert vit.cls_token.grad.abs().sum() > 0
    mae = MaskedAutoencoder(tiny_vit(spec), decoder_dim=16, decoder_depth=1, unif_weight=0.1)
    res = mae(images())
    res["loss"].backward()
    assert torch.isfinite(res["loss"])
    vit.eval()
    assert torch.isfinite(vit(images(2))).all()  # eval mode (running statistics) works too


def test_random_masking_exact_ratio():
    ids_keep, mask = random_masking(64, 16, 0.75)
    assert ids_keep.shape == (64, 4)
    assert (mask.sum(1) == 12).all()
    assert (~mask).gather(1, ids_keep).all()  # kept ids are exactly the unmasked ones
    assert (ids_keep.diff(dim=1) > 0).all()  # sorted, distinct
    assert len({tuple(r.tolist()) for r in ids_keep}) > 1  # a fresh draw per image
    _, mask4 = random_masking(5, 4, 0.75)
    assert (mask4.sum(1) == 3).all()
    res = MaskedAutoencoder(tiny_vit(), decoder_dim=16, decoder_depth=1)(images())
    assert res["mask"].float().mean().item() == 0.75
    with pytest.raises(ValueError):
        random_masking(2, 4, 1.0)


def test_masked_mse_only_counts_masked_patches():
    g = torch.Generator().manual_seed(0)
    pred, target = torch.randn(4, 16, 4, generator=g), torch.randn(4, 16, 4, generator=g)
    _, mask = random_masking(4, 16, 0.75, noise=torch.rand(4, 16, generator=g))
    base = masked_mse(pred, target, mask)
    expected = ((pred - target) ** 2).mean(-1)[mask].mean()
    assert torch.allclose(base, expected)
    visible_changed = torch.where(mask[..., None], target, target + 10.0)
    assert torch.equal(masked_mse(pred, visible_changed, mask), base)
    masked_changed = torch.where(mask[..., None], target + 1.0, target)
    assert not torch.allclose(masked_mse(pred, masked_changed, mask), base)


def test_mae_loss_and_encoder_ignore_what_they_should():
    torch.manual_seed(0)
    mae = MaskedAutoencoder(tiny_vit("sep:bn+ln"), decoder_dim=16, decoder_depth=1)
    x, noise = images(), torch.rand(B, 16, generator=torch.Generator().manual_seed(1))
    res = mae(x, noise=noise)
    mask = res["mask"]
    # the loss has no gradient on predictions of visible patches
    pred_grad = torch.autograd.grad(res["mae_loss"], res["pred"])[0]
    assert (pred_grad[~mask] == 0).all() and (pred_grad[mask] != 0).any()
    # masked pixels never reach the encoder (train mode, BN statistics included) ...
    pix_mask = unpatchify(mask[..., None].expand(-1, -1, 4).float(), 2, 1, 8, 8).bool()
    # (random, not constant: normalized-pixel targets ignore a per-patch shift)
    junk = 5.0 * torch.randn(x.shape, generator=torch.Generator().manual_seed(2))
    res_m = mae(torch.where(pix_mask, x + junk, x), noise=noise)
    assert torch.allclose(res_m["cls"], res["cls"], atol=1e-6)
    assert not torch.allclose(res_m["mae_loss"], res["mae_loss"])  # ... but are its targets
    res_v = mae(torch.where(pix_mask, x, x + junk), noise=noise)
    assert not torch.allclose(res_v["cls"], res["cls"], atol=1e-3)


def test_uniformity_term():
    torch.manual_seed(0)
    mae = MaskedAutoencoder(tiny_vit("sep:bn+ln"), decoder_dim=16, decoder_depth=1, unif_weight=0.5)
    res = mae(images())
    z = torch.nn.functional.normalize(res["cls"].detach(), dim=1)
    d2 = torch.cdist(z, z) ** 2
    off = ~torch.eye(B, dtype=torch.bool)
    expected = math.log(torch.exp(-2 * d2[off]).mean().item())
    assert abs(res["unif_loss"].item() - expected) < 1e-4
    assert torch.allclose(res["loss"], res["mae_loss"] + 0.5 * res["unif_loss"])
    grads = torch.autograd.grad(res["unif_loss"], mae.encoder.cls_token)[0]
    assert grads.abs().sum() > 0


@pytest.mark.parametrize("pre,post", [(False, False), (True, False), (False, True), (True, True)])
def test_dual_patchnorm_structure(pre, post):
    vit = tiny_vit(pre_patch_norm=pre, post_patch_norm=post)
    pe = vit.patch_embed
    assert isinstance(pe.pre, nn.LayerNorm if pre else nn.Identity)
    assert isinstance(pe.post, nn.LayerNorm if post else nn.Identity)
    n_ln = sum(isinstance(m, nn.LayerNorm) for m in pe.modules())
    assert n_ln == pre + post
    n_params = sum(p.numel() for p in pe.parameters())
    assert n_params == 4 * DIM + DIM + 2 * 4 * pre + 2 * DIM * post
    tok = pe(patchify(images(), 2))
    if post:  # LN after the projection: every patch token has mean 0 and std 1 at init
        assert torch.allclose(tok.mean(-1), torch.zeros(B, 16), atol=1e-5)
    else:
        assert tok.mean(-1).abs().max() > 1e-2


def test_cls_is_position_zero_and_sepnorm_special_sees_it():
    torch.manual_seed(0)
    vit = tiny_vit("sep:bn+ln")
    seen = {}
    vit.transformer.final_norm.register_forward_hook(lambda m, inp, out: seen.update(x=inp[0]))
    vit.transformer.final_norm.special.register_forward_hook(lambda m, inp, out: seen.update(special=inp[0]))
    vit.train()
    out = vit(images(32))
    assert torch.equal(seen["special"], seen["x"][:, :1])  # the special norm got position 0
    # BN on [CLS]: zero batch mean and unit batch variance per channel (gamma=1, beta=0 at init)
    cls = out[:, 0]
    assert cls.mean(0).abs().max() < 1e-5
    assert torch.allclose(cls.var(0, unbiased=False), torch.ones(DIM), atol=1e-3)
    # LN on the patch tokens: zero mean per token, not per channel
    assert out[:, 1:].mean(-1).abs().max() < 1e-5
    assert out[:, 1:].mean(0).abs().max() > 1e-2
    # shared LN leaves a clear per-channel batch mean on [CLS]: the check above can fail
    torch.manual_seed(0)
    shared = tiny_vit("ln")(images(32))[:, 0]
    assert shared.mean(0).abs().max() > 0.1


@pytest.mark.parametrize("spec", ["ln", "sep:bn+bn"])
def test_encode_padding_is_invisible(spec):
    torch.manual_seed(0)
    vit = tiny_vit(spec)
    tokens = vit.embed_patches(images())
    pad = torch.zeros(B, 16, dtype=torch.bool)
    pad[:, 10:] = True
    out = vit.encode(tokens, pad)
    junk = tokens.clone()
    junk[:, 10:] = 100.0 * torch.randn(B, 6, DIM)
    out_junk = vit.encode(junk, pad)  # train mode: BN statistics must skip padding too
    assert torch.allclose(out[:, :11], out_junk[:, :11], atol=1e-5)


def test_recalibrate_batch_stats():
    torch.manual_seed(0)
    vit = tiny_vit("sep:bn+ln")
    x = images(64)
    assert recalibrate_batch_stats(tiny_vit("ln"), x) == 0
    vit.eval()
    before = vit(x)[:, 0].mean(0).abs().max()  # fresh running stats (0, 1): a visible offset
    # the [CLS] BN of 2 blocks x 2 norms + final norm, less the first norm: it sees the
    # constant learned [CLS] and keeps LayerNorm there (norms.constant_special_spec)
    assert isinstance(vit.transformer.blocks[0].attn_norm.special, LayerNorm)
    assert isinstance(vit.transformer.blocks[0].ffn_norm.special, BatchNorm)
    assert recalibrate_batch_stats(vit, x) == 4
    cls = vit(x)[:, 0]
    # running stats = statistics of these very images (up to the unbiased-variance factor
    # propagating through the layers), so the eval-mode [CLS] is nearly centred
    assert cls.mean(0).abs().max() < 0.05 < before
    assert vit.transformer.final_norm.special.momentum == 0.1 and not vit.training


def test_reset_parameters_restores_init():
    torch.manual_seed(0)
    vit = tiny_vit("sep:bn+ln", pos_embed="learned")
    vit(images())  # updates running statistics
    with torch.no_grad():
        vit.pos_embed.fill_(3.0)
    assert vit.transformer.final_norm.special.running_mean.abs().sum() > 0
    vit.reset_parameters()
    assert vit.transformer.final_norm.special.running_mean.abs().sum() == 0
    assert vit.pos_embed.abs().max() < 0.1  # trunc-normal std 0.02, cut at +-2
    assert isinstance(vit.transformer.final_norm.tokens, LayerNorm) and isinstance(vit.transformer.final_norm.special, BatchNorm)


def test_linear_probe_separable():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    x = rng.normal(size=(300, 5)) + 4 * np.eye(3, 5)[y]
    assert linear_probe(x[:200], y[:200], x[200:], y[200:]) > 0.9


@pytest.mark.slow  # starts a Python process
def test_no_graph_or_text_imports():
    code = ("import sys, graphnorm.vision; "
            "print([m for m in sys.modules if m.startswith(('graphnorm.graph', 'graphnorm.text'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
