"""The task contract (graphnorm/tasks): one registry of task kinds, resolved from any
spelling, and the metrics and evaluator every caller shares."""
import ast
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import graphnorm
from graphnorm.tasks import (CLASSIFICATION, HIGHER_IS_BETTER, REGRESSION, TASKS, compute_metric,
                             metric_named, resolve_task, task_scored_by)

PKG = Path(graphnorm.__file__).parent
# string constants that are not task names although they spell one: OpenAPI's file format
NOT_TASKS = {("serve/app.py", "binary")}


def _spelled_task_names(root: Path) -> list[str]:
    """String constants under ``root`` that spell a task name (users' or stored), outside
    the registry (tasks/)."""
    names = {spelling for t in TASKS.values() for spelling in (t.name, t.stored)}
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where.startswith("tasks/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Constant) and node.value in names
                    and (where, node.value) not in NOT_TASKS):
                found.append(f"{where}:{node.lineno} {node.value!r}")
    return found


def test_task_names_appear_only_in_the_task_registry():
    """No module spells a task's name as a string (to compare, branch or store it): each asks
    graphnorm.tasks. Prose that mentions a task (messages, docstrings) is not a name."""
    assert _spelled_task_names(PKG) == []


def test_the_registry_check_catches_a_spelled_name(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "kinds.py").write_text('NAME = "binary"\n')  # the home may
    (tmp_path / "module.py").write_text('def f(task):\n    """A regression task."""\n'
                                        '    return task["task_type"] == "binary"\n')
    assert _spelled_task_names(tmp_path) == ["module.py:3 'binary'"]


def test_every_spelling_resolves_so_old_checkpoints_load():
    assert resolve_task("classification") is CLASSIFICATION
    assert resolve_task("binary") is CLASSIFICATION  # what checkpoints and forest.json store
    assert resolve_task({"task_type": "binary", "metric": "rocauc"}) is CLASSIFICATION
    assert resolve_task("regression") is REGRESSION is resolve_task(REGRESSION)
    assert (REGRESSION.stored, CLASSIFICATION.stored) == ("regression", "binary")
    for bad in ("auto", None, "multiclass", {}):
        with pytest.raises(ValueError, match="unknown task"):
            resolve_task(bad)


def test_metrics_belong_to_one_task_and_have_a_direction():
    assert [m for t in TASKS.values() for m in t.metrics] == list(HIGHER_IS_BETTER)
    assert task_scored_by("auprc") is CLASSIFICATION and task_scored_by("mae") is REGRESSION
    assert (REGRESSION.default_metric, CLASSIFICATION.default_metric) == ("rmse", "rocauc")
    assert metric_named("mae").worst == math.inf and metric_named("rocauc").worst == 0.0
    with pytest.raises(ValueError, match="does not score a regression task"):
        REGRESSION.check_metric("rocauc")
    with pytest.raises(ValueError, match="unknown metric"):
        compute_metric("accuracy", torch.zeros(3, 1), torch.zeros(3, 1))


def test_rocauc_is_ogbs_evaluator_bit_for_bit():
    """One target without missing labels (MolHIV) scores as OGB's Evaluator did, ties included."""
    from ogb.graphproppred import Evaluator

    rng = np.random.default_rng(0)
    y = torch.from_numpy(rng.integers(0, 2, (500, 1)).astype(np.float32))
    pred = torch.from_numpy(np.round(rng.normal(size=(500, 1)), 1).astype(np.float32))  # ties
    ogb = Evaluator("ogbg-molhiv").eval({"y_true": y.numpy(), "y_pred": pred.numpy()})["rocauc"]
    assert compute_metric("rocauc", pred, y) == float(ogb)
    assert math.isnan(compute_metric("rocauc", pred, torch.ones(500, 1)))  # one class


def test_losses_scaling_and_outputs_of_each_task():
    y = torch.tensor([[1.0, float("nan")], [3.0, 2.0], [5.0, 4.0]])
    mean, std = REGRESSION.scaling(y)
    assert mean == [3.0, 3.0] and std == pytest.approx([2.0, math.sqrt(2)])
    mean, std = torch.tensor(mean), torch.tensor(std)
    raw = torch.zeros(3, 2)
    assert REGRESSION.in_units(raw, mean, std).tolist() == [[3.0, 3.0]] * 3
    expected = ((y - mean) / std)[~y.isnan()].abs().mean()
    assert REGRESSION.loss(raw, y, mean, std) == pytest.approx(float(expected))
    assert REGRESSION.loss(raw, y, mean, std, "mse") == pytest.approx(
        float((((y - mean) / std)[~y.isnan()] ** 2).mean()))
    with pytest.raises(ValueError, match="loss must be one of"):
        REGRESSION.loss(raw, y, mean, std, "huber")
    labels = torch.tensor([[1.0], [0.0], [float("nan")]])
    assert CLASSIFICATION.scaling(labels) == ([0.0], [1.0])
    logits = torch.tensor([[2.0], [-1.0], [0.0]])
    assert CLASSIFICATION.in_units(logits, 0, 1) is logits  # metrics read logits
    assert CLASSIFICATION.predictions(logits, 0, 1).tolist() == torch.sigmoid(logits).tolist()
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logits[:2], labels[:2])
    assert CLASSIFICATION.loss(logits, labels, 0, 1) == bce


def test_per_target_scores_every_metric_of_the_task():
    y = torch.tensor([[1.0, 0.0], [0.0, float("nan")], [1.0, 1.0], [0.0, 0.0]])
    p = torch.tensor([[0.9, 0.2], [0.2, 0.5], [0.6, 0.7], [0.1, 0.4]])
    out = CLASSIFICATION.per_target(p, y, ["a", "b"])
    assert list(out["a"]) == ["n", "positives", "rocauc", "auprc"]
    assert out["a"]["rocauc"] == 1.0 and out["b"]["n"] == 3 and out["b"]["positives"] == 1
    reg = REGRESSION.per_target(p, torch.tensor([[float("nan")], [1.0], [2.0], [3.0]])[:, [0, 0]])
    assert list(reg) == ["target_0", "target_1"] and list(reg["target_0"]) == ["n", "mae", "rmse", "spearman"]
    assert reg["target_0"]["mae"] == pytest.approx(np.abs(np.array([0.2, 0.6, 0.1]) - [1, 2, 3]).mean())
    assert REGRESSION.per_target(p[:, :1], torch.full((4, 1), float("nan"))) == {"target_0": {"n": 0}}
