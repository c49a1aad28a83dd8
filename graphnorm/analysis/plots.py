"""Comparison figures for the [VNode]/[CLS] embedding analysis (`graphnorm analyze --compare`).

Every function takes a mapping {run label: data}, draws all runs in one figure, writes a PNG
(parent folders are created) and returns its path:

- `plot_spectra`: singular value spectra, seed paper Fig. 4b/c (one line per run, log y).
- `plot_dimension_distributions`: per-dimension value distributions, seed paper Fig. 2
  (one panel per run, one violin per feature dimension, first 50 dimensions by default). A run
  may be a {group: z} mapping, e.g. {"[VNode]": z_v, "tokens": z_t}, to overlay groups in one
  panel as Fig. 2 does for [CLS] (blue) vs other tokens (red).
- `plot_explained_variance`: EV_k against k, IsoBN Fig. 7 (one line per run), with the
  isotropic reference EV_k = k / D when all runs share D.

Figures are built on matplotlib's object API with the Agg canvas, never pyplot: no display
is needed and no global backend or figure state is touched.
"""
from __future__ import annotations

from itertools import cycle
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .metrics import DEFAULT_MAX_SAMPLES, DEFAULT_SEED, explained_variance_curve

__all__ = ["plot_spectra", "plot_dimension_distributions", "plot_explained_variance"]

# Fig. 2 colours: [CLS]/[VNode] blue, other tokens red; further groups/runs take the cycle
_GROUP_COLORS = ["tab:blue", "tab:red", "tab:green", "tab:orange", "tab:purple", "tab:brown"]


def _check_runs(runs: Mapping[str, Any]) -> None:
    if not isinstance(runs, Mapping) or len(runs) == 0:
        raise ValueError("expected a non-empty mapping {run label: data}")


def _to_numpy(z: Any) -> np.ndarray:
    if isinstance(z, torch.Tensor):
        z = z.detach().to("cpu", torch.float64).numpy()
    a = np.asarray(z, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"expected a 2-D [N, D] embedding matrix, got shape {a.shape}")
    return a


def _save(fig: Figure, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)  # attaches the Agg canvas to the figure
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def plot_spectra(
    spectra: Mapping[str, Any],
    path: str | Path,
    *,
    normalize: bool = True,
    log: bool = True,
    title: str = "Singular value spectrum of the embeddings",
) -> Path:
    """One line per run: i-th largest singular value against i (seed paper Fig. 4b/c).

    spectra: {label: 1-D spectrum}, e.g. `singular_values(z)` or `embedding_report(z)["spectrum"]`.
    normalize: divide each spectrum by its largest value (idempotent for normalized input).
    log: log-scale y axis, where collapse (fast decay to ~0) is visible; zeros are not drawn.
    """
    _check_runs(spectra)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    for label, s in spectra.items():
        s = np.sort(np.asarray(s, dtype=np.float64).ravel())[::-1]
        if normalize and s.size and s[0] > 0:
            s = s / s[0]
        ax.plot(np.arange(1, s.size + 1), s, label=str(label), lw=1.5)
    if log:
        ax.set_yscale("log", nonpositive="mask")
    ax.set_xlabel("singular value index i (descending)")
    ax.set_ylabel(r"singular value $s_i / s_1$" if normalize else r"singular value $s_i$")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(title="run")
    return _save(fig, path)


def _dims_to_plot(dims: int | Sequence[int], d: int) -> np.ndarray:
    if isinstance(dims, (int, np.integer)):
        if dims < 1:
            raise ValueError(f"dims must be >= 1, got {dims}")
        return np.arange(min(int(dims), d))
    idx = np.asarray(list(dims), dtype=int)
    if idx.size == 0 or idx.min() < 0 or idx.max() >= d:
        raise ValueError(f"dims must be non-empty indices in [0, {d}), got {list(dims)}")
    return idx


def plot_dimension_distributions(
    embeddings: Mapping[str, Any],
    path: str | Path,
    dims: int | Sequence[int] = 50,
    *,
    max_points: int = 2000,
    seed: int = DEFAULT_SEED,
    title: str = "Per-dimension feature distributions",
) -> Path:
    """Fig. 2 style: one panel per run, a violin of the values of each feature dimension.

    embeddings: {run label: z [N, D]} or {run label: {group label: z}} to overlay groups.
    dims: the first `dims` dimensions (Fig. 2 shows 50) or explicit dimension indices.
    max_points: rows per matrix drawn (fixed-seed subsample) to keep the KDEs fast.
    Means are marked; the dashed line is 0, against which Fig. 2 judges centring.
    """
    _check_runs(embeddings)
    rng = np.random.default_rng(seed)
    runs = {}
    for label, value in embeddings.items():
        groups = value if isinstance(value, Mapping) else {"": value}
        _check_runs(groups)
        runs[label] = {g: _to_numpy(z) for g, z in groups.items()}
    d = min(z.shape[1] for groups in runs.values() for z in groups.values())
    idx = _dims_to_plot(dims, d)

    width = max(6.4, 0.22 * idx.size + 2.0)
    fig = Figure(figsize=(width, 2.8 * len(runs)), layout="constrained")
    axes = fig.subplots(len(runs), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    pos = np.arange(1, idx.size + 1)
    for ax, (label, groups) in zip(axes, runs.items()):
        handles = []
        for color, (group, z) in zip(cycle(_GROUP_COLORS), groups.items()):
            if z.shape[0] > max_points:
                z = z[np.sort(rng.choice(z.shape[0], max_points, replace=False))]
            parts = ax.violinplot(z[:, idx], positions=pos, widths=0.8, showmeans=True,
                                  showextrema=False)
            for body in parts["bodies"]:
                body.set_facecolor(color)
                body.set_edgecolor(color)
                body.set_alpha(0.45)
            parts["cmeans"].set_color(color)
            handles.append((parts["bodies"][0], group))
        ax.axhline(0.0, color="k", lw=0.8, ls="--")
        ax.set_title(str(label))
        ax.set_ylabel("feature value")
        if any(g for _, g in handles):
            ax.legend([h for h, _ in handles], [g for _, g in handles], loc="upper right")
    step = max(1, idx.size // 25)  # readable tick labels for many dimensions
    axes[-1].set_xticks(pos[::step], [str(i) for i in idx[::step]])
    axes[-1].set_xlabel("feature dimension")
    fig.suptitle(title)
    return _save(fig, path)


def plot_explained_variance(
    embeddings: Mapping[str, Any],
    path: str | Path,
    *,
    max_k: int | None = None,
    center: bool = True,
    max_samples: int | None = DEFAULT_MAX_SAMPLES,
    title: str = r"Explained variance $EV_k$ of the top-k principal directions",
) -> Path:
    """One line per run: EV_k (IsoBN Eq. 9) against k, as in IsoBN Fig. 7.

    embeddings: {label: z [N, D]}. max_k: last k drawn (default: all). Lower = more isotropic;
    the dotted line EV_k = k / D is perfectly isotropic data (drawn when all runs share D).
    """
    _check_runs(embeddings)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    dims = set()
    for label, z in embeddings.items():
        z = _to_numpy(z)
        dims.add(z.shape[1])
        curve = explained_variance_curve(z, center, max_samples=max_samples)
        curve = curve[:max_k] if max_k is not None else curve
        marker = "." if curve.size <= 50 else None  # points only while they stay readable
        ax.plot(np.arange(1, curve.size + 1), curve, label=str(label), lw=1.5, marker=marker)
    if len(dims) == 1:
        d = dims.pop()
        k = np.arange(1, (min(max_k, d) if max_k else d) + 1)
        ax.plot(k, k / d, color="gray", ls=":", label=f"isotropic (k/{d})")
    ax.set_xlabel("number of principal directions k")
    ax.set_ylabel(r"explained variance $EV_k$")
    ax.set_ylim(0.0, 1.02)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(title="run")
    return _save(fig, path)
