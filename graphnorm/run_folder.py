"""A run folder's record: ``metrics.json``, written and read here only.

Every training run -- a graph model (`graphnorm.train.run`), a tree model
(`graphnorm.train.tree_run`) or an ensemble (`graphnorm.train.ensemble`) -- ends by writing
its result with `write_metrics`: strict JSON (NaN and infinities become null, which every
JSON reader accepts), written atomically so an interrupted write never leaves half a record
that a resumed benchmark would take for a finished run. `read_metrics` checks that a record
holds what benchmarks, summaries and boards read (its metric and that metric's val/test
values) and names the file when it does not.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

METRICS_FILE = "metrics.json"
REQUIRED = ("metric", "seed")


class RunRecordError(ValueError):
    pass


def json_safe(obj):
    """Numpy scalars -> Python numbers, NaN/inf -> None, recursively (dicts, lists)."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", 1) == 0:
        obj = obj.item()  # numpy / torch scalars
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_metrics(out: str | os.PathLike, result: dict) -> Path:
    """``out/metrics.json`` from ``result`` (strict JSON, atomic)."""
    missing = [k for k in REQUIRED if k not in result]
    if missing or f"test_{result.get('metric')}" not in result:
        raise RunRecordError(f"a run record needs {', '.join(REQUIRED)} and test_<metric>; "
                             f"missing: {', '.join(missing) or 'test_' + str(result.get('metric'))}")
    path = Path(out) / METRICS_FILE
    tmp = path.with_name(f".{METRICS_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(json_safe(result), indent=2, allow_nan=False))
    tmp.replace(path)
    return path


ENSEMBLE_FILE = "ensemble.json"


def read_member_weights(run: str | os.PathLike, members: int):
    """The member weights an ensemble folder fitted on validation (``ensemble.json``'s
    ``member_weights``, in `checkpoint_files` order), or None: equal weights (no fitted
    weights, or a list that does not match ``members``)."""
    path = Path(run) / ENSEMBLE_FILE
    try:
        weights = json.loads(path.read_text()).get("member_weights")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(weights, list) or len(weights) != members:
        return None
    return [float(w) for w in weights]


def read_metrics(run: str | os.PathLike) -> dict:
    """The record of the run folder ``run`` (or of a metrics.json path), checked."""
    path = Path(run)
    path = path if path.name == METRICS_FILE else path / METRICS_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise RunRecordError(f"cannot read run record {path} ({type(err).__name__}: {err})") from err
    metric = record.get("metric") if isinstance(record, dict) else None
    if metric is None or f"val_{metric}" not in record or f"test_{metric}" not in record:
        raise RunRecordError(f"{path} is not a finished run's record: it lacks metric, "
                             f"val_<metric> or test_<metric>")
    return record
