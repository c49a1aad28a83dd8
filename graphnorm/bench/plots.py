"""Pictures of a benchmark: ``summary.png`` (bars per variant) and ``curves.png`` (every run's
validation curve), both redrawn from the files of ``OUT/runs`` by ``bench.summary.summarize``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def plot_summary(df: pd.DataFrame, metric: str, path: Path, title: str = "mean ± std over seeds"):
    """Bars of val/test mean ± std per variant, y-axis from 0; returns the (closed) figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(len(df))
    fig, ax = plt.subplots(figsize=(1.2 * len(df) + 2.5, 3.8))
    ax.bar(x - 0.2, df[f"val_{metric}_mean"], 0.4, yerr=df[f"val_{metric}_std"], capsize=3, label="validation")
    ax.bar(x + 0.2, df[f"test_{metric}_mean"], 0.4, yerr=df[f"test_{metric}_std"], capsize=3, label="test")
    ax.set_xticks(x, df["norm"], rotation=20)
    ax.set_ylabel(metric)
    # from 0: a cut axis makes small differences look large
    tops = np.concatenate([(df[f"{s}_{metric}_mean"] + df[f"{s}_{metric}_std"].fillna(0)).values
                           for s in ("val", "test")])
    hi = np.nanmax(tops) if np.isfinite(tops).any() else 1.0
    ax.set_ylim(0, 1.3 * hi if hi > 0 else 1.0)  # headroom for the legend above the bars
    ax.legend(loc="upper right", ncol=2, fontsize=8)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return fig


def val_curve(log: Path, metric: str) -> pd.Series | None:
    """A run's validation metric per epoch (0-based index) from its CSV log; None without
    one (no file, or no validation logged)."""
    col = f"val/{metric}"
    if not Path(log).is_file():
        return None
    v = pd.read_csv(log)
    if col not in v:
        return None
    v = v.dropna(subset=[col]).groupby("epoch")[col].last()
    return v if len(v) else None


def plot_curves(logs: dict, metric: str, path: Path, title: str = ""):
    """Validation metric per epoch (1-based) of every run, a thin line per seed and a thick
    line for the mean over the seeds that reached that epoch, a colour per variant. Shows
    whether a budget ended on a flat curve. ``logs``: variant -> the runs' CSV logs (missing
    files are left out); returns the (closed) figure, or None when no run has a log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # right: the second half of training with its own y-range, where "has it flattened?"
    # is decided (on the left the first epochs' large errors squash the end into a line)
    fig, (ax, tail) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    for k, (name, files) in enumerate(logs.items()):
        color, curves = f"C{k % 10}", []
        for log in files:
            v = val_curve(log, metric)
            if v is None:
                continue
            curves.append(v)
            for a in (ax, tail):
                a.plot(v.index + 1, v.values, color=color, lw=0.6, alpha=0.45)
        if curves:
            mean = pd.concat(curves, axis=1).mean(axis=1, skipna=True)
            ax.plot(mean.index + 1, mean.values, color=color, lw=2, label=f"{name} (n={len(curves)})")
            tail.plot(mean.index + 1, mean.values, color=color, lw=2)
    if not ax.lines:  # no run had a log
        plt.close(fig)
        return None
    _zoom_to_second_half(tail)
    ax.set(xlabel="epoch", ylabel=f"validation {metric}")
    tail.set(xlabel="epoch", title="second half, zoomed")
    tail.title.set_fontsize(9)
    ax.legend(fontsize=8)
    ax.set_title(f"{title}: thin = one seed, thick = mean" if title else "validation curves", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return fig


def _zoom_to_second_half(ax) -> None:
    """x: the second half of the longest curve; y: the range of what is drawn there."""
    last = max(float(np.max(line.get_xdata())) for line in ax.lines)
    start = max(1.0, last / 2)
    if last <= start:  # one epoch: nothing to zoom into
        return
    ys = np.concatenate([np.asarray(line.get_ydata(), float)[np.asarray(line.get_xdata()) >= start]
                         for line in ax.lines])
    ys = ys[np.isfinite(ys)]
    ax.set_xlim(start, last)
    if ys.size:
        low, high = float(ys.min()), float(ys.max())
        pad = 0.05 * (high - low) or 0.05 * abs(high) or 0.05
        ax.set_ylim(low - pad, high + pad)
