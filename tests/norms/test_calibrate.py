"""graphnorm.norms.calibrate: running statistics from the moments the training batches kept."""
import torch

from graphnorm.norms import IsoBN, build_norm, keep_batch_moments, load_batch_moments


def _batches(count=5, B=4, L=6, D=3):
    """Batches like size buckets: each has its own mean, and its own padding."""
    gen = torch.Generator().manual_seed(0)
    out = []
    for b in range(count):
        x = torch.randn(B, L, D, generator=gen) + 3.0 * b
        pad = torch.zeros(B, L, dtype=torch.bool)
        pad[:, L - 1 - b % 3:] = True
        pad[:, 0] = False
        out.append((x, pad))
    return out


def test_kept_moments_give_the_statistics_of_the_last_batches_together():
    norm = build_norm("sep:bn+bn", 3)
    assert keep_batch_moments(norm, 3)
    batches = _batches()
    norm.train()
    for x, pad in batches:
        norm(x, pad)
    assert load_batch_moments(norm) == 3
    last = batches[-3:]
    special = torch.cat([x[:, 0] for x, _ in last])  # the specials of the last 3 batches
    ordinary = torch.cat([x[:, 1:][~pad[:, 1:]] for x, pad in last])
    for bn, tokens in ((norm.special, special), (norm.tokens, ordinary)):
        # the union's mean and unbiased variance: bucket means differ, so the average of
        # per-batch variances would be far smaller
        torch.testing.assert_close(bn.running_mean, tokens.mean(0))
        torch.testing.assert_close(bn.running_var, tokens.var(0))


def test_norms_that_cannot_keep_moments_leave_the_statistics_to_random_batches():
    iso = IsoBN(3)
    assert not keep_batch_moments(iso, 4)
    assert load_batch_moments(iso) == 0
    bn = build_norm("sep:bn+ln", 3)
    assert keep_batch_moments(bn, 4)
    before = bn.special.running_mean.clone()
    assert load_batch_moments(bn) == 0  # no training batch yet: nothing changes
    assert torch.equal(before, bn.special.running_mean)
