"""The benchmark summary's plots (graphnorm/bench/summary.py): the score bars and the
validation curves, on faked runs (tests/bench/conftest.py)."""
import pandas as pd
import pytest

import graphnorm.bench.summary as summary


def test_summary_plot_starts_at_zero_and_names_dataset_budget_and_seeds(faked):
    out, df, _ = faked
    runs = summary.load_runs(out)
    title = summary.plot_title(runs, "zinc-subset")
    assert "zinc-subset" in title and "3 epochs" in title and "seeds 0-2 (n=3)" in title
    fig = summary.plot_summary(df, "mae", out / "again.png", title=title)
    low, high = fig.axes[0].get_ylim()
    assert low == 0 and high >= (df.test_mae_mean + df.test_mae_std).max()
    assert fig.axes[0].get_title() == title and (out / "summary.png").stat().st_size > 0


def test_curves_draw_every_logged_run_and_the_mean_per_variant(faked):
    out, _, _ = faked
    runs = summary.load_runs(out)
    assert summary.plot_curves(summary.run_logs(out, runs), "mae", out / "c.png") is None  # no logs
    assert not (out / "c.png").exists() and not (out / "curves.png").exists()
    for seed, vals in ((0, [0.9, 0.7, 0.6]), (1, [1.1, 0.9])):  # seed 1 stopped earlier
        logs = out / "runs" / "ln" / f"seed{seed}" / "logs"
        logs.mkdir(parents=True)
        rows = [{"epoch": e, "step": 10 * e, "train/loss": 1.0} for e in range(len(vals))]
        rows += [{"epoch": e, "step": 10 * e + 9, "val/mae": v} for e, v in enumerate(vals)]
        pd.DataFrame(rows).to_csv(logs / "metrics.csv", index=False)
    fig = summary.plot_curves(summary.run_logs(out, runs), "mae", out / "c.png", title="t")
    ax = fig.axes[0]
    thin, mean = ax.lines[:2], ax.lines[2]
    assert [list(line.get_xdata()) for line in thin] == [[1, 2, 3], [1, 2]]
    assert list(mean.get_ydata()) == pytest.approx([1.0, 0.8, 0.6])
    assert mean.get_label() == "ln (n=2)" and len(ax.lines) == 3 and (out / "c.png").is_file()
    tail = fig.axes[1]  # the second half (epochs 1.5-3) with the y-range of what is there
    assert tail.get_xlim() == pytest.approx((1.5, 3.0)) and len(tail.lines) == 3
    low, high = tail.get_ylim()
    assert low < 0.6 < 0.9 < high and high < 1.1  # epoch 2-3 values only, not epoch 1's 1.1


def test_plot_title_names_a_time_budget():
    runs = pd.DataFrame({"seed": [0, 2], "budget_s": [1500.0, 1500.0], "epochs": [9, 8]})
    assert summary.plot_title(runs, "ogbg-molhiv") == \
        "ogbg-molhiv: 25 min per run, seeds 0,2 (n=2), mean ± std"
