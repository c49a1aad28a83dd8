"""Pooled evidence for a default (RULE.md L): relative improvement, clipped, averaged over
tasks and seeds, with a two-stage bootstrap interval."""
import numpy as np
import pytest

from graphnorm.bench.pooled import (bounded_improvement, error_of, improvements,
                                    pooled_interval, pooled_verdict, relative_improvement)


def test_errors_and_relative_improvement():
    assert error_of("mae", 0.3) == 0.3 and error_of("rocauc", 0.9) == pytest.approx(0.1)
    assert relative_improvement(0.5, 0.4) == pytest.approx(0.2)  # 20 % less error
    assert relative_improvement(0.4, 0.5) == pytest.approx(-0.25)
    assert relative_improvement(0.1, 0.5) == -1.0  # clipped: one task cannot outweigh many
    assert relative_improvement(0.0, 0.0) == 0.0 and relative_improvement(0.0, 0.1) == -1.0
    with pytest.raises(ValueError, match="finite"):
        relative_improvement(float("nan"), 0.1)


def test_a_small_consistent_gain_is_seen_that_no_single_task_shows():
    """13 tasks x 5 seeds, each +5 % with seed noise of 10 %: the per-task paired t-rule calls
    few of them, the pooled interval lies above 0."""
    rng = np.random.default_rng(1)
    by_task = {f"t{k}": list(0.05 + 0.10 * rng.standard_normal(5)) for k in range(13)}
    t = [np.mean(v) / (np.std(v, ddof=1) / np.sqrt(5)) for v in by_task.values()]
    assert sum(x > 2.776 for x in t) <= 3  # the per-task paired rule (G) sees few of them
    interval = pooled_interval(by_task, resamples=2000)
    assert interval["low"] > 0 and pooled_verdict(interval) == "helps"
    assert interval["tasks"] == 13 and interval["pairs"] == 65


def test_no_effect_is_neutral_and_a_loss_hurts():
    rng = np.random.default_rng(2)
    noise = {f"t{k}": list(0.10 * rng.standard_normal(5)) for k in range(13)}
    assert pooled_verdict(pooled_interval(noise, resamples=2000)) == "neutral"
    worse = {t: [x - 0.08 for x in v] for t, v in noise.items()}
    assert pooled_verdict(pooled_interval(worse, resamples=2000)) == "hurts"


def test_the_mean_weighs_tasks_not_seeds_and_one_value_tasks_work():
    by_task = {"a": [0.1, 0.1, 0.1, 0.1], "b": [-0.1]}
    interval = pooled_interval(by_task, resamples=500)
    assert interval["mean"] == pytest.approx(0.0)
    assert interval["low"] == pytest.approx(-0.1) and interval["high"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="at least one"):
        pooled_interval({"a": []})


def test_the_bounded_form_is_antisymmetric_and_floors_ranking_errors():
    assert bounded_improvement(0.5, 0.4) == pytest.approx(0.2)
    assert bounded_improvement(0.4, 0.5) == pytest.approx(-0.2)  # antisymmetric, unlike L's
    assert bounded_improvement(0.0, 0.0) == 0.0 and bounded_improvement(0.0, 0.3) == -1.0
    with pytest.raises(ValueError, match=">= 0"):
        bounded_improvement(-0.1, 0.2)
    # ROC-AUC 0.99 -> 0.98: L's relative form reads a doubled error (r = -1); the floor
    # reads 0.01 against 0.1
    assert improvements("rocauc", [0.99], [0.98]) == [-1.0]
    assert improvements("rocauc", [0.99], [0.98], "bounded") == [pytest.approx(-0.1)]
    # an error above the floor is read against itself, as for MAE
    assert improvements("rocauc", [0.7], [0.76], "bounded") == [pytest.approx(0.2)]
    assert improvements("mae", [0.02], [0.01], "bounded") == [pytest.approx(0.5)]
    with pytest.raises(ValueError, match="statistic must be one of"):
        improvements("mae", [1.0], [1.0], "log")
