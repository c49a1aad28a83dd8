"""Progress of a long prediction: a tqdm bar with rate and ETA on a terminal (stderr), a
few plain lines in a log file, nothing for an input of one chunk."""
from __future__ import annotations

import time
from typing import Callable


class RowProgress:
    def __init__(self, total: int, initial: int, enabled: bool, chunk_rows: int,
                 log: Callable[[str], None], steps: int = 10):
        from tqdm.auto import tqdm

        from graphnorm.data.build import bar_enabled

        self.total, self.done, self.log = total, initial, log
        self.started, self.first = time.monotonic(), initial
        self.bar = None
        if bar_enabled(enabled):
            self.bar = tqdm(total=total, initial=initial, desc="predicting", unit="mol",
                            dynamic_ncols=True)
        # a log line at every tenth of the rows, when there is more than one chunk to do
        self.every = (max(1, -(-(total - initial) // steps))
                      if enabled and total - initial > chunk_rows else 0)
        self.next = initial + self.every

    def update(self, rows: int) -> None:
        self.done += rows
        if self.bar is not None:
            self.bar.update(rows)
        elif self.every and (self.done >= self.next or self.done == self.total):
            self.next = self.done + self.every - (self.done - self.first) % self.every
            rate = (self.done - self.first) / max(time.monotonic() - self.started, 1e-9)
            left = (self.total - self.done) / rate if rate > 0 else 0.0
            self.log(f"predicted {self.done:,}/{self.total:,} rows ({rate:,.0f} mol/s, "
                     f"about {_duration(left)} left)")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
