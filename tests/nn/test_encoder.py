"""The encoder stack: special token at position 0, the constant-special-token rule, masks."""
import pytest
import torch

from graphnorm.nn import TransformerEncoder, first_norm_spec
from graphnorm.norms import BatchNorm, LayerNorm

B, N, D = 4, 5, 8


@pytest.mark.parametrize("pre_norm", [True, False])
def test_constant_special_rule_applied_once(pre_norm):
    """Only the norm that sees the constant special token swaps BN for LN on position 0."""
    enc = TransformerEncoder(D, 2, 2, 16, "sep:bn+bn", pre_norm=pre_norm)
    first = enc.blocks[0].attn_norm if pre_norm else enc.emb_norm
    others = [b.ffn_norm for b in enc.blocks] + [enc.blocks[1].attn_norm]
    others += [enc.final_norm] if pre_norm else [enc.blocks[0].attn_norm]
    assert first.spec == "sep:ln+bn" and isinstance(first.special, LayerNorm)
    assert all(n.spec == "sep:bn+bn" and isinstance(n.special, BatchNorm) for n in others)
    off = TransformerEncoder(D, 2, 2, 16, "sep:bn+bn", pre_norm=pre_norm, constant_special_ln=False)
    assert (off.blocks[0].attn_norm if pre_norm else off.emb_norm).spec == "sep:bn+bn"
    assert first_norm_spec("bn") == "bn" and first_norm_spec("sep:isobn+ln") == "sep:ln+ln"


def test_special_token_is_prepended_and_never_padding():
    torch.manual_seed(0)
    enc = TransformerEncoder(D, 2, 2, 16, "sep:bn+ln").double().train()
    x = torch.randn(B, N, D, dtype=torch.float64)
    special = torch.randn(1, 1, D, dtype=torch.float64)
    pad = torch.arange(N)[None] >= torch.tensor([N, 3, 1, 2])[:, None]
    ref = torch.get_rng_state()
    out = enc(x, pad, special=special)
    torch.set_rng_state(ref)
    full = torch.cat([special.expand(B, 1, D), x], 1)
    full_pad = torch.cat([torch.zeros(B, 1, dtype=torch.bool), pad], 1)
    assert out.shape == (B, N + 1, D)
    torch.testing.assert_close(enc(full, full_pad), out, atol=0, rtol=0)


def test_final_norm_spec_and_reset():
    enc = TransformerEncoder(D, 1, 2, 16, "bn", final_norm="ln")
    assert enc.final_norm.spec == "ln" and enc.blocks[0].ffn_norm.spec == "bn"
    enc.train()(torch.randn(B, N, D))
    assert int(enc.blocks[0].ffn_norm.num_batches_tracked) == 1
    enc.reset_parameters()
    assert int(enc.blocks[0].ffn_norm.num_batches_tracked) == 0
