"""Keep a long pre-training process's memory flat.

Every batch of molecules has other shapes (the N x N distance and path tensors of its
largest molecule), so glibc's heap fragments: freed blocks of one size rarely fit the next
batch's, and a run's resident memory climbs for hours (a 6 x 96 run passed 14 GB of heap
in half an hour on a 24 GB machine). Serving every allocation above a few hundred kB with
its own ``mmap`` returns it to the system when freed, at the cost of a page fault per block.
"""
from __future__ import annotations

import ctypes
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
LARGE_BLOCK = 256 * 1024  # bytes: a batch's big tensors are above it, Python's objects below


def return_large_blocks(threshold: int = LARGE_BLOCK) -> bool:
    """Ask glibc to ``mmap`` allocations above ``threshold`` bytes (what the environment
    variable ``MALLOC_MMAP_THRESHOLD_`` sets); False where there is no glibc to ask."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # musl and other C libraries: nothing to tune this way
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, int(threshold)))
