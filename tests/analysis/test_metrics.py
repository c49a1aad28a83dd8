"""Known-answer tests for graphnorm.analysis.metrics (seed paper Eq. 4, IsoBN Eq. 9)."""
import json
import math

import numpy as np
import pytest
import torch

from graphnorm.analysis import (
    effective_rank,
    embedding_report,
    explained_variance,
    explained_variance_curve,
    singular_values,
    spectral_uniformity_loss,
    uniformity,
    uniformity_loss,
)


def _brute_uniformity(z: np.ndarray, t: float) -> float:
    """Eq. 4 literally: double loop over pairs n < m of L2-normalized rows."""
    h = z / np.linalg.norm(z, axis=1, keepdims=True)
    vals = [math.exp(-t * np.sum((h[a] - h[b]) ** 2)) for a in range(len(h)) for b in range(a + 1, len(h))]
    return math.log(sum(vals) / len(vals))


# ---------------------------------------------------------------- uniformity


def test_identical_vectors_give_zero():
    z = torch.tensor([[0.3, -1.2, 2.0]]).repeat(20, 1)
    assert abs(uniformity(z)) < 1e-12
    # same direction, different norms: rows are L2-normalized first
    scaled = z * torch.arange(1, 21, dtype=torch.float32)[:, None]
    assert abs(uniformity(scaled)) < 1e-12


def test_antipodal_pair_gives_minus_4t():
    z = np.array([[1.0, 0.0], [-1.0, 0.0]])  # ||h1 - h2||^2 = 4
    assert uniformity(z, t=2.0) == pytest.approx(-8.0, abs=1e-12)
    assert uniformity(z, t=0.5) == pytest.approx(-2.0, abs=1e-12)


def test_three_points_average_over_unordered_pairs():
    z = np.array([[1.0, 0.0], [0.0, 3.0], [-2.0, 0.0]])  # squared distances 2, 4, 2
    expected = math.log((2 * math.exp(-4.0) + math.exp(-8.0)) / 3)
    assert uniformity(z) == pytest.approx(expected, abs=1e-12)


def test_high_dim_gaussian_approaches_minus_2t():
    z = torch.randn(400, 2048, generator=torch.Generator().manual_seed(0))
    # ||h_i - h_j||^2 = 2 - 2 cos, cos ~ N(0, 1/D)  =>  L_U ~ -2t + t^2 / D
    assert uniformity(z, t=2.0) == pytest.approx(-4.0, abs=0.02)
    assert uniformity(z, t=1.0) == pytest.approx(-2.0, abs=0.02)


def test_low_dim_gaussian_is_less_uniform_than_high_dim():
    g = torch.Generator().manual_seed(1)
    assert uniformity(torch.randn(300, 2, generator=g)) > uniformity(torch.randn(300, 64, generator=g)) + 0.5


@pytest.mark.parametrize("chunk", [1, 7, 1024])
def test_matches_brute_force_for_any_chunk_size(chunk):
    z = np.random.default_rng(2).normal(size=(41, 5)) + 0.5
    assert uniformity(z, chunk_size=chunk) == pytest.approx(_brute_uniformity(z, 2.0), abs=1e-12)


def test_subsampling_is_deterministic_and_close():
    z = torch.randn(2000, 16, generator=torch.Generator().manual_seed(3))
    a = uniformity(z, max_samples=1000)
    assert a == uniformity(z, max_samples=1000)  # fixed seed
    assert a != uniformity(z, max_samples=1000, seed=1)
    assert a == pytest.approx(uniformity(z, max_samples=None), abs=0.05)


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        uniformity(np.ones((1, 4)))
    with pytest.raises(ValueError):
        uniformity(np.ones(4))
    with pytest.raises(ValueError):
        uniformity(np.array([[1.0, np.nan], [0.0, 1.0]]))


# ---------------------------------------------------------------- training losses


def test_uniformity_loss_equals_metric_and_has_gradient():
    z = torch.randn(64, 32, generator=torch.Generator().manual_seed(4), dtype=torch.float64, requires_grad=True)
    loss = uniformity_loss(z)
    assert loss.dim() == 0
    assert loss.item() == pytest.approx(uniformity(z, max_samples=None), abs=1e-10)
    loss.backward()
    assert torch.isfinite(z.grad).all() and z.grad.abs().sum() > 0


def test_uniformity_loss_gradient_finite_for_identical_rows():
    # pdist has a NaN gradient at distance 0; the loss must not
    z = torch.ones(8, 4, requires_grad=True)
    uniformity_loss(z).backward()
    assert torch.isfinite(z.grad).all()


def test_minimizing_uniformity_loss_spreads_a_cluster():
    g = torch.Generator().manual_seed(5)
    z = (torch.tensor([1.0, 0.0, 0.0]) + 0.05 * torch.randn(32, 3, generator=g)).requires_grad_(True)
    start = uniformity(z)
    for _ in range(50):  # plain gradient descent
        (grad,) = torch.autograd.grad(uniformity_loss(z), z)
        with torch.no_grad():
            z -= 0.5 * grad
    assert uniformity(z) < start - 1.0


def test_spectral_uniformity_loss_known_values():
    assert spectral_uniformity_loss(torch.eye(4)).item() == pytest.approx(0.0, abs=1e-7)
    assert spectral_uniformity_loss(torch.ones(5, 3)).item() == pytest.approx(1.0, abs=1e-6)
    assert spectral_uniformity_loss(torch.ones(5, 3), tau=0.5).item() == pytest.approx(4.0, abs=1e-5)


# ---------------------------------------------------------------- spectra and EV_k


def test_singular_values_match_numpy_svd():
    z = np.random.default_rng(6).normal(size=(50, 8)) + 3.0
    ref = np.linalg.svd(z - z.mean(0), compute_uv=False)
    np.testing.assert_allclose(singular_values(z, normalize=None), ref, rtol=1e-9)
    s = singular_values(z)
    assert s[0] == 1.0 and np.all(np.diff(s) <= 0)
    np.testing.assert_allclose(s, ref / ref[0], rtol=1e-9)
    assert singular_values(z, normalize="sum").sum() == pytest.approx(1.0)
    # without centering the offset dominates the first singular value
    assert singular_values(z, center=False, normalize=None)[0] > 2 * ref[0]


def test_rank_one_data():
    rng = np.random.default_rng(7)
    z = np.outer(rng.normal(size=200), rng.normal(size=16)) + 5.0  # rank 1 after centering
    assert explained_variance(z, 1) == pytest.approx(1.0, abs=1e-9)
    assert effective_rank(z) == pytest.approx(1.0, abs=1e-4)
    assert singular_values(z)[1] < 1e-6


def test_explained_variance_exact_small_case():
    # centred rows along x with s^2 = 8 and along y with s^2 = 2  =>  EV_1 = 0.8
    z = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 1.0], [0.0, -1.0]]) + [10.0, -3.0]
    assert explained_variance(z, 1) == pytest.approx(0.8, abs=1e-12)
    assert explained_variance(z, 2) == pytest.approx(1.0, abs=1e-12)
    assert explained_variance(3.7 * z, 1) == pytest.approx(0.8, abs=1e-12)  # scale-invariant


def test_isotropic_gaussian_ev1_is_one_over_d():
    d = 16
    z = torch.randn(20000, d, generator=torch.Generator().manual_seed(8))
    ev1 = explained_variance(z, 1, max_samples=None)
    # largest sample eigenvalue ~ (1 + sqrt(D/N))^2 times the mean one
    assert 1 / d <= ev1 < 1.15 / d
    curve = explained_variance_curve(z, max_samples=None)
    assert curve.shape == (d,) and np.all(np.diff(curve) >= 0) and curve[-1] == pytest.approx(1.0)
    np.testing.assert_allclose(curve, np.arange(1, d + 1) / d, atol=0.03)
    assert effective_rank(z, max_samples=None) == pytest.approx(d, rel=0.01)


def test_explained_variance_validates_k_and_handles_no_variance():
    z = np.random.default_rng(9).normal(size=(10, 4))
    for k in (0, 5):
        with pytest.raises(ValueError):
            explained_variance(z, k)
    assert np.isnan(explained_variance_curve(np.ones((5, 3)))).all()


# ---------------------------------------------------------------- report


def test_embedding_report_is_json_and_consistent():
    z = torch.randn(300, 24, generator=torch.Generator().manual_seed(10), requires_grad=True)
    rep = embedding_report(z, ks=(1, 3, 100))
    json.dumps(rep, allow_nan=False)
    assert rep["n"] == 300 and rep["dim"] == 24 and rep["n_used"] == 300
    assert rep["uniformity"] == pytest.approx(uniformity(z))
    assert rep["ev_1"] == pytest.approx(explained_variance(z, 1))
    assert set(rep["ev"]) == {"1", "3"}  # k > D is skipped
    assert rep["ev"]["3"] == pytest.approx(explained_variance(z, 3))
    assert rep["effective_rank"] == pytest.approx(effective_rank(z))
    np.testing.assert_allclose(rep["spectrum"], singular_values(z))
    centered = z.detach().double().numpy() - z.detach().double().numpy().mean(0)
    np.testing.assert_allclose(rep["singular_values"], np.linalg.svd(centered, compute_uv=False))
    assert len(rep["ev_curve"]) == 24


def test_embedding_report_subsamples_and_survives_degenerate_input():
    rep = embedding_report(np.random.default_rng(11).normal(size=(500, 8)), max_samples=100)
    assert rep["n"] == 500 and rep["n_used"] == 100
    flat = embedding_report(np.ones((6, 3)))  # no variance: undefined metrics are None
    json.dumps(flat, allow_nan=False)
    assert flat["uniformity"] == pytest.approx(0.0, abs=1e-12)
    assert flat["ev_1"] is None and flat["effective_rank"] is None
