"""The tree member's weight: fitted on validation, fixed, or fitted under the one-SE rule."""
import pytest
import torch

from graphnorm.train.member_weights import beats_prior, fit_tree_weight, tree_weight_rule


def test_tree_weight_rule_reads_every_spelling_and_names_a_bad_one():
    assert tree_weight_rule("equal") == (False, None)
    assert tree_weight_rule("val") == (True, None)
    assert tree_weight_rule("0.7") == (False, 0.7)
    assert tree_weight_rule("val:0.7") == (True, 0.7)
    assert tree_weight_rule("val:equal") == (True, "equal")
    for bad in ("1.5", "val:x", "heavy", "val:"):
        with pytest.raises(ValueError, match=repr(bad)):
            tree_weight_rule(bad)


def _members(n, graph_noise, tree_noise, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randn(n, 1, generator=g)
    graph = y + graph_noise * torch.randn(n, 1, generator=g)
    tree = y + tree_noise * torch.randn(n, 1, generator=g)
    return torch.stack([graph, tree]), y


def test_a_clearly_better_graph_member_moves_the_weight_off_the_prior():
    preds, y = _members(400, graph_noise=0.05, tree_noise=1.0)  # QED-like: trees far worse
    w = fit_tree_weight("rmse", preds, y, [False, True], prior=0.7)
    assert float(w[1]) <= 0.1
    assert beats_prior("rmse", preds, y, [False, True], float(w[1]), 0.7)


def test_a_small_split_that_cannot_tell_the_weights_apart_keeps_the_prior():
    # the best weight is ~0.69 (noise 0.6 vs 0.4); on 40 rows the plain fit strays from it
    for seed in (0, 3, 4):
        preds, y = _members(40, graph_noise=0.6, tree_noise=0.4, seed=seed)
        fitted = fit_tree_weight("rmse", preds, y, [False, True])
        ruled = fit_tree_weight("rmse", preds, y, [False, True], prior=0.7)
        assert float(fitted[1]) != pytest.approx(0.7)
        assert ruled.tolist() == pytest.approx([0.3, 0.7])


def test_equal_members_move_a_far_prior_to_the_middle():
    preds, y = _members(400, graph_noise=0.5, tree_noise=0.5, seed=1)
    assert fit_tree_weight("rmse", preds, y, [False, True], prior=0.9).tolist() == pytest.approx([0.5, 0.5])


def test_an_equal_prior_is_one_members_share():
    g = torch.Generator().manual_seed(2)
    y = torch.randn(40, 1, generator=g)
    four = torch.stack([y + 0.5 * torch.randn(40, 1, generator=g) for _ in range(4)])  # alike
    w = fit_tree_weight("rmse", four, y, [False, False, False, True], prior="equal")
    assert w.tolist() == pytest.approx([0.25] * 4)


def test_the_rule_holds_for_ranking_metrics_with_undefined_resamples():
    y = torch.tensor([[0.0], [1.0], [0.0], [1.0], [0.0], [1.0]])
    preds = torch.stack([y * 0.9 + 0.05, torch.full_like(y, 0.5)])  # trees: no signal
    w = fit_tree_weight("rocauc", preds, y, [False, True], prior=0.7)
    assert w.sum().item() == pytest.approx(1.0)
