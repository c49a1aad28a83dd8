"""`graphnorm compare --suite tdc-admet --rule pooled`: one verdict over all tasks and seeds
(RULE.md L) beside the per-task table."""
import numpy as np
import pandas as pd
import pytest

from graphnorm.bench.tdc_versus import pooled_summary, verdict, versus_markdown


def _table(gain: float, tasks: int = 13, seeds: int = 5, seed: int = 0) -> pd.DataFrame:
    """Per task, A's and B's seed scores: ROC-AUC tasks where A has ``gain`` less error
    (relative), with seed-to-seed noise shared by both arms and some of A's own."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tasks):
        b = 0.80 + 0.05 * rng.standard_normal(seeds)  # the split's variance: in both arms
        a = 1 - (1 - b) * (1 - gain) + 0.01 * rng.standard_normal(seeds)
        said, paired = verdict(a, b, True, "pooled")
        rows.append({"task": f"t{t}", "metric": "rocauc", "score": "cross-fitted",
                     "seeds": seeds, "a_mean": a.mean(), "a_std": a.std(), "b_mean": b.mean(),
                     "b_std": b.std(), **paired, "rule": "pooled", "verdict": said,
                     "seed_list": list(range(seeds)), "a_scores": a.tolist(),
                     "b_scores": b.tolist()})
    return pd.DataFrame(rows)


def test_a_consistent_gain_helps_and_none_is_neutral():
    helped = pooled_summary(_table(0.05))
    assert helped["verdict"] == "helps" and helped["mean"] == pytest.approx(0.05, abs=0.02)
    assert helped["tasks"] == 13 and helped["pairs"] == 65
    assert pooled_summary(_table(0.0, seed=3))["verdict"] == "neutral"
    assert pooled_summary(_table(-0.08))["verdict"] == "hurts"


def test_errors_are_signed_by_the_metric():
    """On MAE a lower score is the better one: A's lower MAE is a positive r."""
    table = _table(0.05).assign(metric="mae")
    table["a_scores"] = [[0.9 * x for x in b] for b in table["b_scores"]]
    assert pooled_summary(table)["mean"] == pytest.approx(0.10)


def test_the_markdown_states_the_pooled_verdict():
    text = versus_markdown(_table(0.05), "pre", "scratch")
    assert "Pooled over 13 tasks and 65 (task, seed) pairs" in text and "**helps**" in text
    assert "Pooled" not in versus_markdown(_table(0.05).assign(rule="paired"), "a", "b")
