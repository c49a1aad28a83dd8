"""How an ensemble averages its members (graphnorm/tasks/averaging.py)."""
import numpy as np
import pytest
import torch

from graphnorm.tasks import CLASSIFICATION, REGRESSION
from graphnorm.tasks.averaging import average_for, average_members


def test_the_mean_is_the_weighted_mean_in_both_libraries():
    preds = np.array([[[0.2], [0.9]], [[0.6], [0.5]]])  # [M=2, N=2, T=1]
    np.testing.assert_allclose(average_members(preds), [[0.4], [0.7]])
    np.testing.assert_allclose(average_members(preds, [0.25, 0.75]), [[0.5], [0.6]])
    t = average_members(torch.tensor(preds, dtype=torch.float32), torch.tensor([0.25, 0.75]))
    assert t.dtype == torch.float32
    np.testing.assert_allclose(t.numpy(), [[0.5], [0.6]], atol=1e-7)


def test_log_odds_pool_the_evidence():
    preds = np.array([[[0.5], [0.99], [0.3]], [[0.9], [0.6], [0.3]]])
    got = average_members(preds, [0.5, 0.5], "logodds")
    odds = np.sqrt(preds[0] / (1 - preds[0]) * preds[1] / (1 - preds[1]))  # geometric mean of odds
    np.testing.assert_allclose(got, odds / (1 + odds))
    assert got[2, 0] == pytest.approx(0.3)  # members that agree keep their probability
    assert got[1, 0] > average_members(preds, [0.5, 0.5])[1, 0]  # the confident member weighs more
    t = average_members(torch.tensor(preds), torch.tensor([0.5, 0.5]), "logodds")
    np.testing.assert_allclose(t.numpy(), got)
    certain = average_members(np.array([[[1.0]], [[0.0]]]), None, "logodds")  # clipped: finite
    assert certain[0, 0] == pytest.approx(0.5)


def test_regression_always_takes_the_mean_and_a_typo_is_named():
    assert average_for(CLASSIFICATION, "logodds") == "logodds"
    assert average_for(REGRESSION, "logodds") == "mean"
    with pytest.raises(ValueError, match="member average 'geo': use mean or logodds"):
        average_for(CLASSIFICATION, "geo")
