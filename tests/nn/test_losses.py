"""One uniformity loss, in the core, used by graph training, analysis and MAE."""
import math

import torch

from graphnorm.nn import uniformity_loss


def test_one_implementation_everywhere():
    from graphnorm import analysis
    from graphnorm.vision import mae

    assert analysis.uniformity_loss is uniformity_loss and mae.uniformity_loss is uniformity_loss


def test_values():
    same = torch.ones(4, 3)
    assert uniformity_loss(same).item() == 0.0  # all rows identical: log 1
    ortho = torch.eye(3)  # unit rows at squared distance 2
    assert math.isclose(uniformity_loss(ortho).item(), -4.0, abs_tol=1e-6)
