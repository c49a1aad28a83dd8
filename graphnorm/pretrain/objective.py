"""The multi-task objective: masked per-task losses, standardized, each molecule weighing one.

For a batch of B molecules and T tasks with labels y [B, T] (NaN = not measured) and model
outputs z [B, T]:

    l_bt = BCE(z_bt, y_bt)                       binary task t
    l_bt = |z_bt - (y_bt - mu_t) / sigma_t|      regression task t (L1, standardized with the
                                                 training molecules' mean and std)
    L    = sum_b w_b * sum_{t in M_b} l_bt / |M_b|,   w_b = 1 / #{b : M_b nonempty}

where M_b are the trained tasks molecule b has labels for. Each molecule weighs the same and
shares that weight among its labels ("molecule" weighting, the default): ToxCast's ~180 labels
per molecule then count as one molecule, not as 180, and do not drown the ADME endpoints
that have one or two labels a molecule. ``weighting="label"`` averages over labels instead
(ToxCast is then 59 % of the labels seen).

L1 for regression, as the package's regression default: public ADMET tables carry outliers.
Held-out tasks are masked out of training (`TaskScaling.trained`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from graphnorm.tasks import CLASSIFICATION

from .corpus import Corpus

WEIGHTINGS = ("molecule", "label")


@dataclass
class TaskScaling:
    """Per task: whether it is binary, its training mean/std (regression; 0/1 for binary),
    and whether it is trained (held-out tasks are not)."""
    binary: torch.Tensor  # bool [T]
    mean: torch.Tensor  # float [T]
    std: torch.Tensor  # float [T]
    trained: torch.Tensor  # bool [T]

    @classmethod
    def fit(cls, corpus: Corpus, rows, held_out=(), groups=None) -> "TaskScaling":
        """Statistics of the labels of ``rows`` (the training molecules); with ``groups`` (a
        group index per task, `quantity_head.groups_of`) pooled over each group's tasks: the
        sources of one quantity, in its unit, share one mean and deviation."""
        sub = corpus.subset(rows)
        T = corpus.num_tasks
        group = np.arange(T) if groups is None else np.asarray(groups, dtype=np.int64)
        G = int(group.max()) + 1 if T else 0
        g = group[sub.task]
        count = np.bincount(g, minlength=G).astype(np.float64)
        total = np.bincount(g, weights=sub.value, minlength=G)
        squares = np.bincount(g, weights=sub.value.astype(np.float64) ** 2, minlength=G)
        mean = np.divide(total, count, out=np.zeros(G), where=count > 0)
        var = np.divide(squares, count, out=np.ones(G), where=count > 0) - mean ** 2
        std = np.sqrt(np.clip(var * count / np.maximum(count - 1, 1), 1e-12, None))
        mean, std = mean[group], std[group]
        count = np.bincount(sub.task, minlength=T).astype(np.float64)
        binary = np.array([k == CLASSIFICATION.stored for k in corpus.task_kinds])
        mean[binary], std[binary] = 0.0, 1.0
        std = np.maximum(std, 1e-6)
        trained = count > 0
        trained[list(held_out)] = False
        return cls(torch.as_tensor(binary), torch.as_tensor(mean, dtype=torch.float32),
                   torch.as_tensor(std, dtype=torch.float32), torch.as_tensor(trained))

    def to(self, device) -> "TaskScaling":
        return TaskScaling(*(getattr(self, f.name).to(device) for f in dataclasses.fields(self)))

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name).tolist() for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> "TaskScaling":
        binary, mean, std, trained = (d[f.name] for f in dataclasses.fields(cls))
        return cls(torch.tensor(binary), torch.tensor(mean, dtype=torch.float32),
                   torch.tensor(std, dtype=torch.float32), torch.tensor(trained))


def per_label_losses(z: torch.Tensor, y: torch.Tensor, scaling: TaskScaling
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """(losses [B, T] with 0 where not labelled or not trained, mask [B, T] of the counted)."""
    mask = ~y.isnan() & scaling.trained
    target = torch.where(mask, y, torch.zeros_like(y))
    standard = (target - scaling.mean) / scaling.std
    bce = F.binary_cross_entropy_with_logits(z, target.clamp(0, 1), reduction="none")
    l1 = (z - standard).abs()
    losses = torch.where(scaling.binary, bce, l1)
    return losses * mask, mask


def multitask_loss(z: torch.Tensor, y: torch.Tensor, scaling: TaskScaling,
                   weighting: str = "molecule") -> torch.Tensor:
    """The weighted loss above; 0 (with a gradient) when the batch has no trained label."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"task weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    losses, mask = per_label_losses(z, y, scaling)
    labels = mask.sum(1)
    if weighting == "label":
        return losses.sum() / labels.sum().clamp_min(1)
    have = labels > 0
    per_molecule = losses.sum(1)[have] / labels[have]
    return per_molecule.mean() if have.any() else z.sum() * 0.0
