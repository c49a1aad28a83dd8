"""The ``--output`` CSV of ``graphnorm predict``, appended a chunk at a time.

Beside an unfinished output lies ``<output>.progress.json``: what the run predicts (input,
checkpoints, options, columns). A rerun of the same command finds it, keeps the rows
already written and skips them; a run that finishes deletes it. An output without it (a
finished run, or any other file) is written over, as before; so is a partial one of another
input, model or option set -- its rows would not answer this command.
"""
from __future__ import annotations

import csv
import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pandas as pd


def file_identity(path) -> dict:
    """Enough to notice a changed file without reading it: path, size, modification time."""
    path = Path(path).resolve()
    stat = path.stat()
    return {"path": str(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


@dataclass
class Written:
    """What an unfinished output already holds."""
    rows: int
    failed: int


class ResumableCsv:
    """``open()`` -> the rows already there (0 for a fresh start), then ``append(frame)``
    per chunk (one write each), then ``finish()``."""

    def __init__(self, path, columns: list[str], identity: dict, log=None):
        self.path = Path(path)
        self.columns = list(columns)
        self.identity = {**identity, "columns": self.columns}
        self.progress = self.path.with_name(self.path.name + ".progress.json")
        self.log = log or (lambda message: print(f"[graphnorm] {message}", file=sys.stderr))
        self.handle = None

    def open(self, keep: Optional[Callable[[int], int]] = None) -> Written:
        """Keep the rows of an unfinished run of the same command, cut back to ``keep(rows)``
        (the start of a chunk: the rest is then predicted in the same chunks, so a resumed
        output equals an uninterrupted one byte for byte), and append after them."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        done = self._resumable()
        if done is not None:
            rows = keep(done.rows) if keep is not None else done.rows
            done = self._complete_rows(stop=rows) if rows != done.rows else done
            self.handle = open(self.path, "a", encoding="utf-8", newline="")
            return done
        self._write_progress()
        self.handle = open(self.path, "w", encoding="utf-8", newline="")
        self.handle.write(self._csv(pd.DataFrame(columns=self.columns), header=True))
        self.handle.flush()
        return Written(0, 0)

    def append(self, frame: pd.DataFrame) -> None:
        # one write per chunk, flushed: an interruption leaves whole chunks, at worst one cut
        # row, which the next open() drops
        self.handle.write(self._csv(frame[self.columns], header=False))
        self.handle.flush()

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def finish(self) -> None:
        self.close()
        self.progress.unlink(missing_ok=True)

    @staticmethod
    def _csv(frame: pd.DataFrame, header: bool) -> str:
        buffer = io.StringIO()
        frame.to_csv(buffer, index=False, header=header)
        return buffer.getvalue()

    def _write_progress(self) -> None:
        tmp = self.progress.with_name(f".{self.progress.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.identity, indent=1))
        os.replace(tmp, self.progress)

    def _resumable(self) -> Optional[Written]:
        """The rows an unfinished run of this same command left, else None (start over)."""
        if not (self.path.is_file() and self.progress.is_file()):
            return None
        try:
            before = json.loads(self.progress.read_text())
        except ValueError:
            before = None
        if before != self.identity:
            self.log(f"{self.path} holds a partial run of another input, model or options: "
                     "starting over")
            return None
        written = self._complete_rows()
        if written is None:
            self.log(f"{self.path} does not start with this run's header: starting over")
        return written

    def _complete_rows(self, stop: Optional[int] = None) -> Optional[Written]:
        """Rows (and failed rows) of whole CSV records after the header, up to ``stop``
        rows; a last record cut by an interruption is dropped from the file."""
        error_at = self.columns.index("error")
        rows = failed = 0
        end = 0  # byte offset after the last whole record
        with open(self.path, "rb") as handle:
            pending, header = b"", None
            for line in handle:
                pending += line
                if pending.count(b'"') % 2 or not pending.endswith(b"\n"):
                    continue  # a quoted cell holds a newline, or the last line was cut
                record = next(csv.reader(io.StringIO(pending.decode("utf-8", "replace"))), [])
                if header is None:
                    header = record
                    if header != self.columns:
                        return None
                else:
                    if stop is not None and rows == stop:
                        break
                    rows += 1
                    failed += len(record) > error_at and record[error_at] != ""
                end += len(pending)
                pending = b""
        if header is None:
            return None
        if end != self.path.stat().st_size:
            with open(self.path, "r+b") as handle:
                handle.truncate(end)
        return Written(rows, failed)

