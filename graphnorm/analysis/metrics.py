"""Embedding metrics for the [VNode]/[CLS] analysis: uniformity, spectra, explained variance.

Uniformity (seed paper "On Separate Normalization in Self-supervised Transformers", Eq. 4,
after Wang & Isola 2020), on L2-normalized vectors h_hat = h / ||h||:

    L_U = log( 1 / (N(N-1)/2) * sum_{n<m} exp(-t * ||h_hat_n - h_hat_m||^2) ),   t = 2

i.e. the log of the mean over the N(N-1)/2 unordered pairs n < m (the diagonal n = m is
excluded; averaging over ordered pairs i != j gives the same number). Range [-4t, 0]:
0 when all vectors point the same way, -> -2t = -4 for uniform vectors as D -> inf, since
||h_hat_n - h_hat_m||^2 -> 2. Lower = more uniform.

Squared distances are computed as |a|^2 + |b|^2 - 2 <a, b> (= 2 - 2 cos for unit rows,
clamped at 0) instead of with pdist, so the gradient stays finite when two rows coincide.
An all-zero row stays zero after normalization (distance 1 to every unit vector).

U-MAE term (seed paper Eq. 8): L = L_MAE + lambda * L_unif. We use the Wang & Isola form
above for L_unif (`uniformity_loss`, negatives = the other rows of the batch). Note that Eq. 8
as printed, E_i E_j[h_i^T h_j], and the U-MAE code (spectral contrastive loss, mean of
squared cosine similarities) differ; the latter is `spectral_uniformity_loss`.

Spectrum (seed paper Fig. 4b/c): singular values s_1 >= ... >= s_r of the (column-centered)
embedding matrix of up to 10k randomly chosen rows (as in the paper), divided by s_1 so runs
with different N or scale are comparable; plot them on a log axis.

Explained variance (IsoBN, Zhou et al., Sec. 5.3, Eq. 9):

    EV_k(h) = sum_{i<=k} s_i^2 / sum_{j<=d} s_j^2

with s_i the singular values of the centered matrix, so s_i^2 / (N-1) are the eigenvalues of
the covariance: EV_k is the share of variance in the top-k principal directions. It is
invariant to scale and (because we center) to the mean, the two properties IsoBN asks for.
EV_1 = 1 for rank-1 data, ~1/D for isotropic data.

Effective rank (Roy & Vetterli 2007): exp(H(p)), p_i = s_i / sum_j s_j, in [1, rank].

Large N: `uniformity` streams row chunks so memory is O(chunk * N); N above `max_samples`
(default 10_000, the paper's 10k) is subsampled without replacement with a fixed seed, so
results are reproducible. Pass max_samples=None for the exact value over all rows.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from graphnorm.nn.losses import spectral_uniformity_loss, uniformity_loss  # noqa: F401 (re-exported)

__all__ = [
    "uniformity",
    "uniformity_loss",
    "spectral_uniformity_loss",
    "singular_values",
    "explained_variance",
    "explained_variance_curve",
    "effective_rank",
    "embedding_report",
]

DEFAULT_MAX_SAMPLES = 10_000  # seed paper Sec. 4.4: "we randomly choose 10k embeddings"
DEFAULT_SEED = 0


def _as_matrix(z: Any, max_samples: int | None = None, seed: int = DEFAULT_SEED) -> torch.Tensor:
    """Detached float64 CPU copy of a 2-D [N, D] tensor/array, optionally row-subsampled."""
    if isinstance(z, torch.Tensor):
        t = z.detach().to("cpu", torch.float64)
    else:
        t = torch.as_tensor(np.asarray(z), dtype=torch.float64)
    if t.dim() != 2:
        raise ValueError(f"expected a 2-D [N, D] embedding matrix, got shape {tuple(t.shape)}")
    if t.shape[0] == 0 or t.shape[1] == 0:
        raise ValueError(f"empty embedding matrix of shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        # a diverged run should fail loudly, not produce a NaN metric
        raise ValueError("embedding matrix contains NaN or inf")
    if max_samples is not None and t.shape[0] > max_samples:
        g = torch.Generator().manual_seed(seed)
        idx = torch.randperm(t.shape[0], generator=g)[:max_samples]
        t = t[idx.sort().values]
    return t


def uniformity(
    z: Any,
    t: float = 2.0,
    *,
    max_samples: int | None = DEFAULT_MAX_SAMPLES,
    seed: int = DEFAULT_SEED,
    chunk_size: int = 1024,
) -> float:
    """Uniformity L_U (seed paper Eq. 4) of the rows of `z` [N, D], as a Python float.

    Rows are L2-normalized first; the mean runs over the N(N-1)/2 pairs n < m. Computed in
    float64, `chunk_size` rows at a time with a streaming log-sum-exp (memory
    O(chunk_size * N)). If N > max_samples, a fixed-seed random subset of max_samples rows is
    used. Zero rows stay zero after normalization (distance 1 to any unit vector).
    """
    h = _as_matrix(z, max_samples, seed)
    n = h.shape[0]
    if n < 2:
        raise ValueError("uniformity needs at least 2 embeddings")
    h = F.normalize(h, dim=1)
    sq_norm = (h * h).sum(1)
    parts = []
    for start in range(0, n - 1, chunk_size):
        stop = min(start + chunk_size, n)
        # rows [start, stop) against columns [start, n); only pairs n < m count
        logits = (sq_norm[start:stop, None] + sq_norm[None, start:] - 2.0 * h[start:stop] @ h[start:].T)
        logits = logits.clamp_min_(0.0).mul_(-t)
        c = stop - start
        lower = torch.ones(c, c, dtype=torch.bool).tril_()  # diagonal and m < n in the block
        logits[:, :c].masked_fill_(lower, -math.inf)
        parts.append(torch.logsumexp(logits.flatten(), dim=0))
    num_pairs = n * (n - 1) / 2
    return float(torch.logsumexp(torch.stack(parts), dim=0) - math.log(num_pairs))


def _raw_singular_values(z: Any, center: bool, max_samples: int | None, seed: int) -> np.ndarray:
    """Descending singular values (length min(N, D)) of the optionally centered matrix."""
    h = _as_matrix(z, max_samples, seed)
    if center:
        h = h - h.mean(0, keepdim=True)
    # eigenvalues of the smaller Gram matrix are s^2: ~10x faster than an SVD at 10k x 768;
    # float64 keeps s_i / s_1 accurate down to ~1e-7, far below what the plots show
    gram = h.T @ h if h.shape[0] >= h.shape[1] else h @ h.T
    ev = torch.linalg.eigvalsh(gram).flip(0).clamp_min(0.0)
    return ev.sqrt().numpy()


def _normalized(s: np.ndarray, normalize: str | None) -> np.ndarray:
    if normalize is None:
        return s
    if normalize not in ("max", "sum"):
        raise ValueError(f"normalize must be 'max', 'sum' or None, got {normalize!r}")
    denom = s[0] if normalize == "max" else s.sum()
    return s / denom if denom > 0 else s


def _ev_curve(s: np.ndarray) -> np.ndarray:
    s2 = s**2
    total = s2.sum()
    if total <= 0:
        return np.full_like(s2, np.nan)
    return np.minimum(np.cumsum(s2) / total, 1.0)  # clip rounding above 1


def _effective_rank(s: np.ndarray) -> float:
    total = s.sum()
    if total <= 0:
        return float("nan")
    p = s[s > 0] / total
    return float(np.exp(-(p * np.log(p)).sum()))


def singular_values(
    z: Any,
    center: bool = True,
    *,
    normalize: str | None = "max",
    max_samples: int | None = DEFAULT_MAX_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> np.ndarray:
    """Singular value spectrum of `z` [N, D] (seed paper Fig. 4b/c), descending, float64.

    center: subtract the column mean first (spectrum of the covariance, mean-invariant).
    normalize: "max" divides by the largest value (first entry 1, the default), "sum" makes
    the values sum to 1, None returns raw values. An all-zero spectrum is returned as is.
    Length min(N', D) where N' = min(N, max_samples).
    """
    return _normalized(_raw_singular_values(z, center, max_samples, seed), normalize)


def explained_variance_curve(
    z: Any,
    center: bool = True,
    *,
    max_samples: int | None = DEFAULT_MAX_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> np.ndarray:
    """[EV_1, EV_2, ..., EV_r] (IsoBN Eq. 9), r = min(N', D); entry k-1 is EV_k.

    Non-decreasing and ends at 1. All NaN if the (centered) data has no variance.
    """
    return _ev_curve(_raw_singular_values(z, center, max_samples, seed))


def explained_variance(
    z: Any,
    k: int,
    center: bool = True,
    *,
    max_samples: int | None = DEFAULT_MAX_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> float:
    """EV_k (IsoBN Eq. 9): share of the variance in the top-k principal directions.

    1 <= k <= D. k beyond the number of singular values (N' < D) gives 1.0.
    """
    h = _as_matrix(z, max_samples, seed)
    if not 1 <= k <= h.shape[1]:
        raise ValueError(f"k must be in [1, D={h.shape[1]}], got {k}")
    curve = _ev_curve(_raw_singular_values(h, center, None, seed))
    return float(curve[min(k, len(curve)) - 1])


def effective_rank(
    z: Any,
    center: bool = True,
    *,
    max_samples: int | None = DEFAULT_MAX_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> float:
    """Effective rank exp(-sum p_i log p_i), p_i = s_i / sum s (Roy & Vetterli 2007).

    1 for rank-1 data, D for an isotropic (equal singular values) one; NaN if no variance.
    """
    return _effective_rank(_raw_singular_values(z, center, max_samples, seed))


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def embedding_report(
    z: Any,
    ks: Sequence[int] = (1, 2, 3, 5, 10),
    *,
    t: float = 2.0,
    center: bool = True,
    max_samples: int | None = DEFAULT_MAX_SAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """All metrics of one embedding matrix `z` [N, D] as a JSON-serializable dict.

    Keys: n, dim, n_used (rows after subsampling), t, uniformity, ev_1, ev ({"k": EV_k} for
    the ks <= D), effective_rank, singular_values (raw, of the centered matrix), spectrum
    (singular values / largest, see `singular_values`), ev_curve. Undefined values (no variance, N = 1) are None, never NaN,
    so json.dumps(..., allow_nan=False) works.
    """
    h = _as_matrix(z, max_samples, seed)  # subsample once; every metric uses the same rows
    n, dim = (int(v) for v in np.shape(z))
    raw = _raw_singular_values(h, center, None, seed)  # one decomposition for all spectra
    curve = _ev_curve(raw)
    return {
        "n": n,
        "dim": dim,
        "n_used": int(h.shape[0]),
        "t": float(t),
        "uniformity": uniformity(h, t, max_samples=None) if h.shape[0] >= 2 else None,
        "ev_1": _finite_or_none(curve[0]),
        "ev": {str(k): _finite_or_none(curve[min(k, len(curve)) - 1]) for k in ks if 1 <= k <= dim},
        "effective_rank": _finite_or_none(_effective_rank(raw)),
        "singular_values": [float(v) for v in raw],  # raw: tables and plots redraw from these
        "spectrum": [float(v) for v in _normalized(raw, "max")],
        "ev_curve": [_finite_or_none(v) for v in curve],
    }
