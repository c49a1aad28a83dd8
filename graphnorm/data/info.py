"""Benchmark metadata and the sanity checks every loaded dataset must pass.

Split sizes are those of the public benchmarks:
- ZINC-subset (benchmarking-gnns, Dwivedi et al. 2020; PyG ``ZINC(subset=True)``): 10,000 /
  1,000 / 1,000 rows picked from the JT-VAE ZINC250k files.
- ZINC-full (PyG ``ZINC(subset=False)``): all JT-VAE rows, 220,011 / 24,445 / 5,000.
- ogbg-molhiv (OGB, Hu et al. 2020): 41,127 MoleculeNet HIV molecules, scaffold split
  32,901 / 4,113 / 4,113 (actives 1,232 / 81 / 130).
"""
from __future__ import annotations

from graphnorm.tasks import CLASSIFICATION, METRIC_NAMES, REGRESSION, TASK_NAMES

SPLITS = ("train", "val", "test")
TABLE_TASKS = TASK_NAMES  # own tables (train --data --task): the task registry's names
# --task auto (the default): classification when every label is 0 or 1, else regression
TASK_CHOICES = ("auto",) + TABLE_TASKS
# what a run can be scored by (train --metric; graphnorm/tasks/metrics.py scores them)
METRICS = METRIC_NAMES

# Plain dicts of str/int only: they are copied into self-describing checkpoints that are
# loaded with torch.load(weights_only=True).
DATASET_INFO: dict[str, dict] = {
    "zinc-subset": {
        "task_type": REGRESSION.stored, "metric": "mae", "vocab": "zinc", "num_tasks": 1,
        "split_sizes": {"train": 10000, "val": 1000, "test": 1000},
        "target": "penalized logP (GVAE), z-scored per term",
    },
    "zinc-full": {
        "task_type": REGRESSION.stored, "metric": "mae", "vocab": "zinc", "num_tasks": 1,
        "split_sizes": {"train": 220011, "val": 24445, "test": 5000},
        "target": "penalized logP (GVAE), z-scored per term",
    },
    "ogbg-molhiv": {
        "task_type": CLASSIFICATION.stored, "metric": "rocauc", "vocab": "ogb", "num_tasks": 1,
        "split_sizes": {"train": 32901, "val": 4113, "test": 4113},
        "target": "HIV_active (DTP AIDS antiviral screen: CM/CA = 1, CI = 0)",
    },
}

# Rows of the raw source files (checked before anything is featurized).
ZINC_ROWS = {"train": 220011, "val": 24445, "test": 5000}
MOLHIV_ROWS = 41127
MOLHIV_ACTIVES = {"train": 1232, "val": 81, "test": 130}


class DatasetError(RuntimeError):
    """Base class: the data cannot be loaded as the benchmark defines it."""


class SplitSizeError(DatasetError, ValueError):
    """A split does not have the benchmark's size (wrong or truncated source files)."""


def dataset_info(name: str) -> dict:
    """`DATASET_INFO[name]` with a helpful error for unknown names."""
    try:
        return DATASET_INFO[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; choose from {sorted(DATASET_INFO)}") from None


def check_split_sizes(name: str, sizes: dict[str, int], source: str = "") -> None:
    """Raise `SplitSizeError` unless `sizes` equals the benchmark's split sizes exactly."""
    expected = dataset_info(name)["split_sizes"]
    bad = [f"{s}: {sizes.get(s)} (expected {expected[s]})" for s in SPLITS
           if sizes.get(s) != expected[s]]
    if bad:
        where = f" from {source}" if source else ""
        raise SplitSizeError(
            f"{name}{where}: wrong split sizes: {', '.join(bad)}. The source files are "
            f"incomplete or not the benchmark's; re-download them or check the raw directory.")
