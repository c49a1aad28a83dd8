"""A run folder: the names of its files, and its record (``metrics.json``), written and read
here only.

A run folder (`graphnorm train --out DIR`, a benchmark's ``runs/<variant>/seed<k>``) holds
``best.ckpt`` (the best validation epoch; a tree run: its model file, graphnorm.models),
``last.ckpt`` (resumable), ``predictions_<split>.csv.gz`` (the best model's val/test
predictions), an own table's ``splits.json``, ``metrics.json``; an ensemble folder also
``model_<k>/`` per graph member and ``ensemble.json``. Modules ask for these names here.

Every training run -- a graph model (`graphnorm.train.run`), a tree model
(`graphnorm.train.tree_run`) or an ensemble (`graphnorm.train.ensemble`) -- ends by writing
its result with `write_metrics`: strict JSON (NaN and infinities become null, which every
JSON reader accepts), written atomically so an interrupted write never leaves half a record
that a resumed benchmark would take for a finished run. `read_record` reads one as a typed
`RunRecord` (metric, seed, val/test values, model) and names the file when it does not fit;
`read_metrics` also requires the validation value that benchmarks, summaries and boards read.
`refuse_overwrite` keeps a new run out of a folder that already holds a trained one;
`hold_run` keeps a second process out of a folder that one is training now.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

BEST_CHECKPOINT = "best.ckpt"  # the best validation epoch's model: what predict loads
LAST_CHECKPOINT = "last.ckpt"  # written every few steps: what --resume continues
KEPT_CHECKPOINTS = "checkpoints"  # --keep-checkpoints: every validation's, step=<k>.ckpt
SPLITS_FILE = "splits.json"  # an own table's rows per split (rerun: --split file:splits.json)
ENSEMBLE_FILE = "ensemble.json"  # an ensemble's report, member weights and average (graphnorm.ensemble)
METRICS_FILE = "metrics.json"  # the run's record: present once the run finished
MEMBER_DIRS = "model_*"  # an ensemble's graph members
REQUIRED = ("metric", "seed")


def predictions_file(split: str) -> str:
    """The file of the best model's predictions on ``split`` (val, test)."""
    return f"predictions_{split}.csv.gz"


def member_dir(k: int) -> str:
    """The folder of an ensemble's k-th graph member."""
    return f"model_{k}"


def is_finished(run: str | os.PathLike) -> bool:
    """A run folder with its record: benchmarks and ensembles skip it."""
    return (Path(run) / METRICS_FILE).is_file()


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


@dataclass(frozen=True)
class RunRecord:
    """A run's metrics.json as read: the values every reader needs, typed, and the whole
    record (``fields``: per-target scores, timing, config, ...)."""
    path: Path
    metric: str
    seed: int
    val: Optional[float]  # None: not finite (null), or no validation score (an external tool's run)
    test: Optional[float]
    model: Optional[str]  # None: a record from before the baselines (a Graphormer)
    fields: dict


def _number(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def read_record(run: str | os.PathLike) -> RunRecord:
    """The record of the run folder ``run`` (or of a metrics.json path) as a `RunRecord`;
    a RunRecordError names the file and what does not fit."""
    path = Path(run)
    path = path if path.name == METRICS_FILE else path / METRICS_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise RunRecordError(f"cannot read run record {path} ({type(err).__name__}: {err})") from err
    metric = record.get("metric") if isinstance(record, dict) else None
    if not isinstance(metric, str) or "seed" not in record or f"test_{metric}" not in record:
        raise RunRecordError(f"{path} is not a finished run's record: it lacks metric, seed "
                             f"or test_<metric>")
    val, test, seed, model = (record.get(f"val_{metric}"), record[f"test_{metric}"],
                              record["seed"], record.get("model"))
    wrong = [f"{k}={v!r}" for k, v, ok in (
        (f"val_{metric}", val, _number(val)), (f"test_{metric}", test, _number(test)),
        ("seed", seed, isinstance(seed, int) and not isinstance(seed, bool)),
        ("model", model, model is None or isinstance(model, str))) if not ok]
    if wrong:
        raise RunRecordError(f"{path}: {', '.join(wrong)} (expected numbers or null, an "
                             "integer seed and a model name)")
    return RunRecord(path, metric, seed, val, test, model, record)


def read_metrics(run: str | os.PathLike) -> dict:
    """The record of the run folder ``run`` (or of a metrics.json path), checked to hold
    its metric's val/test values, as a dict."""
    record = read_record(run)
    if f"val_{record.metric}" not in record.fields:
        raise RunRecordError(f"{record.path} is not a finished run's record: it lacks "
                             f"val_{record.metric}")
    return record.fields


def refuse_overwrite(out: Path, resume: bool) -> None:
    """A new run never overwrites a trained one: its checkpoints and log would be lost."""
    found = [n for n in (BEST_CHECKPOINT, LAST_CHECKPOINT, METRICS_FILE) if (out / n).is_file()]
    if found and not resume:
        raise FileExistsError(
            f"{out} already holds a run ({', '.join(found)}): --resume continues it; to start "
            f"over, choose another --out or delete {out}")


RUN_LOCK = ".{name}.running"  # beside the run folder: the lock of the process training it


class RunInProgress(RuntimeError):
    """Another process is training this run folder now (`hold_run`)."""


@contextlib.contextmanager
def hold_run(out: str | os.PathLike):
    """Held while a run (a single model or an ensemble) trains in ``out``: a second process
    that asks for the same folder -- two `benchmark` commands on one campaign, a `train`
    started twice -- gets `RunInProgress` naming the holder instead of writing the same
    last.ckpt and metrics.json at once. An ``flock`` on ``.<name>.running`` beside the folder
    (the folder itself is created only once the data loaded): the kernel releases it when the
    holding process ends, however it ends, so a killed run leaves no stale lock."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    if int(os.environ.get("LOCAL_RANK") or 0) or int(os.environ.get("NODE_RANK") or 0):
        yield  # a DDP rank that Lightning started: part of the run its rank 0 holds
        return
    out = Path(out)
    created = [p for p in out.parents if not p.exists()]  # deepest first
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = out.parent / RUN_LOCK.format(name=out.name)
    try:
        with open(lock, "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise RunInProgress(f"{out} is being trained by {holder}; wait for it (a "
                                    "benchmark skips it and summarizes it once finished)") from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"process {os.getpid()} on {socket.gethostname()}")
            handle.flush()
            yield
    finally:
        if created and not out.exists():  # failed before any output: leave no folder behind
            lock.unlink(missing_ok=True)
            for folder in created:
                try:
                    folder.rmdir()
                except OSError:  # not empty: someone else's now
                    break
