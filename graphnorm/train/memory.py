"""Keep freed memory in the process instead of handing it back to the OS after every step.

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
import os

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
