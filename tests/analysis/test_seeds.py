"""`graphnorm analyze --bench` (graphnorm/analysis/seeds.py): every finished run of a
benchmark, per variant over seeds and paired against ln."""
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.analysis.seeds import analyze_benchmark, paired_vs_ln
from graphnorm.cli import main


@pytest.fixture(scope="module")
def bench_report(real_bench, raw_dir, cache_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("seeds")
    bench = real_bench[0]
    return bench, out, analyze_benchmark(bench, out, raw_dir=str(raw_dir), limit=60)


def test_every_run_is_analyzed_with_its_singular_values(bench_report, raw_dir):
    """The JSON carries each run's report as `graphnorm analyze` computes it for that
    checkpoint alone, singular values included."""
    bench, out, report = bench_report
    assert sorted(report["runs"]) == ["ln seed 0", "ln seed 1", "sep:bn+ln seed 0", "sep:bn+ln seed 1"]
    saved = json.loads((out / "analysis.json").read_text())
    assert saved["graphs"] == 60 and saved["dataset"] == "zinc-subset"
    one = saved["runs"]["sep:bn+ln seed 1"]
    assert one["checkpoint"].endswith("runs/sep-bn-ln/seed1/best.ckpt")
    sv = np.array(one["vnode"]["singular_values"])
    assert len(sv) == one["vnode"]["dim"] and np.all(np.diff(sv) <= 1e-9)
    assert one["vnode"]["spectrum"] == pytest.approx(list(sv / sv[0]))

    from graphnorm.analysis.analyze import analyze

    alone = analyze(one["checkpoint"], "zinc-subset", out / "alone", raw_dir=str(raw_dir), limit=60)
    (ref,) = alone["runs"].values()
    assert one["vnode"]["uniformity"] == pytest.approx(ref["vnode"]["uniformity"])
    assert sv == pytest.approx(ref["vnode"]["singular_values"])
    metrics = json.loads((bench / "runs" / "sep-bn-ln" / "seed1" / "metrics.json").read_text())
    assert one["test_mae"] == pytest.approx(metrics["test_mae"])


def test_summary_pairs_each_seed_with_ln(bench_report):
    _, out, _ = bench_report
    table = pd.read_csv(out / "per_seed.csv")
    assert len(table) == 4 and {"vnode_uniformity", "tokens_ev_1", "test_mae"} <= set(table)
    t = table.set_index(["variant", "seed"])
    diffs = [t.loc[("sep:bn+ln", s), "vnode_ev_1"] - t.loc[("ln", s), "vnode_ev_1"] for s in (0, 1)]
    p = paired_vs_ln(table, "sep:bn+ln", "vnode_ev_1")
    assert p["paired_seeds"] == 2 and p["paired_diff_mean"] == pytest.approx(np.mean(diffs))
    assert p["paired_wins"] == sum(d < 0 for d in diffs)
    higher = paired_vs_ln(table, "sep:bn+ln", "vnode_ev_1", higher_is_better=True)
    assert higher["paired_wins"] == 2 - p["paired_wins"]
    md = (out / "summary.md").read_text()
    assert "| `ln` | 2 |" in md and "`sep:bn+ln` [VNode] ev_1:" in md and "95% CI" in md
    for kind in ("vnode", "tokens"):
        assert (out / f"spectrum_{kind}.png").stat().st_size > 0


def test_cli_analyzes_a_benchmark_and_wants_one_source(real_bench, raw_dir, tmp_path):
    bench = real_bench[0]
    assert main(["analyze", "--bench", str(bench), "--raw-dir", str(raw_dir), "--limit", "20",
                 "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "analysis.json").read_text())["graphs"] == 20
    assert main(["analyze", "--out", str(tmp_path)]) == 2  # neither --checkpoint nor --bench
    assert main(["analyze", "--bench", str(bench), "--checkpoint", "x.ckpt", "--out", "o"]) == 2
    assert main(["analyze", "--bench", str(bench), "--compare", "x.ckpt", "--out", "o"]) == 2


def test_one_seed_shows_no_spread(bench_report):
    """A variant with one seed has no standard deviation: its cells and its paired line show
    the value alone, not '± 0.000'."""
    from graphnorm.analysis.seeds import to_markdown

    _, out, report = bench_report
    table = pd.read_csv(out / "per_seed.csv")
    md = to_markdown(table[table.seed == 0], report)
    row = next(line for line in md.splitlines() if line.startswith("| `sep:bn+ln` | 1 |"))
    ev_1 = table.set_index(["variant", "seed"]).loc[("sep:bn+ln", 0), "vnode_ev_1"]
    assert f"| {ev_1:.3f} |" in row and "±" not in row
    paired = next(line for line in md.splitlines() if "[VNode] ev_1:" in line)
    assert "±" not in paired and "(n=1)" in paired and "CI" not in paired
