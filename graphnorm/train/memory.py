"""The memory guard of every training run: keep freed memory in the process instead of
handing it back to the OS after every step (`hold_freed_memory`), and hand back what
fragmentation strands (`trim_heap`, `HeapTrim`).


glibc serves blocks above its mmap threshold with fresh ``mmap`` pages and unmaps them on
free, and trims the heap top when more than the trim threshold is free; both thresholds move
with the program. A training step allocates and frees much the same tensors every time, so
pages given back were faulted in (and zeroed by the kernel) again on the next step. Fixing
the mmap threshold at 32 MiB (the most glibc accepts on 64-bit) and the trim threshold at
1 GiB lets the heap keep its peak: ogbg-molhiv steps took 8 % less CPU, ZINC within noise
(experiments/results/speed/malloc.md). The process holds its peak memory, which a training
run reaches anyway. Blocks above 32 MiB are still mapped per use: hence the attention
bias's 16 MiB chunks (graph/attention_bias.py).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from typing import Optional

import lightning as L

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # <malloc.h>
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 1 << 30


def hold_freed_memory() -> bool:
    """Tune glibc's malloc as above. False, with nothing changed, off glibc or when
    ``GRAPHNORM_MALLOC=default``."""
    if os.environ.get("GRAPHNORM_MALLOC", "").lower() == "default":
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (macOS, musl, Windows)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


# Fragmentation: every batch of molecules has other shapes (the N x N distance and path
# tensors of its largest molecule), so freed blocks of one size rarely fit the next batch's,
# their pages stay resident, and a long run's memory climbs for hours (a 6 x 96 pre-training
# run passed 14 GB of heap in half an hour on a 24 GB machine). ``malloc_trim`` hands the
# free pages inside the heap back; called every few dozen steps it costs milliseconds.
# (Serving large blocks by mmap instead also keeps memory flat, but pays a page fault per
# block: it doubled a step's CPU time, most of it in the kernel.)
TRIM_EVERY = 50  # training steps between two trims


@functools.lru_cache(maxsize=None)  # opened once, not at every trim
def _libc() -> Optional[ctypes.CDLL]:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:  # musl and other C libraries: nothing to ask this way
        return None


def trim_heap() -> bool:
    """Return the heap's free pages to the system (glibc ``malloc_trim(0)``); False where
    there is no glibc to ask or nothing was returned."""
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


class HeapTrim(L.Callback):
    """Trims the heap every ``every`` optimizer steps."""

    def __init__(self, every: int = TRIM_EVERY):
        self.every = every

    def on_train_batch_end(self, trainer, *args) -> None:
        if trainer.global_step % self.every == 0:
            trim_heap()  # looked up at call time: a test may stand in for it


def heap_trim_callback(every: int = TRIM_EVERY) -> HeapTrim:
    """The training loop's heap trim (`HeapTrim`)."""
    return HeapTrim(every)
