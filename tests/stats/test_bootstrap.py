"""Metrics and a paired bootstrap of their difference (graphnorm/stats/bootstrap.py)."""
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import r2_score, roc_auc_score

from graphnorm.stats import bootstrap as B


def test_scores_are_the_panel_metrics_ties_included():
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.3).astype(float)
    p = np.round(y + rng.normal(0, 1, 300), 1)  # rounded: many tied scores
    assert B.score("rocauc", y, p) == pytest.approx(roc_auc_score(y, p))
    v = rng.normal(0, 1, 300)
    q = np.round(v + rng.normal(0, 0.5, 300), 1)
    assert B.score("r2", v, q) == pytest.approx(r2_score(v, q))
    assert B.score("spearman", v, q) == pytest.approx(spearmanr(v, q)[0])
    assert np.isnan(B.score("rocauc", np.ones(5), rng.random(5)))  # one class: undefined
    assert B.metric_of(True) == "rocauc" and B.metric_of(False) == "r2"
    with pytest.raises(ValueError, match="metric must be one of"):
        B.score("mae", v, q)


def test_the_paired_bootstrap_calls_better_worse_and_tied():
    rng = np.random.default_rng(1)
    y = (rng.random(200) < 0.5).astype(float)
    good, noise = y + rng.normal(0, 0.5, 200), rng.normal(0, 1, 200)
    lo, hi = B.paired_interval("rocauc", y, good, noise, np.random.default_rng(0))
    assert B.verdict(lo, hi) == "better" and 0 < lo < hi
    assert B.verdict(*B.paired_interval("rocauc", y, noise, good, np.random.default_rng(0))) == "worse"
    assert B.paired_interval("rocauc", y, good, good, np.random.default_rng(0)) == (0.0, 0.0)
    assert B.verdict(0.0, 0.0) == "tied"
    # one verdict, the reader's words: a default's pooled effect reads helps / hurts / neutral
    assert [B.verdict(*i, B.HELPS_HURTS) for i in ((0.1, 0.3), (-0.3, -0.1), (-0.1, 0.1))] == [
        "helps", "hurts", "neutral"]
    v = rng.normal(0, 1, 200)
    lo, hi = B.paired_interval("spearman", v, v + rng.normal(0, 0.3, 200), rng.normal(0, 1, 200),
                               np.random.default_rng(0))
    assert lo > 0.5
