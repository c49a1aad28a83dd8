"""The task kinds (regression, classification) and the resolver from their names.

A `Task` says everything that differs between fitting numbers and fitting 0/1 labels: the
name users type (``--task``), the name stored in checkpoints and dataset info (``task_type``;
classification is stored as "binary", as every checkpoint so far has it), how targets are
scaled, the loss, what the model's output means, which metrics score it and the default one.
Code asks a task object instead of comparing strings; `resolve_task` turns any spelling
(either name, or a task dict with ``task_type``) into the object, so old checkpoints load.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Union

from .metrics import METRICS, target_columns


@dataclass(frozen=True)
class Task:
    name: str  # what users type: train --task, hpopt, table reports
    stored: str  # task_type in checkpoints, DATASET_INFO and tree model files
    binary: bool  # 0/1 labels, trained on logits (BCE), predicted as probabilities
    metrics: tuple[str, ...]  # the metrics that score it (a --metric must be one)
    default_metric: str  # a table's metric when --metric is not given
    losses: tuple[str, ...] = ()  # train --loss choices, the default first (binary: BCE only)

    def check_metric(self, metric: str) -> None:
        """A clear error for a metric that does not score this task."""
        if metric not in self.metrics:
            raise ValueError(f"--metric {metric!r} does not score a {self.name} task; choose "
                             f"from {', '.join(self.metrics)}")

    def scaling(self, ys, transforms=None) -> tuple[list[float], list[float]]:
        """Per-target (mean, std) of training labels ys [N, T] for regression (missing labels
        ignored; std floored at 1e-6), of log10(y) where ``transforms`` says "log10";
        binary targets are not scaled (0, 1)."""
        if self.binary:
            return [0.0] * ys.shape[1], [1.0] * ys.shape[1]
        means, stds = [], []
        for col in _fitted_units(ys, transforms).T:
            have = col[~col.isnan()]
            means.append(float(have.mean()) if have.numel() else 0.0)
            stds.append(float(have.std().clamp_min(1e-6)) if have.numel() > 1 else 1.0)
        return means, stds

    def loss(self, raw, y, mean, std, loss: Optional[str] = None, transforms=None):
        """Regression: L1 (or ``loss="mse"``: squared error, what RMSE scores) on standardized
        targets (log10 units where ``transforms`` says so); binary: BCE on logits. ``raw``:
        model output; missing labels (NaN, as OGB marks them) are left out."""
        import torch.nn.functional as F

        valid = ~y.isnan()
        if self.binary:
            return F.binary_cross_entropy_with_logits(raw[valid], y[valid])
        loss = loss or self.losses[0]
        if loss not in self.losses:
            raise ValueError(f"{self.name} loss must be one of {self.losses}, got {loss!r}")
        fn = F.l1_loss if loss == "l1" else F.mse_loss
        return fn(raw[valid], ((_fitted_units(y, transforms) - mean) / std)[valid])

    def in_units(self, raw, mean, std, transforms=None):
        """Model output in target units (regression; 10**x back from log10 units where
        ``transforms`` says so) or logits (binary): what metrics read."""
        if self.binary:
            return raw
        out = raw * std + mean
        logged = _logged(transforms, out)
        if logged is None:
            return out
        import torch

        return torch.where(logged, 10.0 ** out, out)

    def predictions(self, raw, mean, std, transforms=None):
        """What users get: target units (regression) or probabilities (binary)."""
        return raw.sigmoid() if self.binary else self.in_units(raw, mean, std, transforms)

    def per_target(self, pred, target, names: Optional[Sequence[str]] = None) -> dict[str, dict]:
        """{target name: {"n": labelled rows, "mae", "rmse", "spearman"} or {"n", "positives",
        "rocauc", "auprc"}}: every metric of the task, per target."""
        out = {}
        for j, (p, t) in enumerate(target_columns(pred, target)):
            entry: dict = {"n": int(t.size)}
            if t.size and self.binary:
                entry["positives"] = int(t.sum())
            for metric in (self.metrics if t.size else ()):
                entry[metric] = METRICS[metric].score(p, t)
            out[names[j] if names else f"target_{j}"] = entry
        return out


REGRESSION = Task("regression", "regression", binary=False, metrics=("mae", "rmse", "spearman"),
                  default_metric="rmse", losses=("l1", "mse"))
CLASSIFICATION = Task("classification", "binary", binary=True, metrics=("rocauc", "auprc"),
                      default_metric="rocauc")
TASKS: dict[str, Task] = {t.name: t for t in (REGRESSION, CLASSIFICATION)}
TASK_NAMES = tuple(TASKS)  # what users type (train --task)
_SPELLINGS = {**TASKS, **{t.stored: t for t in TASKS.values()}}


LOG10 = "log10"


def log_transform_wanted(y) -> bool:
    """A positive target whose raw units are right-skewed (skewness > 2: a few huge values
    would dominate the loss, e.g. half-life in hours) is fitted as log10; one rule for the
    graph models and the boosted trees."""
    import numpy as np
    from scipy.stats import skew

    y = np.asarray(y, dtype=float)
    y = y[~np.isnan(y)]
    return len(y) > 2 and bool((y > 0).all()) and float(skew(y)) > 2.0


def target_transforms(task: "Task", ys) -> Optional[list]:
    """Per target "log10" or None, from the training labels ys [N, T] (`log_transform_wanted`);
    None when no target is transformed (and for classification)."""
    if task.binary:
        return None
    out = [LOG10 if log_transform_wanted(ys[:, j]) else None for j in range(ys.shape[1])]
    return out if any(out) else None


def _logged(transforms, like):
    """bool [T] of the log10 targets, on ``like``'s device; None when there are none."""
    if not transforms or not any(t == LOG10 for t in transforms):
        return None
    import torch

    return torch.tensor([t == LOG10 for t in transforms], device=like.device)


def _fitted_units(y, transforms):
    """Labels in the units the model is fitted in: log10 where ``transforms`` says so (a
    non-positive label there becomes NaN, left out like a missing one)."""
    logged = _logged(transforms, y)
    if logged is None:
        return y
    import torch

    return torch.where(logged, torch.log10(y.where(y > 0, torch.nan)), y)


def resolve_task(task: Union[Task, str, Mapping]) -> Task:
    """The task object of a name users type ("classification"), a stored name ("binary", as
    checkpoints and DATASET_INFO hold it), a task dict (its ``task_type``) or a Task."""
    if isinstance(task, Task):
        return task
    name = task.get("task_type") if isinstance(task, Mapping) else task
    try:
        return _SPELLINGS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown task {name!r}; choose from {', '.join(TASK_NAMES)}") from None


def task_scored_by(metric: str) -> Task:
    """The task a metric scores (TDC names its tasks' metrics, not their kinds)."""
    for task in TASKS.values():
        if metric in task.metrics:
            return task
    raise ValueError(f"unknown metric {metric!r}; expected one of {sorted(METRICS)}")


def target_names(task: Mapping) -> list[str]:
    """A task dict's target names; tasks without names (benchmarks, checkpoint format 1) give
    one ``prediction`` column per target (``prediction``, ``prediction_1``, ...)."""
    names = task.get("targets")
    if names:
        return list(names)
    n = int(task.get("num_tasks", 1))
    return ["prediction"] + [f"prediction_{k}" for k in range(1, n)]
