"""Cheap CPU dropout masks (graphnorm.nn.dropout)."""
import torch

from graphnorm.nn.dropout import dropout, keep_mask, residual_dropout


def test_drop_mask_rate_and_independence():
    torch.manual_seed(0)
    m = keep_mask((1000, 1000), 0.1)
    assert set(m.unique().tolist()) == {0.0, 1.0} and abs(m.mean().item() - 0.9) < 2e-3
    # neighbouring lanes come from one 64-bit word: they must still be uncorrelated
    a, b = m.flatten()[0::2], m.flatten()[1::2]
    assert abs(((a - a.mean()) * (b - b.mean())).mean().item()) < 1e-3
    assert not torch.equal(m, keep_mask((1000, 1000), 0.1))  # a fresh mask per call


def test_drop_mask_follows_torch_seed():
    torch.manual_seed(3)
    m1 = keep_mask((64, 64), 0.5, torch.float64)
    torch.manual_seed(3)
    assert torch.equal(m1, keep_mask((64, 64), 0.5, torch.float64))
    assert keep_mask((10,), 0.0).sum() == 10 and m1.dtype == torch.float64


def test_residual_dropout_scales_kept_branch():
    torch.manual_seed(0)
    h = torch.zeros(200_000)
    out = residual_dropout(h, torch.ones(200_000), 0.25, True)
    assert set(out.unique().tolist()) == {0.0, torch.tensor(4 / 3).item()}
    assert abs(out.mean().item() - 1) < 0.01
    assert torch.equal(residual_dropout(torch.zeros(5), torch.ones(5), 0.25, False), torch.ones(5))


def test_dropout_gradient_matches_mask():
    torch.manual_seed(0)
    x = torch.ones(1000, requires_grad=True)
    y = dropout(x, 0.5, True)
    y.sum().backward()
    assert torch.equal(x.grad, y.detach())  # d/dx (x * m / (1 - p)) = m / (1 - p) = y here
    assert torch.equal(dropout(x, 0.5, False), x)
