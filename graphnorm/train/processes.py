"""Training runs in worker processes, shared by ``benchmark --jobs`` and ``train --ensemble
--jobs``: the function a spawned worker runs, and the guard that ends it with its parent."""
from __future__ import annotations


def train_run(cfg) -> None:
    """One training run (a picklable top-level function; torch loads in the worker)."""
    from graphnorm.train.run import train

    train(cfg)


def die_with_parent() -> None:
    """In a worker: ask Linux to send SIGTERM when the parent process dies, so that killing
    a benchmark (or its session ending) does not leave trainings running on the cores."""
    import ctypes
    import signal
    import sys

    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
