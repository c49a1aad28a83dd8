"""The shared block and attention: bias vs key mask, padding, post-norm, local branch, keys."""
import pytest
import torch
from torch import nn

from graphnorm.nn import MultiheadAttention, TransformerBlock

B, L, D, H = 3, 6, 8, 2


def _x_pad(seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, D, generator=g, dtype=torch.float64)
    pad = torch.arange(L)[None] >= torch.tensor([L, 4, 2])[:, None]
    return x, pad


@pytest.mark.parametrize("impl", ["auto", "sdpa", "math"])
def test_key_mask_equals_bias_of_minus_inf(impl):
    """A key padding mask and an additive -inf bias on the same keys are the same attention
    for the real tokens (what padded queries get is unspecified: the CPU path may leave them
    out); both given, the mask is folded into the bias."""
    torch.manual_seed(0)
    attn = MultiheadAttention(D, H, impl=impl).double().eval()
    x, pad = _x_pad()
    bias = torch.zeros(B, H, L, L, dtype=torch.float64).masked_fill(pad[:, None, None], float("-inf"))
    ref = attn(x, key_padding_mask=pad)[~pad]
    torch.testing.assert_close(attn(x, bias)[~pad], ref, atol=1e-12, rtol=0)
    torch.testing.assert_close(attn(x, torch.zeros_like(bias), pad)[~pad], ref, atol=1e-12, rtol=0)


@pytest.mark.parametrize("pre_norm", [True, False])
def test_real_tokens_ignore_padding(pre_norm):
    """Batch-statistics norms and attention skip padded tokens in both block layouts."""
    torch.manual_seed(0)
    block = TransformerBlock(D, H, 16, "sep:bn+bn", pre_norm=pre_norm).double().train()
    x, pad = _x_pad()
    noisy = x.masked_fill(pad[..., None], 0.0) + 100.0 * pad[..., None]
    a = block(x, pad, key_padding_mask=pad)
    b = block(noisy, pad, key_padding_mask=pad)
    torch.testing.assert_close(a[~pad], b[~pad], atol=1e-10, rtol=0)


def test_post_norm_normalizes_the_output():
    block = TransformerBlock(D, H, 16, "ln", pre_norm=False).double().eval()
    x, _ = _x_pad()
    out = block(x)
    torch.testing.assert_close(out.mean(-1), torch.zeros(B, L, dtype=torch.float64), atol=1e-10, rtol=0)


class _Shift(nn.Module):
    """A local branch that adds ``local_input`` to every token."""

    def reset_parameters(self):
        pass

    def forward(self, x, local_input):
        return torch.full_like(x, local_input)


def test_local_branch_is_summed_before_the_ffn():
    torch.manual_seed(0)
    block = TransformerBlock(D, H, 16, "ln", local=_Shift()).double().eval()
    plain = TransformerBlock(D, H, 16, "ln").double().eval()
    plain.load_state_dict(block.state_dict())
    x, _ = _x_pad()
    # with the branch: plain block applied as if attention's output were shifted by 1.0
    h = x + block.attn(block.attn_norm(x)) + 1.0
    expected = h + block.ffn(block.ffn_norm(h))
    torch.testing.assert_close(block(x, local_input=1.0), expected, atol=1e-12, rtol=0)
    assert not torch.allclose(plain(x), expected)


def test_init_std_and_default_init():
    torch.manual_seed(0)
    block = TransformerBlock(64, 4, 64, init_std=0.01)
    assert abs(block.attn.qkv.weight.std().item() - 0.01) < 1e-3
    assert block.ffn.fc2.bias.abs().max() == 0
    default = TransformerBlock(64, 4, 64)  # torch's Linear init: kaiming-uniform, bias != 0
    assert default.ffn.fc2.bias.abs().max() > 0

