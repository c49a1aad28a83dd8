"""Training runs in worker processes, shared by ``benchmark --jobs`` and ``train --ensemble
--jobs``: the function a spawned worker runs, and the guard that ends it with its parent."""
from __future__ import annotations


def train_run(cfg) -> dict:
    """One training run -- a tree model (``--model rf|gbm``) or a torch model -- and its
    result (ensembles: graphnorm/train/ensemble.py, which calls this per member; a picklable top-level
    function; torch loads in the worker). In a worker whose parent has ended, it refuses: the
    pool hands workers queued runs ahead of time, and nobody would collect their results."""
    import multiprocessing

    parent = multiprocessing.parent_process()
    if parent is not None and not parent.is_alive():
        raise RuntimeError(f"not starting {cfg.out}: the process that queued it has ended")
    from graphnorm.models import model_kind
    from graphnorm.run_folder import hold_run

    with hold_run(cfg.out):  # a second process on this folder: RunInProgress
        if model_kind(cfg.model_name).tree:  # scikit-learn / LightGBM, no Lightning
            from graphnorm.train.tree_run import train_trees

            return train_trees(cfg)
        from graphnorm.train.run import train

        return train(cfg)


def die_with_parent() -> None:
    """In a worker: ask Linux to send SIGKILL when the parent process dies, so that killing
    a benchmark (or its session ending) does not leave trainings running on the cores. Not
    SIGTERM: Lightning catches it, ends the current run, and the worker would go on with
    the runs queued to it (a run resumes from its last.ckpt, written every few steps)."""
    import ctypes
    import signal
    import sys

    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
