"""Pictures of the panel's two yardsticks, drawn beside their tables:

- ``versus.png`` (`graphnorm panel versus`): per measured quantity, both panels' Spearman on
  the same molecules, and the 95 % paired-bootstrap interval of the difference, coloured by
  its verdict -- where a new program's molecules are ranked better or worse than by the peer;
- ``versus_gbm.png`` (`graphnorm panel versus-gbm`): per endpoint the panel shows, its score
  on the report half R minus one MapLight gbm's fitted on that endpoint's table alone, sorted,
  coloured by what predicts the column (head, booster, blend, related), with the head's
  95 % interval against the gbm behind it -- how many endpoints sit above zero.

Each function draws from the rows its command already wrote and returns the closed figure,
so tests can read what was drawn.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

VERDICT_COLOURS = {"better": "tab:green", "tied": "tab:gray", "worse": "tab:red"}
PREDICTOR_COLOURS = {"head": "tab:blue", "booster": "tab:orange", "head + booster": "tab:purple",
                     "related": "tab:brown"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a server or in CI
    import matplotlib.pyplot as plt

    return plt


def plot_versus(rows: list[dict], path, ours: str = "graphnorm", theirs: str = "peer"):
    """``rows`` of `versus.versus` -> a two-part figure at ``path``: Spearman of each side per
    quantity, and the difference's interval with its verdict."""
    if not rows:
        raise ValueError("no scored quantity to draw")
    plt = _pyplot()
    y = np.arange(len(rows))[::-1]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 1.3 + 0.45 * len(rows)), sharey=True)
    left.scatter([r["ours"] for r in rows], y, marker="o", label=ours, zorder=3)
    left.scatter([r["theirs"] for r in rows], y, marker="s", label=theirs, zorder=3)
    left.set_yticks(y, [f"{r['quantity']} ({r['molecules']})" for r in rows])
    left.set_xlabel("Spearman ρ with the measured value")
    left.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, frameon=False)
    for k, r in zip(y, rows):
        colour = VERDICT_COLOURS.get(r["verdict"], "black")
        right.plot([r["d_low"], r["d_high"]], [k, k], color=colour, lw=3)
        right.scatter([r["ours"] - r["theirs"]], [k], color=colour, zorder=3)
    right.axvline(0, color="black", lw=0.8)
    right.set_xlabel(f"ρ {ours} − ρ {theirs}")
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICT_COLOURS}
    right.set_title(f"95 % paired bootstrap\n{ours} better on {counts['better']}, tied on "
                    f"{counts['tied']}, worse on {counts['worse']}", fontsize=8)
    for ax in (left, right):
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(Path(path), dpi=120)
    plt.close(fig)
    return fig


def shipped_score(row: dict, panel: dict) -> float:
    """The R score of what the panel ships for ``row``'s endpoint (``panel``: task -> its
    `Endpoint`): its own score where it has one (a booster, a blend, ...), else the head's."""
    e = panel.get(row["task"])
    return row["backbone"] if e is None or e.score is None else e.score


def plot_versus_gbm(rows: list[dict], endpoints: dict, path, target: float = 0.6):
    """``rows`` of `versus_gbm` and ``endpoints`` (task -> its `Endpoint` in the panel as it
    stands) -> the sorted panel − gbm differences of the shown endpoints at ``path``, the head's
    interval behind each; the title counts those above the gbm against ``target``."""
    shown = [r for r in rows if r["task"] in endpoints and endpoints[r["task"]].shown]
    if not shown:
        raise ValueError("no shown endpoint with a gbm row to draw")
    plt = _pyplot()
    shown.sort(key=lambda r: shipped_score(r, endpoints) - r["single_table"])
    x = np.arange(len(shown))
    diff = np.array([shipped_score(r, endpoints) - r["single_table"] for r in shown])
    kinds = [endpoints[r["task"]].predictor.split(":")[0] for r in shown]
    fig, ax = plt.subplots(figsize=(min(16, 3 + 0.06 * len(shown)), 4.2))
    ax.vlines(x, [r["diff_lo"] for r in shown], [r["diff_hi"] for r in shown],
              color="lightgray", lw=1.5, label="head − gbm, 95 %")
    for kind, colour in PREDICTOR_COLOURS.items():
        mine = np.array([k == kind for k in kinds])
        if mine.any():
            ax.scatter(x[mine], diff[mine], s=12, color=colour, zorder=3,
                       label=f"panel: {kind} ({int(mine.sum())})")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("endpoints the panel shows, sorted")
    ax.set_ylabel("score on R: panel − one-table gbm\n(ROC-AUC or R²)")
    above = int((diff > 0).sum())  # as versus_gbm.md counts "panel higher"
    ax.set_title(f"panel above the gbm on {above} of {len(shown)} shown endpoints "
                 f"({above / len(shown):.0%}; target {target:.0%})", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(Path(path), dpi=120)
    plt.close(fig)
    return fig
