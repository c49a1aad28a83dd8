"""CPU attention with a bias gradient (graphnorm.nn.attention)."""
import pytest
import torch

from graphnorm.nn.attention import BiasedAttentionCPU, biased_attention, length_groups
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


def test_unequal_graphs_attend_in_groups_with_the_same_result():
    """One long graph among short ones: attention runs per length group, and the real
    tokens' outputs and all gradients equal one padded pass of the formula."""
    B, L, H, d = 6, 12, 2, 4
    lengths = torch.tensor([12, 3, 3, 4, 2, 3])
    gen = torch.Generator().manual_seed(2)
    qkv = torch.randn(B, L, 3 * H * d, generator=gen, dtype=torch.float64, requires_grad=True)
    real = torch.arange(L)[None] < lengths[:, None]  # [B, L]
    bias = torch.randn(B, H, L, L, generator=gen, dtype=torch.float64)
    bias = bias.masked_fill(~real[:, None, None, :], float("-inf")).requires_grad_(True)
    groups = length_groups(bias)
    assert groups is not None and [n for _, n in groups][-1] == 12
    assert sorted(torch.cat([i for i, _ in groups]).tolist()) == list(range(B))

    def formula(qkv, bias):
        q, k, v = qkv.view(B, L, 3, H, d).permute(2, 0, 3, 1, 4).unbind(0)
        probs = (q @ k.transpose(-1, -2) / d**0.5 + bias).softmax(-1)
        return (probs @ v).transpose(1, 2).reshape(B, L, H * d)

    g = torch.randn(B, L, H * d, generator=gen, dtype=torch.float64) * real[..., None]
    results = []
    for fn in (lambda a, b: BiasedAttentionCPU.apply(a, b, H, 0.0), formula):
        out = fn(qkv, bias)
        results.append((out[real], *torch.autograd.grad((out * g).sum(), (qkv, bias))))
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=0)


def test_similar_graphs_attend_in_one_pass():
    bias = torch.zeros(4, 1, 10, 10)
    bias[:, :, :, 9:] = float("-inf")  # all of length 9
    assert length_groups(bias) is None
