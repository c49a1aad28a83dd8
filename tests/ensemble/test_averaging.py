"""How an ensemble averages its members: `Ensemble.combine` against hand computations, the
rule behind it (graphnorm/ensemble/averaging.py), and that nothing else averages members."""
import ast
import json
from pathlib import Path

import numpy as np
import pytest
import torch

import graphnorm
from graphnorm.ensemble import Ensemble, Member
from graphnorm.ensemble.averaging import average_for
from graphnorm.tasks import CLASSIFICATION, REGRESSION


def _ensemble(weights=None, average="mean"):
    members = [Member(Path(f"model_{k}/best.ckpt")) for k in range(2)]
    return Ensemble(members, average).weighted(weights)


def test_combine_is_the_weighted_mean_computed_by_hand():
    preds = np.array([[[0.2, 3.0], [0.9, -1.0]], [[0.6, 5.0], [0.5, 1.0]]])  # [M=2, N=2, T=2]
    assert _ensemble().combine(preds).tolist() == [[0.4, 4.0], [0.7, 0.0]]
    w = [0.25, 0.75]
    hand = [[0.25 * 0.2 + 0.75 * 0.6, 0.25 * 3.0 + 0.75 * 5.0],
            [0.25 * 0.9 + 0.75 * 0.5, 0.25 * -1.0 + 0.75 * 1.0]]
    np.testing.assert_allclose(_ensemble(w).combine(preds), hand, rtol=0, atol=1e-15)
    t = _ensemble(w).combine(torch.tensor(preds, dtype=torch.float32))  # the library given
    assert t.dtype == torch.float32
    np.testing.assert_allclose(t.numpy(), hand, atol=1e-7)
    t64 = _ensemble(w).combine(torch.tensor(preds))
    assert t64.dtype == torch.float64
    np.testing.assert_allclose(t64.numpy(), hand, rtol=0, atol=1e-15)


def test_combine_pools_weighted_log_odds_computed_by_hand():
    preds = np.array([[[0.5], [0.99], [0.3], [1.0]], [[0.9], [0.6], [0.3], [0.0]]])
    w = [0.3, 0.7]
    got = _ensemble(w, "logodds").combine(preds)
    p = np.clip(preds, 1e-6, 1 - 1e-6)  # a member's 0 or 1 stays finite
    logit = np.log(p / (1 - p))
    z = w[0] * logit[0] + w[1] * logit[1]
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-z)), rtol=0, atol=1e-12)
    assert got[2, 0] == pytest.approx(0.3)  # members that agree keep their probability
    mean = _ensemble(w).combine(preds)
    assert got[1, 0] != pytest.approx(mean[1, 0])  # not the plain mean
    t = _ensemble(w, "logodds").combine(torch.tensor(preds))
    np.testing.assert_allclose(t.numpy(), got, rtol=0, atol=1e-12)
    q = preds[:, :3]  # equal weights: the geometric mean of the odds
    odds = np.sqrt(q[0] / (1 - q[0]) * q[1] / (1 - q[1]))
    np.testing.assert_allclose(_ensemble(None, "logodds").combine(preds)[:3], odds / (1 + odds))


def test_an_ensemble_checks_its_members_and_its_rule():
    with pytest.raises(ValueError, match="predictions of 3 members for an ensemble of 2"):
        _ensemble().combine(np.zeros((3, 1, 1)))
    with pytest.raises(ValueError, match="3 member weights for 2 members"):
        _ensemble([0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="member average 'geo': use mean or logodds"):
        _ensemble(None, "geo")
    with pytest.raises(ValueError, match="give every member one, or none"):
        Ensemble([Member(Path("a"), weight=1.0), Member(Path("b"))])
    assert _ensemble(None, "logodds").for_task(REGRESSION).average == "mean"
    assert _ensemble(None, "logodds").for_task(CLASSIFICATION).average == "logodds"
    spread = Ensemble.spread(np.array([[[1.0]], [[3.0]]]))
    assert spread.tolist() == [[1.0]] and Ensemble.spread(torch.tensor([[[1.0]], [[3.0]]])).item() == 1.0


def test_regression_always_takes_the_mean_and_a_typo_is_named():
    assert average_for(CLASSIFICATION, "logodds") == "logodds"
    assert average_for(REGRESSION, "logodds") == "mean"
    with pytest.raises(ValueError, match="member average 'geo': use mean or logodds"):
        average_for(CLASSIFICATION, "geo")


def test_an_ensemble_folder_is_read_in_one_place(tmp_path):
    """ensemble.json's weights and average; old files (no average, no weights, weights that
    do not match the members) read as the plain mean; an unknown average is named."""
    from graphnorm.checkpoints import CheckpointError

    for k in range(2):
        (tmp_path / f"model_{k}").mkdir()
        (tmp_path / f"model_{k}" / "best.ckpt").write_bytes(b"")
    (tmp_path / "gbm").mkdir()
    (tmp_path / "gbm" / "gbm.json").write_text("{}")
    assert Ensemble.read(tmp_path).weights is None and Ensemble.read(tmp_path).average == "mean"
    record = {"member_weights": [0.15, 0.15, 0.7], "member_average": "logodds"}
    (tmp_path / "ensemble.json").write_text(json.dumps(record))
    ensemble = Ensemble.load(tmp_path)
    assert ensemble.weights == [0.15, 0.15, 0.7] and ensemble.average == "logodds"
    assert [m.kind for m in ensemble.members] == [None, None, "gbm"]
    assert ensemble.tree == [False, False, True]
    assert ensemble.record(tmp_path) == {
        "member_files": ["model_0/best.ckpt", "model_1/best.ckpt", "gbm/gbm.json"], **record}
    pooled = Ensemble.load([tmp_path / "model_0", tmp_path / "model_1"])  # runs pooled
    assert pooled.weights is None and pooled.average == "mean" and len(pooled) == 2
    (tmp_path / "ensemble.json").write_text(json.dumps({"member_weights": [0.5, 0.5]}))
    assert Ensemble.read(tmp_path).weights is None  # 2 weights, 3 members: equal
    (tmp_path / "ensemble.json").write_text(json.dumps({"member_average": "geometric"}))
    with pytest.raises(CheckpointError, match="ensemble.json: member average 'geometric'"):
        Ensemble.read(tmp_path)


def test_members_predictions_are_read_together_or_refused_by_name(tmp_path):
    import pandas as pd

    from graphnorm.ensemble import MemberRowsError

    def write(run, smiles, pred):
        run.mkdir()
        pd.DataFrame({"smiles": smiles, "y:t": [1.0, 2.0], "pred:t": pred}).to_csv(
            run / "predictions_val.csv.gz", index=False)
        return run / "best.ckpt"

    a, b = write(tmp_path / "a", ["C", "CC"], [0.0, 2.0]), write(tmp_path / "b", ["C", "CC"], [1.0, 3.0])
    rows, preds = Ensemble.of_files([a, b]).split_predictions("val")
    assert rows.columns.tolist() == ["smiles", "y:t"] and preds.shape == (2, 2, 1)
    c = write(tmp_path / "c", ["C", "CCC"], [0.0, 1.0])
    with pytest.raises(MemberRowsError, match="scored other molecules"):
        Ensemble.of_files([a, c]).split_predictions("val")
    with pytest.raises(FileNotFoundError, match="no test predictions"):
        Ensemble.of_files([a, b]).split_predictions("test")


def test_members_are_averaged_only_by_combine():
    """The rule (`average_members`) has one caller, `Ensemble.combine`: training, predict,
    intervals and summaries all combine through the ensemble."""
    pkg = Path(graphnorm.__file__).parent
    callers = []
    for path in sorted(pkg.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "average_members":
                callers.append(path.relative_to(pkg).as_posix())
    assert callers == ["ensemble/model.py"]
