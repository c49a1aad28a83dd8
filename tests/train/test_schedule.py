"""graphnorm/train/schedule.py: the open-ended pre-training schedule, as a scheduler, runs
each optimizer step at `lr_at` of its step, continued from a warm start's offset."""
import math

import pytest
import torch

from graphnorm.train.schedule import lr_at, warmup_inverse_sqrt


def test_warm_up_then_inverse_square_root():
    assert lr_at(1, 1e-3, 10) == pytest.approx(1e-4)
    assert lr_at(10, 1e-3, 10) == pytest.approx(1e-3)
    assert lr_at(40, 1e-3, 10) == pytest.approx(1e-3 * math.sqrt(10 / 40))
    assert lr_at(0, 1e-3, 10) == lr_at(1, 1e-3, 10)  # step 0 reads as the first


@pytest.mark.parametrize("offset", [0, 25])
def test_the_scheduler_steps_through_lr_at_from_its_offset(offset):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=2e-3)
    sched = warmup_inverse_sqrt(opt, 2e-3, warmup_steps=10, offset=offset)
    seen = []
    for _ in range(30):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert seen == pytest.approx([lr_at(offset + k + 1, 2e-3, 10) for k in range(30)])
