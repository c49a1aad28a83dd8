"""Keep a long pre-training process's memory flat.

Every batch of molecules has other shapes (the N x N distance and path tensors of its
largest molecule), so glibc's heap fragments: freed blocks of one size rarely fit the next
batch's, their pages stay resident, and a run's memory climbs for hours (a 6 x 96 run passed
14 GB of heap in half an hour on a 24 GB machine). ``malloc_trim`` hands the free pages
inside the heap back to the system; called every few dozen steps it costs milliseconds.
Serving large blocks by ``mmap`` instead (``MALLOC_MMAP_THRESHOLD_``) also keeps memory flat,
but pays a page fault per block: it doubled a step's CPU time, most of it in the kernel.
"""
from __future__ import annotations

import ctypes
import functools
import sys
from typing import Optional

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
