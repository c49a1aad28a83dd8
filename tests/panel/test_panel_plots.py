"""Pictures of the panel's yardsticks (graphnorm/panel/plots.py): what is drawn is what the
rows say."""
import matplotlib.colors as mcolors
import numpy as np
import pytest

from graphnorm.panel import BLEND, BOOSTER
from graphnorm.panel.plots import PREDICTOR_COLOURS, VERDICT_COLOURS, plot_versus, plot_versus_gbm
from graphnorm.panel.record import Endpoint

PNG = b"\x89PNG"


def _row(quantity, ours, theirs, lo, hi, verdict):
    return {"quantity": quantity, "molecules": 100, "ours": ours, "theirs": theirs,
            "d_low": lo, "d_high": hi, "verdict": verdict}


def test_versus_draws_each_quantitys_interval_in_its_verdicts_colour(tmp_path):
    rows = [_row("LogD", 0.7, 0.6, 0.02, 0.18, "better"),
            _row("KSOL", 0.4, 0.45, -0.1, 0.0, "tied"),
            _row("MLM", 0.3, 0.55, -0.33, -0.13, "worse")]
    fig = plot_versus(rows, tmp_path / "v.png", "graphnorm", "ADMET-AI")
    assert (tmp_path / "v.png").read_bytes()[:4] == PNG
    left, right = fig.axes
    intervals = [line for line in right.get_lines() if len(line.get_xdata()) == 2
                 and line.get_xdata()[0] != line.get_xdata()[1]]
    assert [tuple(line.get_xdata()) for line in intervals] == [(0.02, 0.18), (-0.1, 0.0),
                                                              (-0.33, -0.13)]
    assert [mcolors.to_hex(line.get_color()) for line in intervals] == \
        [mcolors.to_hex(VERDICT_COLOURS[v]) for v in ("better", "tied", "worse")]
    assert "better on 1, tied on 1, worse on 1" in right.get_title()
    assert [t.get_text() for t in left.get_yticklabels()][0] == "LogD (100)"
    with pytest.raises(ValueError, match="no scored quantity"):
        plot_versus([], tmp_path / "none.png")


def _endpoint(task, score, shown, readout=None):
    return Endpoint(task=task, kind="regression", units="", n_select=50, n=50, judged=True,
                    metric="r2", score_select=score, score=score, shown=shown, readout=readout)


def test_versus_gbm_sorts_the_shown_endpoints_and_counts_those_above_the_gbm(tmp_path):
    rows = [{"task": f"a/{k}", "backbone": 0.3, "single_table": 0.4, "diff_lo": -0.2,
             "diff_hi": 0.0} for k in range(4)]
    panel = {"a/0": _endpoint("a/0", 0.5, True, BOOSTER),  # +0.1 over the gbm
             "a/1": _endpoint("a/1", 0.3, True),  # the head, -0.1
             "a/2": _endpoint("a/2", 0.45, True, BLEND),  # +0.05
             "a/3": _endpoint("a/3", 0.9, False)}  # not shown: not drawn, not counted
    fig = plot_versus_gbm(rows, panel, tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:4] == PNG
    ax = fig.axes[0]
    assert "above the gbm on 2 of 3 shown endpoints (67%; target 60%)" in ax.get_title()
    points = {text: np.asarray(c.get_offsets()) for c, text in
              zip(ax.collections[1:], [t.get_text() for t in ax.get_legend().get_texts()[1:]])}
    assert points["panel: head (1)"].tolist() == [[0, pytest.approx(-0.1)]]  # sorted: lowest first
    assert points["panel: head + booster (1)"][0][0] == 1
    assert points["panel: booster (1)"][0][0] == 2
    assert set(PREDICTOR_COLOURS) >= {"head", "booster", "head + booster", "related"}
    with pytest.raises(ValueError, match="no shown endpoint"):
        plot_versus_gbm(rows, {"a/3": panel["a/3"]}, tmp_path / "none.png")
