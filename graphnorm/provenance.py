"""Where a result came from: the code (git sha) and the host (CPU model), as ``metrics.json``
records them. Light on purpose (no torch, no Lightning): tree runs, ensembles and experiment
scripts write the same provenance without importing the training stack."""
from __future__ import annotations

import functools
import hashlib
import os
import platform
import subprocess
from pathlib import Path


def git_sha() -> str:
    """HEAD of the checkout this code came from, "+dirty" with uncommitted changes under
    graphnorm/; "unknown" outside a checkout (installed wheel)."""
    here = Path(__file__).parent
    try:
        sha = subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=here,
                                      stderr=subprocess.DEVNULL, text=True).strip()
        dirty = subprocess.check_output(["git", "status", "--porcelain", "--", "."], cwd=here,
                                        stderr=subprocess.DEVNULL, text=True).strip()
    except Exception:
        return "unknown"
    return sha + ("+dirty" if dirty else "")


def cpu_model() -> str:
    """E.g. ``AMD EPYC (2 cpus)``: timings differ between hosts, so results name theirs."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cpus)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cpus)"


@functools.lru_cache(maxsize=1)
def code_sha() -> str:
    """``git_sha()`` at this process's first run: a long benchmark keeps running the code it
    loaded even if the checkout moves on, so the sha at write time could name code that
    never ran."""
    return git_sha()


def source_sha(*files: Path) -> str:
    """16 hex of sha256 of these source files (names and bytes): what keys a cache of values
    computed by that code, so that an edit to it recomputes instead of reusing values the
    current code would not produce (a cache keyed by its inputs alone outlived a descriptor
    change once: docs/results/tdc_admet.md, session 27)."""
    h = hashlib.sha256()
    for path in sorted(Path(f) for f in files):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]
