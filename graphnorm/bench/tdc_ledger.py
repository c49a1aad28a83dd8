"""The TDC suite's test ledger: one CSV row each time `benchmark --suite tdc-admet --final`
scores a (task, configuration) on the fixed test set (test.csv).

Why: the board's test numbers mean less the more configurations were scored on the same test
set before one was shown; the ledger is the count a reader needs to judge that. A run without
``--final`` never reads test.csv (graphnorm/data/tdc.py), so only final runs are recorded.

Rows are only ever appended: one ``write`` per row on a file opened for appending, under an
exclusive lock so that two suites never interleave rows or both write the header. A row names
the date (UTC), the code (git commit of the process), the configuration (``config_hash``:
sha256 of the runs' resolved config as canonical JSON, without the fields that say where and
with which seed a run ran, nor those at TrainConfig's default; since 2026-11-28, so the one
row before hashes its config with every field), the task, variant, seeds, metric, test mean and std over the seeds
(population std, as the board), and the task's run folder.
"""
from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
import os
from collections import Counter
from pathlib import Path
from typing import Iterable, Optional

COLUMNS = ("date_utc", "commit", "config_hash", "task", "variant", "seeds", "metric",
           "test_mean", "test_std", "run_folder")
# Where and how a run ran, not what it is: the same configuration on another machine, seed,
# cache or thread count hashes the same. (``data`` is the task's table in the cache; the row
# names the task.) Paths that name a file by content keep only their name.
RUN_FIELDS = ("seed", "split_seed", "out", "resume", "data", "raw_dir", "cache_root", "progress",
              "threads", "num_workers", "accelerator", "devices", "strategy",
              "checkpoint_every_n_steps")
PATH_FIELDS = ("admet_boosters", "init_from")
LEDGER = Path("experiments") / "results" / "tdc_admet" / "ledger.csv"


def default_ledger() -> Optional[Path]:
    """``experiments/results/tdc_admet/ledger.csv`` of the checkout this code runs from; None
    for an installed copy (then ``--final`` needs ``--ledger PATH``)."""
    root = Path(__file__).resolve().parents[2]
    return root / LEDGER if (root / ".git").exists() and (root / "experiments").is_dir() else None


def config_hash(config: dict) -> str:
    """sha256 (hex) of ``config`` (a run's ``TrainConfig.to_dict()``) as canonical JSON (sorted
    keys, no spaces) without `RUN_FIELDS` and without the settings at TrainConfig's default,
    keys of older configs read under today's names: a field added later (at its default) or a
    renamed one does not make the same configuration count twice."""
    import dataclasses

    from graphnorm.train.config import TrainConfig, fold_old_keys

    defaults = {f.name: (f.default if f.default is not dataclasses.MISSING else f.default_factory())
                for f in dataclasses.fields(TrainConfig)}
    kept = {k: v for k, v in fold_old_keys(dict(config)).items()
            if k not in RUN_FIELDS and not (k in defaults and defaults[k] == v)}
    for key in PATH_FIELDS:
        if kept.get(key):
            kept[key] = Path(str(kept[key])).name
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def ledger_rows(task: str, task_dir: Path, variants: Iterable[str], records: dict) -> list[dict]:
    """One row per variant of ``variants`` (the runs/<variant> folders scored now), over every
    seed of it with a test score. ``records``: {run folder: its metrics.json as a dict}."""
    import numpy as np

    from graphnorm.provenance import code_sha

    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    rows = []
    for variant in sorted(set(variants)):
        runs = sorted(((int(p.name.removeprefix("seed")), r) for p, r in records.items()
                       if p.parent.name == variant), key=lambda x: x[0])
        metric = runs[0][1]["metric"]
        scored = [(seed, r) for seed, r in runs if r.get(f"test_{metric}") is not None]
        test = np.array([r[f"test_{metric}"] for _, r in scored], dtype=float)
        # every seed of one configuration hashes alike; should they not, all hashes are kept
        hashes = sorted({config_hash(r["config"]) if isinstance(r.get("config"), dict)
                         else "unknown" for _, r in scored})
        rows.append({"date_utc": now, "commit": code_sha(), "config_hash": " ".join(hashes),
                     "task": task, "variant": variant,
                     "seeds": " ".join(str(seed) for seed, _ in scored), "metric": metric,
                     "test_mean": f"{test.mean():.6g}", "test_std": f"{test.std():.6g}",
                     "run_folder": str(task_dir)})
    return rows


def append_rows(path: Path, rows: list[dict]) -> None:
    """Append ``rows`` to the ledger ``path`` (created with its header when new); never
    rewrites a row already there."""
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the header check and the rows: one suite at a time
        if os.fstat(fd).st_size == 0:
            os.write(fd, _line(COLUMNS))
        for row in rows:
            os.write(fd, _line([row[c] for c in COLUMNS]))  # one write per row
    finally:
        os.close(fd)  # closing releases the lock


def _line(values) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue().encode()


def ledger_counts(path: Path) -> dict[str, dict[str, int]]:
    """Per task: ``scorings`` (ledger rows) and ``configurations`` (distinct config hash and
    variant pairs); {} for a ledger with no row or no file."""
    if not Path(path).is_file():
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    scorings = Counter(r["task"] for r in rows)
    configs = Counter(t for t, _, _ in {(r["task"], r["config_hash"], r["variant"]) for r in rows})
    return {t: {"scorings": scorings[t], "configurations": configs[t]} for t in sorted(scorings)}


def ledger_summary(path: Path) -> str:
    """The counts of `ledger_counts` as a Markdown table, with the total."""
    counts = ledger_counts(path)
    if not counts:
        return f"{path}: no test scoring recorded yet (0 rows).\n"
    lines = ["| task | test scorings | configurations |", "|---|---|---|"]
    lines += [f"| {t} | {c['scorings']} | {c['configurations']} |" for t, c in counts.items()]
    total = sum(c["scorings"] for c in counts.values())
    return f"{path}: {total} test scorings\n\n" + "\n".join(lines) + "\n"
