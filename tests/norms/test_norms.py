"""Tests of the norm core: registry, padding invariance, SepNorm, BN edge cases."""
import pytest
import torch

from graphnorm.norms import NORM_SPECS, BatchNorm, IsoBN, SepNorm, build_norm

D = 8


def _batch(B=4, L=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, D, generator=g) * 3 + 1
    lengths = torch.tensor([L, L - 2, 3, 1][:B])
    pad = torch.arange(L)[None, :] >= lengths[:, None]
    return x, pad


@pytest.mark.parametrize("spec", NORM_SPECS)
def test_every_spec_builds_and_keeps_shape(spec):
    norm = build_norm(spec, D)
    x, pad = _batch()
    out = norm(x, pad)
    assert out.shape == x.shape
    assert torch.isfinite(out).all()
    out[~pad].sum().backward() if out.requires_grad else None


@pytest.mark.parametrize("spec", NORM_SPECS)
@pytest.mark.parametrize("training", [True, False])
def test_padding_values_do_not_leak(spec, training):
    torch.manual_seed(0)
    norm = build_norm(spec, D).train(training)
    x, pad = _batch()
    x2 = x.clone()
    x2[pad] = torch.randn(int(pad.sum()), D) * 100 + 50  # garbage in pads
    state = {k: v.clone() for k, v in norm.state_dict().items()}
    out1 = norm(x, pad)
    norm.load_state_dict(state)  # same running stats for the second call
    out2 = norm(x2, pad)
    torch.testing.assert_close(out1[~pad], out2[~pad])


def test_unknown_spec_lists_valid_ones():
    with pytest.raises(ValueError) as err:
        build_norm("groupnorm", D)
    msg = str(err.value)
    assert "groupnorm" in msg and "sep:bn+ln" in msg and "isobn" in msg
    with pytest.raises(ValueError):
        build_norm("sep:bn", D)


def test_sep_ln_ln_equals_two_independent_layernorms():
    norm = build_norm("sep:ln+ln", D)
    assert isinstance(norm, SepNorm)
    with torch.no_grad():  # make the two channels differ so a shared norm would fail
        norm.special.norm.weight.uniform_(0.5, 2)
        norm.special.norm.bias.uniform_(-1, 1)
        norm.tokens.norm.weight.uniform_(0.5, 2)
    x, pad = _batch()
    out = norm(x, pad)
    ln_special = torch.nn.functional.layer_norm(
        x[:, :1], (D,), norm.special.norm.weight, norm.special.norm.bias, 1e-5)
    ln_tokens = torch.nn.functional.layer_norm(
        x[:, 1:], (D,), norm.tokens.norm.weight, norm.tokens.norm.bias, 1e-5)
    torch.testing.assert_close(out[:, :1], ln_special)
    torch.testing.assert_close(out[:, 1:], ln_tokens)
    assert norm.special.norm.weight.data_ptr() != norm.tokens.norm.weight.data_ptr()


def test_sep_bn_ln_normalizes_special_token_over_the_batch():
    norm = build_norm("sep:bn+ln", D).train()
    x, pad = _batch()
    out = norm(x, pad)
    cls = out[:, 0]
    torch.testing.assert_close(cls.mean(0), torch.zeros(D), atol=1e-5, rtol=0)
    torch.testing.assert_close(cls.var(0, unbiased=False), torch.ones(D), atol=1e-3, rtol=0)
    # tokens: per-token LayerNorm statistics
    tok = out[:, 1:][~pad[:, 1:]]
    torch.testing.assert_close(tok.mean(-1), torch.zeros(len(tok)), atol=1e-5, rtol=0)


def test_batchnorm_matches_torch_on_real_tokens():
    norm, ref = BatchNorm(D), torch.nn.BatchNorm1d(D)
    x, pad = _batch()
    out = norm(x, pad)
    expected = ref(x[~pad])
    torch.testing.assert_close(out[~pad], expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(norm.running_mean, ref.running_mean)
    torch.testing.assert_close(norm.running_var, ref.running_var)


def test_bn_special_token_with_one_graph_uses_running_stats():
    norm = build_norm("sep:bn+ln", D).train()
    for _ in range(20):  # learn running statistics from a few batches
        norm(_batch(seed=_)[0])
    bn = norm.special
    before = (bn.running_mean.clone(), bn.num_batches_tracked.clone())
    x = torch.randn(1, 5, D)
    out = norm(x)  # one graph in training mode: no crash
    assert torch.isfinite(out).all()
    torch.testing.assert_close(bn.running_mean, before[0])  # statistics untouched
    assert bn.num_batches_tracked == before[1]
    expected = norm.eval()(x)  # same as evaluation mode
    torch.testing.assert_close(out, expected)


def _explained_variance_top1(z):
    z = z - z.mean(0)
    ev = torch.linalg.eigvalsh(z.T @ z / len(z))
    return float(ev[-1] / ev.sum())


def test_isobn_lowers_top_explained_variance_vs_bn():
    torch.manual_seed(0)
    d, n = 32, 512
    # strongly correlated features: 3 latent factors, one group of 20 duplicated dimensions
    latent = torch.randn(n, 3)
    mix = torch.zeros(3, d)
    mix[0, :20], mix[1, 20:28], mix[2, 28:] = 1.0, 1.0, 1.0
    z = latent @ mix + 0.05 * torch.randn(n, d)
    x = z[:, None, :]  # [B, 1, D]: one token per sample
    bn, iso = BatchNorm(d).train(), IsoBN(d, beta=0.5).train()
    ev_bn = _explained_variance_top1(bn(x)[:, 0].detach())  # ~20/32: the big group dominates
    ev_iso = _explained_variance_top1(iso(x)[:, 0].detach())  # ~1/3: groups weigh alike
    assert ev_bn > 0.55
    assert ev_iso < ev_bn - 0.2, (ev_iso, ev_bn)


def test_isobn_preserves_total_variance_and_follows_eq6():
    torch.manual_seed(1)
    iso = IsoBN(D, beta=0.5).train()
    x = torch.randn(64, 3, D) * torch.arange(1, D + 1)
    out = iso(x)
    # Eq. 7: sum of variances kept (up to the mean, which IsoBN does not remove)
    s = iso.moving_std
    theta_bar = iso.scale()
    torch.testing.assert_close((s**2 * theta_bar**2).sum(), (s**2).sum(), rtol=1e-4, atol=0)
    torch.testing.assert_close(out, x * theta_bar)
    # dimensions with larger std are scaled down relative to small ones (beta > 0)
    assert theta_bar[0] > theta_bar[-1]


def test_isobn_moving_statistics_follow_momentum():
    iso = IsoBN(D, momentum=0.5).train()
    a, b = torch.randn(32, 1, D), torch.randn(32, 1, D) * 4
    iso(a)
    std_a = a[:, 0].std(0, unbiased=False)
    torch.testing.assert_close(iso.moving_std, std_a)  # first batch replaces the init
    iso(b)
    std_b = b[:, 0].std(0, unbiased=False)
    torch.testing.assert_close(iso.moving_std, std_a + 0.5 * (std_b - std_a))


def test_reset_parameters_restores_initial_state():
    norm = build_norm("sep:bn+ln", D).train()
    norm(_batch()[0])
    norm.reset_parameters()
    assert norm.special.num_batches_tracked == 0
    torch.testing.assert_close(norm.special.running_mean, torch.zeros(D))


def test_constant_special_spec_removes_batch_stats_from_the_special_channel():
    from graphnorm.norms import constant_special_spec

    assert constant_special_spec("sep:bn+ln") == "sep:ln+ln"
    assert constant_special_spec("sep:isobn+bn") == "sep:ln+bn"
    for spec in ("ln", "bn", "sep:ln+bn", "sep:rms+ln"):
        assert constant_special_spec(spec) == spec
    # why: BN of a constant special token has zero batch variance and a decaying running var
    norm = build_norm("sep:bn+ln", D).train()
    const = torch.randn(1, 1, D).expand(16, 1, D)
    for _ in range(50):
        norm(torch.cat([const, torch.randn(16, 3, D)], 1))
    assert norm.special.running_var.max() < 0.01


def test_vector_isobn_is_isobn_on_one_token():
    from graphnorm.norms import VectorIsoBN

    torch.manual_seed(0)
    h = torch.randn(32, D)
    vec, tok = VectorIsoBN(D).train(), IsoBN(D).train()
    torch.testing.assert_close(vec(h), tok(h[:, None], None)[:, 0], atol=0, rtol=0)
    assert int(vec.iso.num_batches_tracked) == 1


@pytest.mark.parametrize("spec", NORM_SPECS)
@pytest.mark.parametrize("training", [True, False])
def test_packed_tokens_get_the_padded_norm(spec, training):
    """``forward_packed`` on the real tokens (the specials first) gives the padded call's
    outputs and running statistics: SepNorm keeps the special tokens apart there too."""
    norm = build_norm(spec, D).train(training)
    x, pad = _batch()
    x = x.double()
    norm.double()
    state = {k: v.clone() for k, v in norm.state_dict().items()}
    padded = norm(x, pad)
    after_padded = {k: v.clone() for k, v in norm.state_dict().items()}
    norm.load_state_dict(state)
    real = ~pad[:, 1:]
    packed = norm.forward_packed(torch.cat([x[:, 0], x[:, 1:][real]]), x.shape[0])
    torch.testing.assert_close(packed, torch.cat([padded[:, 0], padded[:, 1:][real]]))
    for key, value in norm.state_dict().items():
        torch.testing.assert_close(value, after_padded[key], msg=key)
