"""Turns on the model: requests take it one slice of rows at a time, fewest slices served first.

One request on the model at a time keeps the server's memory at one featurized slice. Holding
the model for a whole request made a 1-row request wait behind a 2,000-row one for seconds;
handing it out per slice, to the request that has had the fewest slices (arrival order among
equals), lets a new small request in after the slice that is running when it comes, while
large requests share the model among themselves in turn.
"""
from __future__ import annotations

import heapq
import itertools
import threading
from contextlib import contextmanager


class SliceScheduler:
    def __init__(self):
        self._mutex = threading.Lock()
        self._waiting: list = []  # heap of (slices already served, arrival, event to wake)
        self._busy = False
        self._arrivals = itertools.count()

    @contextmanager
    def turn(self, served: int):
        """Hold the model for one slice of a request that has had ``served`` slices so far."""
        self._acquire(served)
        try:
            yield
        finally:
            self._release()

    def _acquire(self, served: int) -> None:
        with self._mutex:
            if not self._busy:
                self._busy = True
                return
            ready = threading.Event()
            heapq.heappush(self._waiting, (served, next(self._arrivals), ready))
        ready.wait()  # _release hands the turn over: _busy stays True

    def _release(self) -> None:
        with self._mutex:
            if self._waiting:
                heapq.heappop(self._waiting)[2].set()
            else:
                self._busy = False

    @property
    def waiting(self) -> int:
        with self._mutex:
            return len(self._waiting)
