import torch

from graphnorm.norms import DualPatchNorm


def test_dual_patchnorm_normalizes_before_and_after():
    dpn = DualPatchNorm(12, 8)
    x = torch.randn(2, 5, 12) * 10 + 3
    out = dpn(x)
    assert out.shape == (2, 5, 8)
    torch.testing.assert_close(out.mean(-1), torch.zeros(2, 5), atol=1e-5, rtol=0)
    # the pre-norm makes the embedding invariant to an affine rescaling of each patch
    torch.testing.assert_close(dpn(x * 7 + 2), out, atol=1e-4, rtol=1e-4)


def test_dual_patchnorm_can_be_switched_off():
    plain = DualPatchNorm(12, 8, pre_norm=False, post_norm=False)
    x = torch.randn(2, 5, 12)
    torch.testing.assert_close(plain(x), plain.proj(x))
