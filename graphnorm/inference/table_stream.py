"""A predict input read a chunk of rows at a time, so a table of any length fits in memory.

Rows, columns, labels and per-row problems are those of `graphnorm.data.table.read_table`
(``strict_encoding=False``), whose helpers it shares: ``line N`` of a text file (a quoted
CSV cell spanning lines is named by its first line), ``record N`` of an SDF, ``row N`` of
parquet. A line that is not UTF-8 is that row's problem; a file that cannot be read at all
raises `TableError` (for a malformed line mid-file: when the stream reaches it).
"""
from __future__ import annotations

import csv
import gzip
import io
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import pandas as pd

from graphnorm.data.table import (SMI_COLUMNS, MoleculeTable, TableError, not_utf8_message,
                                  parquet_text, pick_smiles_column, sdf_record, smi_frame,
                                  smi_header, table_format)


@dataclass
class TableChunk:
    """Consecutive rows of an input: ``start`` is the first one's 0-based data row."""
    frame: pd.DataFrame  # str cells, the input's columns
    labels: list[str]
    bad_rows: dict[int, str] = field(default_factory=dict)  # chunk row -> why unreadable
    start: int = 0

    def __len__(self) -> int:
        return len(self.frame)


@dataclass
class _Record:
    line: int  # where it starts, 1-based
    text: str
    problem: str = ""


class TableStream:
    """``columns``, ``smiles_column``, ``chunks(rows, skip)`` and ``count_rows()`` of a
    .csv/.tsv/.smi (.gz too), .sdf(.gz) or .parquet input."""

    def __init__(self, path, smiles_column: Optional[str] = None):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"input file not found: {self.path}")
        if self.path.stat().st_size == 0:
            raise TableError(f"{self.path} is empty; it needs a header line and one molecule "
                             "per line")
        self.format = table_format(self.path)
        self.gzipped = self.path.suffix.lower() == ".gz"
        self.header = ""  # text formats: the header line as read
        self.smi_columns: Optional[list[str]] = None
        self.columns = self._columns(smiles_column)
        probe = MoleculeTable(self.path, pd.DataFrame(columns=self.columns), "", [])
        probe.smiles_column = "smiles" if self.format == ".sdf" else ""
        self.smiles_column = pick_smiles_column(probe, smiles_column)
        if self.count_rows(limit=1) == 0:
            raise TableError(f"{self.path} holds no SDF records (no '$$$$' separated molecules)"
                             if self.format == ".sdf" else f"{self.path} holds no molecules"
                             if self.format == ".smi" and not self.smi_columns
                             else f"{self.path} holds a header but no molecules")

    def _open(self):
        return gzip.open(self.path, "rb") if self.gzipped else open(self.path, "rb")

    # --- columns -----------------------------------------------------------------------
    def _columns(self, smiles_column: Optional[str]) -> list[str]:
        if self.format == ".parquet":
            return [str(name) for name in _parquet_file(self.path).schema_arrow.names]
        if self.format == ".sdf":
            return _sdf_columns(self)
        lines = self._lines()
        first = next((text for _, text, _ in lines), "")
        lines.close()
        if self.format == ".smi":
            self.smi_columns = smi_header(first, smiles_column)
            return list(self.smi_columns or SMI_COLUMNS)
        if not first.strip():
            raise TableError(f"{self.path} cannot be read as {self.format[1:].upper()}: its "
                             "first line, the header, is blank")
        self.header = first
        return [str(c) for c in self._parse([]).columns]

    # --- text -------------------------------------------------------------------------
    def _lines(self) -> Iterator[tuple[int, str, str]]:
        """(line number, text, problem) of every line; a line that is not UTF-8 is read with
        replacement characters and its problem named."""
        with self._open() as handle:
            try:
                for n, raw in enumerate(handle, 1):
                    raw = raw.rstrip(b"\r\n")
                    try:
                        yield n, raw.decode("utf-8-sig" if n == 1 else "utf-8"), ""
                    except UnicodeDecodeError as err:
                        yield n, raw.decode("utf-8", errors="replace"), not_utf8_message(n, raw, err)
            except (OSError, EOFError) as err:
                raise TableError(f"{self.path} is not a readable gzip file ({err})") from err

    def _records(self) -> Iterator[_Record]:
        """Data records after the header; a CSV record whose quotes are open continues on the
        next line; blank lines count only when a record follows (trailing ones are no rows)."""
        lines = self._lines()
        if self.format != ".smi" or self.smi_columns:
            next(lines, None)  # the header
        quoted = self.format != ".smi"
        blanks: list[_Record] = []
        record: Optional[_Record] = None
        for n, text, problem in lines:
            if record is not None:  # inside a quoted cell
                record.text += "\n" + text
                record.problem = record.problem or problem
            elif not text.strip():
                blanks.append(_Record(n, text, problem))
                continue
            else:
                record = _Record(n, text, problem)
            if quoted and record.text.count('"') % 2:
                continue
            yield from blanks
            blanks.clear()
            yield record
            record = None
        if record is not None:
            yield from blanks
            yield record  # an unclosed quote: the CSV parser names it

    def _parse(self, records: list[_Record]) -> pd.DataFrame:
        if self.format == ".smi":
            return smi_frame([r.text for r in records], self.columns)
        text = "\n".join([self.header] + [r.text for r in records]) + "\n"  # a last blank row counts
        sep = "\t" if self.format == ".tsv" else ","
        try:
            # index_col=False: a chunk whose rows all have one field too many is an error,
            # not a first column silently taken for an index
            with warnings.catch_warnings():
                warnings.simplefilter("error", pd.errors.ParserWarning)
                frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False,
                                    skip_blank_lines=False, index_col=False)
        except pd.errors.ParserWarning as err:
            raise TableError(f"{self.path} cannot be read as {self.format[1:].upper()}: "
                             f"{_too_many_fields(records, sep, len(self.columns))}") from err
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise TableError(f"{self.path} cannot be read as {self.format[1:].upper()}: "
                             f"{_file_lines(str(err), records)}") from err
        if records and len(frame) != len(records):
            raise TableError(f"{self.path}: lines {records[0].line}-{records[-1].line} hold "
                             f"{len(frame)} rows for {len(records)} records; check its quoting")
        return frame.fillna("")

    def _text_chunks(self, rows: int, skip: int) -> Iterator[TableChunk]:
        batch: list[_Record] = []
        start = skip
        for k, record in enumerate(self._records()):
            if k < skip:
                continue
            batch.append(record)
            if len(batch) == rows:
                yield self._text_chunk(batch, start)
                start += len(batch)
                batch = []
        if batch:
            yield self._text_chunk(batch, start)

    def _text_chunk(self, records: list[_Record], start: int) -> TableChunk:
        bad = {k: r.problem for k, r in enumerate(records) if r.problem}
        return TableChunk(self._parse(records), [f"line {r.line}" for r in records], bad, start)

    # --- all formats ------------------------------------------------------------------
    def chunks(self, rows: int = 1000, skip: int = 0) -> Iterator[TableChunk]:
        """Chunks of up to ``rows`` rows in file order, after the first ``skip`` rows."""
        rows = max(1, int(rows))
        if self.format == ".parquet":
            return _parquet_chunks(self, rows, skip)
        if self.format == ".sdf":
            return _sdf_chunks(self, rows, skip)
        return self._text_chunks(rows, skip)

    def count_rows(self, limit: Optional[int] = None) -> int:
        """The number of data rows (a pass over the file without parsing molecules), or
        ``limit`` once that many are found."""
        if self.format == ".parquet":
            return _parquet_file(self.path).metadata.num_rows
        found = 0
        rows = (_sdf_ends(self) if self.format == ".sdf" else self._records())
        for _ in rows:
            found += 1
            if limit is not None and found >= limit:
                break
        return found


def _file_lines(message: str, records: list[_Record]) -> str:
    """The CSV parser counts lines in the chunk it was given (the header is its line 1):
    name the file's line instead."""
    def shift(m: re.Match) -> str:
        k = int(m.group(1)) - 2
        return f"line {records[k].line}" if 0 <= k < len(records) else m.group(0)

    return re.sub(r"line (\d+)", shift, message)


def _too_many_fields(records: list[_Record], sep: str, width: int) -> str:
    for r in records:
        fields = next(csv.reader(io.StringIO(r.text), delimiter=sep), [])
        if len(fields) > width:
            return f"expected {width} fields in line {r.line}, saw {len(fields)}"
    return f"a line among lines {records[0].line}-{records[-1].line} has more than {width} fields"


def _parquet_file(path: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise TableError(f"reading {path} needs pyarrow (pip install pyarrow), or save the "
                         "table as .csv") from err
    try:
        return pq.ParquetFile(path)
    except Exception as err:  # not a parquet file, truncated, ...
        raise TableError(f"{path} cannot be read as parquet: {err}") from err


def _parquet_chunks(stream: TableStream, rows: int, skip: int) -> Iterator[TableChunk]:
    """Chunks of exactly ``rows`` rows from ``skip`` on, whatever the file's batches."""
    pending, start, seen = [], skip, 0
    for batch in _parquet_file(stream.path).iter_batches(batch_size=rows):
        frame = parquet_text(batch.to_pandas())
        seen += len(frame)
        if seen <= skip:
            continue
        pending.append(frame.iloc[max(0, len(frame) - (seen - skip)):])
        held = pd.concat(pending, ignore_index=True)
        while len(held) >= rows:
            yield _parquet_chunk(held.iloc[:rows], start)
            held, start = held.iloc[rows:].reset_index(drop=True), start + rows
        pending = [held]
    if pending and len(pending[0]):
        yield _parquet_chunk(pending[0], start)


def _parquet_chunk(frame: pd.DataFrame, start: int) -> TableChunk:
    frame = frame.reset_index(drop=True)
    return TableChunk(frame, [f"row {start + k + 1}" for k in range(len(frame))], {}, start)


def _sdf_ends(stream: TableStream) -> Iterator[int]:
    """The line number where each record ends: its ``$$$$``, or the file's end for a last
    record without one (RDKit reads that too)."""
    pending = False
    with stream._open() as handle:
        for n, line in enumerate(handle, 1):
            if line.strip() == b"$$$$":
                pending = False
                yield n
            elif line.strip():
                pending = True
    if pending:
        yield n


def _sdf_columns(stream: TableStream) -> list[str]:
    """The columns read_table gives the whole file, found without parsing every molecule:
    SMILES, RDKit's own properties of the first readable record, then every data field
    (``>  <name>`` lines) in order of first appearance."""
    from rdkit import Chem, rdBase

    names: dict[str, None] = {"smiles": None}
    with stream._open() as handle, rdBase.BlockLogs():
        for k, mol in enumerate(Chem.ForwardSDMolSupplier(handle, sanitize=True)):
            if mol is not None:
                names.update(dict.fromkeys(n for n in sdf_record(mol, k)[0] if n.startswith("_")))
                break
    field_line = re.compile(rb"^>.*?<([^>]*)>")
    with stream._open() as handle:
        for line in handle:
            m = field_line.match(line) if line.startswith(b">") else None
            if m:
                names.setdefault(m.group(1).decode("utf-8", errors="replace"))
    return list(names)


def _sdf_chunks(stream: TableStream, rows: int, skip: int) -> Iterator[TableChunk]:
    from rdkit import Chem, rdBase

    with stream._open() as handle:
        for _ in range(skip):  # skipped records: past their $$$$ without parsing them
            line = handle.readline()
            while line and line.strip() != b"$$$$":
                line = handle.readline()
        records, bad, start = [], {}, skip
        with rdBase.BlockLogs():
            for k, mol in enumerate(Chem.ForwardSDMolSupplier(handle, sanitize=True), skip):
                record, why = sdf_record(mol, k)
                if why:
                    bad[len(records)] = why
                records.append(record)
                if len(records) == rows:
                    yield _sdf_chunk(stream, records, bad, start)
                    records, bad, start = [], {}, k + 1
        if records:
            yield _sdf_chunk(stream, records, bad, start)


def _sdf_chunk(stream: TableStream, records: list[dict], bad: dict, start: int) -> TableChunk:
    frame = pd.DataFrame(records, columns=stream.columns, dtype=str).fillna("")
    return TableChunk(frame, [f"record {start + k + 1}" for k in range(len(frame))], bad, start)
