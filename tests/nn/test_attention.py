"""CPU attention with a bias gradient (graphnorm.nn.attention)."""
import pytest
import torch

from graphnorm.nn.attention import BiasedAttentionCPU, biased_attention
from graphnorm.nn.dropout import keep_mask


@pytest.mark.parametrize("p", [0.0, 0.3])
def test_cpu_attention_gradients(p):
    B, L, H, d = 3, 5, 2, 4
    gen = torch.Generator().manual_seed(0)
    qkv = torch.randn(B, L, 3 * H * d, generator=gen, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(B, H, L, L, generator=gen, dtype=torch.float64)
    bias[..., -1] = float("-inf")  # a padded key
    bias.requires_grad_(True)

    def reference(qkv, bias):
        q, k, v = qkv.view(B, L, 3, H, d).permute(2, 0, 3, 1, 4).unbind(0)
        probs = (q @ k.transpose(-1, -2) / d**0.5 + bias).softmax(-1)
        if p > 0:
            probs = probs * keep_mask(probs.shape, p, probs.dtype) / (1 - p)
        return (probs @ v).transpose(1, 2).reshape(B, L, H * d)

    g = torch.randn(B, L, H * d, generator=gen, dtype=torch.float64)
    results = []
    for fn in (lambda a, b: BiasedAttentionCPU.apply(a, b, H, p), reference):
        torch.manual_seed(5)  # the same dropout mask in both
        out = fn(qkv, bias)
        results.append((out, *torch.autograd.grad((out * g).sum(), (qkv, bias))))
    for a, b in zip(*results):
        assert torch.allclose(a, b, atol=1e-10)
    assert results[0][2][..., -1].abs().max() == 0  # no gradient into masked keys


def test_unknown_implementation_is_named():
    with pytest.raises(ValueError, match="flash"):
        biased_attention(torch.zeros(1, 2, 6), torch.zeros(1, 1, 2, 2), heads=1, impl="flash")


@pytest.mark.parametrize("impl", ["sdpa", "math"])
def test_implementations_agree(impl):
    gen = torch.Generator().manual_seed(1)
    qkv, bias = torch.randn(2, 7, 24, generator=gen), torch.randn(2, 4, 7, 7, generator=gen)
    ref = BiasedAttentionCPU.apply(qkv, bias, 4, 0.0)
    assert torch.allclose(biased_attention(qkv, bias, 4, 0.0, impl), ref, atol=1e-5)
