"""``graphnorm predict`` at screening scale: the input is read, predicted and written a chunk
of rows at a time, so memory does not grow with the number of rows.

With ``jobs`` > 1 the chunks are predicted (featurized, then every member run) in worker
processes, a bounded number ahead of the writer, and written in input order. Each chunk is
computed by `Predictor.predict_rows` wherever it runs, so the output does not depend on
``jobs``; it depends on the chunk size only through batching (float32 rounding, ~1e-6).
"""
from __future__ import annotations

import hashlib
import signal
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence

import pandas as pd

from graphnorm.inference.predict import (Predictor, RowPredictions, extrapolation_message,
                                         join_input_columns, row_errors)
from graphnorm.inference.table_stream import TableChunk, TableStream

CHUNK_ROWS = 1000  # rows read, predicted and written at a time (and lost at most on a crash)
SHOWN_WARNINGS = 5


class SmilesList:
    """``--smiles`` as a source shaped like `TableStream`: one ``smiles`` column."""

    def __init__(self, smiles: Sequence[str]):
        self.smiles = list(smiles)
        self.columns, self.smiles_column = ["smiles"], "smiles"

    def count_rows(self) -> int:
        return len(self.smiles)

    def chunks(self, rows: int, skip: int = 0) -> Iterator[TableChunk]:
        for start in range(skip, len(self.smiles), rows):
            part = self.smiles[start:start + rows]
            yield TableChunk(pd.DataFrame({"smiles": part}, dtype=str),
                             [f"argument {start + k + 1}" for k in range(len(part))], {}, start)

    def identity(self) -> dict:
        return {"smiles_sha256": hashlib.sha256("\n".join(self.smiles).encode()).hexdigest()}


def source_identity(source) -> dict:
    from graphnorm.inference.resumable_csv import file_identity

    if isinstance(source, TableStream):
        return {**file_identity(source.path), "smiles_column": source.smiles_column}
    return source.identity()


@dataclass
class StreamSummary:
    rows: int = 0  # in the output, resumed ones included
    failed: int = 0
    resumed: int = 0  # rows an earlier, interrupted run had written
    warned: int = 0  # rows with an extrapolation flag (this run's)
    shown: list = field(default_factory=list)  # (label, SMILES, flag) of the first few

    @property
    def warning(self) -> str:
        return extrapolation_message(self.shown, self.warned) if self.warned else ""


class ChunkWriter:
    """Everything after the models for one chunk: intervals or calibration (fitted once),
    the input's columns, the output's column order."""

    def __init__(self, predictor: Predictor, sources: Sequence, interval: Optional[float] = None,
                 calibrate: Optional[str] = None):
        self.predictor = predictor
        self.halfwidths = predictor.interval_halfwidths(interval) if interval is not None else None
        self.calibrators = predictor.calibrators(calibrate) if calibrate else None
        # the order pd.concat gives the sources' frames: first seen, first placed
        empty = RowPredictions(*[pd.DataFrame(columns=predictor.columns).to_numpy(float)] * 2, [], [])
        names: dict[str, None] = {}
        for source in sources:
            chunk = TableChunk(pd.DataFrame(columns=source.columns, dtype=str), [])
            names.update(dict.fromkeys(self.frame(chunk, [], empty).columns))
        self.columns = list(names)

    def frame(self, chunk: TableChunk, smiles: list[str], rows: RowPredictions) -> pd.DataFrame:
        df = self.predictor.prediction_frame(smiles, rows)
        if self.halfwidths is not None:
            df = self.predictor.with_intervals(df, self.halfwidths)
        if self.calibrators is not None:
            df = self.predictor.with_calibration(df, self.calibrators)
        return join_input_columns(chunk, df)


class StdoutCsv:
    """The output when there is no ``--output``: the same chunks, nothing to resume."""

    def __init__(self, columns: list[str]):
        self.columns = columns

    def open(self, keep: Optional[Callable[[int], int]] = None):
        from graphnorm.inference.resumable_csv import Written

        pd.DataFrame(columns=self.columns).to_csv(sys.stdout, index=False)
        return Written(0, 0)

    def append(self, frame: pd.DataFrame) -> None:
        frame[self.columns].to_csv(sys.stdout, index=False, header=False)
        sys.stdout.flush()

    def close(self) -> None:
        pass

    finish = close


def predict_stream(predictor: Predictor, sources: Sequence, writer: ChunkWriter, sink,
                   jobs: int = 1, chunk_rows: int = CHUNK_ROWS, progress: bool = False,
                   log: Optional[Callable[[str], None]] = None) -> StreamSummary:
    """Predict every row of ``sources`` (in order) into ``sink`` (`ResumableCsv` or
    `StdoutCsv`), resuming after the rows an interrupted run of the same command wrote."""
    from graphnorm.inference.progress import RowProgress

    log = log or (lambda message: print(f"[graphnorm] {message}", file=sys.stderr, flush=True))
    lengths = [s.count_rows() for s in sources]
    done = sink.open(keep=lambda rows: _chunk_start(rows, lengths, chunk_rows))
    summary = StreamSummary(rows=done.rows, failed=done.failed, resumed=done.rows)
    if done.rows:
        log(f"resuming: {done.rows:,} rows of an interrupted run are already in {sink.path}; "
            "predicting the rest (delete it to start over)")
    work = _chunks(sources, lengths, chunk_rows, done.rows)
    bar = RowProgress(sum(lengths), done.rows, progress, chunk_rows, log)
    try:
        for chunk, smiles, rows in _predicted(predictor, work, jobs):
            sink.append(writer.frame(chunk, smiles, rows).reindex(columns=writer.columns))
            summary.rows += len(chunk)
            summary.failed += sum(1 for e in rows.errors if e)
            for k, flag in enumerate(rows.flags):
                if flag:
                    summary.warned += 1
                    if len(summary.shown) < SHOWN_WARNINGS:
                        summary.shown.append((chunk.labels[k], smiles[k], flag))
            bar.update(len(chunk))
    except BaseException as err:  # what was appended stays, closed, for a rerun to resume
        sink.close()
        if isinstance(err, KeyboardInterrupt) and getattr(sink, "path", None) is not None:
            log(f"interrupted: {summary.rows:,} rows are in {sink.path}; run the same command "
                "again to predict the rest")
        raise
    finally:
        bar.close()
    sink.finish()
    return summary


def _chunk_start(rows: int, lengths: list[int], chunk_rows: int) -> int:
    """The start of the chunk holding row ``rows`` (chunks restart with each source)."""
    offset = 0
    for n in lengths:
        if rows < offset + n:
            return offset + (rows - offset) // chunk_rows * chunk_rows
        offset += n
    return rows


def _chunks(sources: Sequence, lengths: list[int], chunk_rows: int, skip: int):
    """(chunk, stripped SMILES, pre-set errors) of every source after ``skip`` rows."""
    for source, n in zip(sources, lengths):
        if skip >= n:
            skip -= n
            continue
        for chunk in source.chunks(chunk_rows, skip):
            smiles = [s.strip() for s in chunk.frame[source.smiles_column].tolist()]
            yield chunk, smiles, row_errors(chunk.bad_rows, len(chunk))
        skip = 0


_WORKER: Optional[Predictor] = None  # a worker process's copy of the predictor


def _start_worker(predictor: Predictor) -> None:
    import torch

    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    torch.set_num_threads(1)  # one process per core
    _WORKER = predictor


def _predict_in_worker(smiles: list[str], errors: list[str]) -> RowPredictions:
    return _WORKER.predict_rows(smiles, errors)


def _predicted(predictor: Predictor, work: Iterator, jobs: int):
    """(chunk, SMILES, RowPredictions) in input order; with ``jobs`` > 1 computed by worker
    processes, at most 2 x jobs chunks ahead of the caller (bounded memory)."""
    if jobs <= 1:
        for chunk, smiles, errors in work:
            yield chunk, smiles, predictor.predict_rows(smiles, errors)
        return
    from concurrent.futures import ProcessPoolExecutor

    from graphnorm.chem.featurize import _pool_context

    # fork (Linux): the workers inherit the loaded models instead of loading them again
    pool = ProcessPoolExecutor(jobs, mp_context=_pool_context(), initializer=_start_worker,
                               initargs=(predictor,))
    window: deque = deque()
    try:
        for chunk, smiles, errors in work:
            window.append((chunk, smiles, pool.submit(_predict_in_worker, smiles, errors)))
            if len(window) >= 2 * jobs:
                chunk, smiles, future = window.popleft()
                yield chunk, smiles, future.result()
        while window:
            chunk, smiles, future = window.popleft()
            yield chunk, smiles, future.result()
    finally:  # interrupted or failed: drop the queued chunks, let the running ones end
        pool.shutdown(wait=True, cancel_futures=True)

