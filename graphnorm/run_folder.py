"""A run folder: the names of its files, and its record (``metrics.json``), written and read
here only.

A run folder (`graphnorm train --out DIR`, a benchmark's ``runs/<variant>/seed<k>``) holds
``best.ckpt`` (the best validation epoch; a tree run: its model file, graphnorm.models),
``last.ckpt`` (resumable), ``predictions_<split>.csv.gz`` (the best model's val/test
predictions), an own table's ``splits.json``, ``metrics.json``; an ensemble folder also
``model_<k>/`` per graph member and ``ensemble.json``. Modules ask for these names here.

Every training run -- a graph model (`graphnorm.train.run`), a tree model
(`graphnorm.train.tree_run`) or an ensemble (`graphnorm.train.ensemble`) -- ends by making
its typed `RunRecord` and `RunRecord.write`: the one writer of ``metrics.json``, strict JSON
(NaN and infinities become null, which every JSON reader accepts), written atomically so an
interrupted write never leaves half a record that a resumed benchmark would take for a
finished run, with the keys in one order (`KEY_ORDER`). `RunRecord.read` (`read_record`)
reads one back and names the file when it is missing, not JSON, or does not fit (metric,
integer seed, val/test numbers or null, the types of the common fields); `read_metrics`
also requires the validation value that benchmarks, summaries and boards read.
`write_metrics` writes a record given as a dict (through `RunRecord`).
`refuse_overwrite` keeps a new run out of a folder that already holds a trained one;
`hold_run` keeps a second process out of a folder that one is training now.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import socket
from dataclasses import dataclass, field
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


# metrics.json's keys in the order they are written (``val``/``test``: val_<metric>,
# test_<metric>); a kind's own keys not named here come before ``git_sha``, as given
KEY_ORDER = ("dataset", "norm", "seed", "metric", "val", "test", "per_target", "ensemble",
             "members_test", "best_epoch", "epochs", "steps", "wall_time_s", "cpu_time_s",
             "budget_s", "stopped_by", "model", "tree_member", "params", "train_graphs_per_s",
             "hardware", "tree_model", "features", "transforms", "admet_overlap", "refit",
             "init_from", "resumes", "git_sha", "data_checksum", "torch", "config")
# every training run writes these (null where a value does not apply: a tree's best epoch)
WRITTEN = ("dataset", "norm", "best_epoch", "epochs", "steps", "wall_time_s", "cpu_time_s",
           "budget_s", "stopped_by", "model", "params", "hardware", "git_sha", "data_checksum",
           "config")
# what each may hold when present (None always may): checked on read
_KINDS = {"integer": ("best_epoch", "epochs", "steps", "params"),
          "number": ("wall_time_s", "cpu_time_s", "budget_s"),
          "text": ("dataset", "norm", "stopped_by", "hardware", "git_sha", "data_checksum"),
          "mapping": ("config", "per_target")}


def _number(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _integer(value) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


_CHECK = {"integer": _integer, "number": _number,
          "text": lambda v: v is None or isinstance(v, str),
          "mapping": lambda v: v is None or isinstance(v, dict)}


@dataclass(frozen=True)
class RunRecord:
    """A run's record, ``metrics.json``: its metric's val/test values at the chosen model, and
    what the run was (data, norm, model), cost (epochs, steps, time, parameters) and came
    from (code, data, config). Every training run -- a graph model (`graphnorm.train.run`),
    a tree model (`graphnorm.train.tree_run`), an ensemble (`graphnorm.train.ensemble`) --
    makes one and ends with `write`, the one writer of the file; `read` (`read_record`) is
    its reader, which checks what the file holds and names it when it does not fit.
    ``extra``: a kind's own entries (a tree's features and refit, an ensemble's members,
    a graph model's throughput). ``fields`` is the record as a dict, as the file holds it."""
    metric: str
    seed: int
    val: Optional[float]  # None: not finite (null), or no validation score (an external tool's run)
    test: Optional[float]  # None: no test split was scored (a TDC selection run)
    model: Optional[str] = None  # None: a record from before the baselines (a Graphormer)
    dataset: Optional[str] = None
    norm: Optional[str] = None
    per_target: Optional[dict] = None  # {split: {target: scores}}; None: not written
    best_epoch: Optional[int] = None  # counted from 1; None: no epochs (trees, ensembles)
    epochs: Optional[int] = None
    steps: Optional[int] = None
    wall_time_s: Optional[float] = None
    cpu_time_s: Optional[float] = None
    budget_s: Optional[float] = None
    stopped_by: Optional[str] = None
    params: Optional[int] = None
    hardware: Optional[str] = None
    git_sha: Optional[str] = None
    data_checksum: Optional[str] = None
    config: Optional[dict] = None
    extra: dict = field(default_factory=dict)
    path: Optional[Path] = None  # the file it was read from
    read_as: Optional[dict] = field(default=None, repr=False, compare=False)  # the file, as read

    @property
    def fields(self) -> dict:
        """The record as metrics.json holds it (read: as read; else as `write` writes it,
        values not yet made strict JSON)."""
        if self.read_as is not None:
            return self.read_as
        values = {f"val_{self.metric}": self.val, f"test_{self.metric}": self.test,
                  "seed": self.seed, "metric": self.metric,
                  **{k: getattr(self, k) for k in WRITTEN},
                  **({"per_target": self.per_target} if self.per_target is not None else {})}
        values.update(self.extra)
        order = {k: i for i, k in enumerate(KEY_ORDER)}
        order.update({f"val_{self.metric}": order["val"], f"test_{self.metric}": order["test"]})
        late = order["git_sha"] - 0.5  # a kind's own keys not in KEY_ORDER: before git_sha
        return dict(sorted(values.items(), key=lambda kv: order.get(kv[0], late)))

    def write(self, out: str | os.PathLike) -> Path:
        """``out/metrics.json`` (strict JSON: NaN and infinities become null; atomic: an
        interrupted write leaves no half record that a resumed benchmark would take for a
        finished run)."""
        path = Path(out) / METRICS_FILE
        safe = json_safe(self.fields)
        RunRecord.from_fields(safe, path)  # what is written reads back
        tmp = path.with_name(f".{METRICS_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(safe, indent=2, allow_nan=False))
        tmp.replace(path)
        return path

    @classmethod
    def from_fields(cls, record, path: Optional[Path] = None) -> "RunRecord":
        """The record of a metrics.json dict, checked: RunRecordError names ``path`` (or
        says "a run record") and what does not fit."""
        where = path or "a run record"
        metric = record.get("metric") if isinstance(record, dict) else None
        if not isinstance(metric, str) or "seed" not in record or f"test_{metric}" not in record:
            raise RunRecordError(f"{where} is not a finished run's record: it lacks metric, "
                                 "seed or test_<metric>")
        val, test, seed, model = (record.get(f"val_{metric}"), record[f"test_{metric}"],
                                  record["seed"], record.get("model"))
        wrong = [f"{k}={v!r}" for k, v, ok in (
            (f"val_{metric}", val, _number(val)), (f"test_{metric}", test, _number(test)),
            ("seed", seed, _integer(seed) and seed is not None),
            ("model", model, model is None or isinstance(model, str))) if not ok]
        if wrong:
            raise RunRecordError(f"{where}: {', '.join(wrong)} (expected numbers or null, an "
                                 "integer seed and a model name)")
        wrong = [f"{k}={record[k]!r} (expected {kind})" for kind, keys in _KINDS.items()
                 for k in keys if k in record and not _CHECK[kind](record[k])]
        if wrong:
            raise RunRecordError(f"{where}: {', '.join(wrong)}")
        named = {f"val_{metric}", f"test_{metric}", "metric", "seed", "model", *WRITTEN,
                 "per_target"}
        return cls(metric, seed, val, test, model,
                   **{k: record.get(k) for k in (*WRITTEN, "per_target") if k != "model"},
                   extra={k: v for k, v in record.items() if k not in named},
                   path=path, read_as=record)

    @classmethod
    def read(cls, run: str | os.PathLike) -> "RunRecord":
        """The record of the run folder ``run`` (or of a metrics.json path); a missing,
        unreadable or ill-fitting file is a RunRecordError naming it."""
        path = Path(run)
        path = path if path.name == METRICS_FILE else path / METRICS_FILE
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise RunRecordError(f"cannot read run record {path} ({type(err).__name__}: {err})") from err
        return cls.from_fields(record, path)


def write_metrics(out: str | os.PathLike, result: dict) -> Path:
    """``out/metrics.json`` from a record given as a dict (`RunRecord.write`); the dict must
    hold metric, seed and test_<metric>."""
    missing = [k for k in REQUIRED if k not in result]
    if missing or f"test_{result.get('metric')}" not in result:
        raise RunRecordError(f"a run record needs {', '.join(REQUIRED)} and test_<metric>; "
                             f"missing: {', '.join(missing) or 'test_' + str(result.get('metric'))}")
    return RunRecord.from_fields(json_safe(result)).write(out)


def read_record(run: str | os.PathLike) -> RunRecord:
    """The record of the run folder ``run`` (or of a metrics.json path), `RunRecord.read`."""
    return RunRecord.read(run)


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
