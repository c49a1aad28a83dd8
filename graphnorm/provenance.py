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


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """E.g. ``AMD EPYC (family 25 model 1, avx2; 2 cpus)``: timings differ between hosts, so
    results name theirs. A cloud VM's model name can hide the generation and its vector
    width (session 34: the same commands took 1.4-1.9x the CPU-s on an AVX2 "AMD EPYC" that
    they took on the "AMD EPYC" before)."""
    try:
        lines = (line.split(":", 1) for line in cpuinfo.read_text().splitlines() if ":" in line)
        info = {k.strip(): v.strip() for k, v in lines}  # the last processor's, like the first
    except OSError:
        info = {}
    if "model name" not in info:
        return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cpus)"
    flags = set(info.get("flags", "").split())
    parts = ([f"family {info['cpu family']} model {info['model']}"]
             if "cpu family" in info and "model" in info else [])
    parts += [f for f in ("avx512f", "avx2", "avx", "sse4_2") if f in flags][:1]  # the widest
    detail = f"{', '.join(parts)}; " if parts else ""
    return f"{info['model name']} ({detail}{os.cpu_count()} cpus)"


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
