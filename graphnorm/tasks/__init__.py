"""The task contract: task kinds (regression, classification) and the metrics that score them.

The one home of what a task is: the names users type and checkpoints store, target scaling,
loss, what outputs mean, the metrics with their direction and the evaluator. Everything else
asks `resolve_task` for the object instead of comparing strings. Below every package that
trains or uses models (it imports nothing from graphnorm and not torch), so data, baselines,
train, inference, explain and serve all read the same contract.
"""
from .kinds import (CLASSIFICATION, LOG10, REGRESSION, TASK_NAMES, TASKS, Task,
                    log_transform_wanted, resolve_task, target_names, target_transforms,
                    task_scored_by)
from .metrics import (HIGHER_IS_BETTER, METRIC_NAMES, METRICS, Metric, compute_metric,
                      mean_over_targets, metric_named)

__all__ = ["CLASSIFICATION", "REGRESSION", "TASK_NAMES", "TASKS", "Task", "resolve_task",
           "target_names", "task_scored_by", "HIGHER_IS_BETTER", "METRIC_NAMES", "METRICS",
           "Metric", "compute_metric", "mean_over_targets", "metric_named", "LOG10",
           "log_transform_wanted", "target_transforms"]
