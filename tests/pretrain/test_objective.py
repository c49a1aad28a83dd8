import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphnorm.pretrain.corpus import load_corpus
from graphnorm.pretrain.objective import TaskScaling, multitask_loss


def _scaling(binary, mean, std, trained):
    return TaskScaling(torch.tensor(binary), torch.tensor(mean), torch.tensor(std),
                       torch.tensor(trained))


def test_scaling_is_the_training_rows_statistics(tiny_corpus):
    c = load_corpus(tiny_corpus)
    rows = list(range(0, len(c), 2))
    s = TaskScaling.fit(c, rows, held_out=[3])
    logs = c.dense(rows)[:, 0]
    logs = logs[~np.isnan(logs)]
    assert float(s.mean[0]) == pytest.approx(logs.mean(), rel=1e-5)
    assert float(s.std[0]) == pytest.approx(logs.std(ddof=1), rel=1e-5)
    assert s.binary.tolist() == [False, True, True, True]
    assert float(s.mean[1]) == 0 and float(s.std[1]) == 1  # binary: not scaled
    assert s.trained.tolist() == [True, True, True, False]  # task 3 held out
    again = TaskScaling.from_dict(s.to_dict())
    assert torch.equal(again.mean, s.mean) and torch.equal(again.trained, s.trained)


def test_each_molecule_weighs_one_whatever_its_label_count():
    # molecule 0: 3 binary labels, molecule 1: one regression label
    s = _scaling([True, True, True, False], [0.0, 0, 0, 2.0], [1.0, 1, 1, 4.0],
                 [True, True, True, True])
    z = torch.tensor([[0.5, -1.0, 2.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    nan = float("nan")
    y = torch.tensor([[1.0, 0.0, 1.0, nan], [nan, nan, nan, 6.0]])
    bce = F.binary_cross_entropy_with_logits(z[0, :3], y[0, :3], reduction="none")
    l1 = abs(1.0 - (6.0 - 2.0) / 4.0)
    expected_molecule = (bce.mean() + l1) / 2
    expected_label = (bce.sum() + l1) / 4
    assert float(multitask_loss(z, y, s)) == pytest.approx(float(expected_molecule), rel=1e-6)
    assert float(multitask_loss(z, y, s, "label")) == pytest.approx(float(expected_label),
                                                                    rel=1e-6)


def test_held_out_tasks_and_missing_labels_add_nothing():
    s = _scaling([True, False], [0.0, 0.0], [1.0, 1.0], [True, False])
    z = torch.tensor([[0.3, 100.0], [0.1, -7.0]], requires_grad=True)
    nan = float("nan")
    y = torch.tensor([[1.0, 5.0], [nan, 3.0]])
    loss = multitask_loss(z, y, s)
    assert float(loss.detach()) == pytest.approx(
        float(F.binary_cross_entropy_with_logits(torch.tensor(0.3), torch.tensor(1.0))))
    loss.backward()
    assert z.grad[:, 1].abs().sum() == 0 and z.grad[1].abs().sum() == 0
    none = multitask_loss(z, torch.full_like(y, nan), s)  # no label: zero, still differentiable
    assert float(none.detach()) == 0 and none.requires_grad
    assert not math.isnan(float(none.detach()))


def test_unknown_weighting_is_refused():
    s = _scaling([True], [0.0], [1.0], [True])
    with pytest.raises(ValueError, match="weighting"):
        multitask_loss(torch.zeros(1, 1), torch.zeros(1, 1), s, "task")
