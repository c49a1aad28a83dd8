"""Reading a user's molecule table (.csv, .tsv, .smi, .sdf, .parquet; .gz of the text ones).

One reader serves ``train --data``, ``predict --input`` and ``embed --input``
(`graphnorm.inference.table_stream` reads the same rows a chunk at a time with the helpers
here, for inputs of any length). Every row keeps
the number a user finds it under (:attr:`MoleculeTable.labels`):

- text files: ``line N``, the line number an editor shows (the header is line 1, so the first
  molecule of a CSV is line 2);
- SDF: ``record N`` (1-based); parquet: ``row N`` (1-based data rows).

Problems with the file itself (empty, no header, a missing column, not UTF-8 when training)
raise :class:`TableError`, whose message names the file and the column or line and says what
to do. Targets are checked in :func:`read_targets`.
"""
from __future__ import annotations

import gzip
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from graphnorm.tasks import resolve_task

from .info import TABLE_TASKS

FORMATS = (".csv", ".tsv", ".smi", ".sdf", ".parquet")
# cells read as a missing label (pandas' usual NA spellings, case-insensitive)
MISSING = {"", "na", "n/a", "nan", "null", "none", "-", "?"}


class TableError(ValueError):
    """The table cannot be used as given; the message names file, column or row."""


@dataclass
class MoleculeTable:
    path: Path
    frame: pd.DataFrame  # every column as str, one row per data row, in file order
    smiles_column: str
    labels: list[str]  # how the user finds each row: "line 7", "record 3", "row 2"
    bad_rows: dict[int, str] = field(default_factory=dict)  # row -> why it cannot be read
    sha256: str = ""

    @property
    def smiles(self) -> list[str]:
        return [s.strip() for s in self.frame[self.smiles_column].tolist()]

    def __len__(self) -> int:
        return len(self.frame)


def table_format(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    fmt = suffixes[-1] if suffixes else ""
    if fmt not in FORMATS:
        raise TableError(f"{path}: unknown table format {fmt or '(no suffix)'!r}; "
                         f"use one of {', '.join(FORMATS)} (text formats may be .gz)")
    return fmt


def read_table(path, smiles_column: Optional[str] = None, *, strict_encoding: bool = True,
               ) -> MoleculeTable:
    """Read ``path`` into a :class:`MoleculeTable`.

    ``smiles_column``: the column holding SMILES; by default the one named ``smiles`` (any
    case). ``strict_encoding``: a line that is not UTF-8 refuses the whole file (training);
    otherwise that row gets an entry in ``bad_rows`` and the others are read (prediction).
    """
    from .files import sha256_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    if path.stat().st_size == 0:
        raise TableError(f"{path} is empty; it needs a header line and one molecule per line")
    fmt = table_format(path)
    if fmt == ".sdf":
        table = _read_sdf(path)
    elif fmt == ".parquet":
        table = _read_parquet(path)
    else:
        table = _read_text(path, fmt, smiles_column, strict_encoding)
    if len(table.frame) == 0:
        raise TableError(f"{path} holds a header but no molecules")
    table.smiles_column = pick_smiles_column(table, smiles_column)
    table.sha256 = sha256_file(path)
    return table


def not_utf8_message(n: int, line: bytes, err: UnicodeDecodeError) -> str:
    """What a row's error says about its line ``n`` that is not UTF-8."""
    return f"line {n} is not valid UTF-8 (byte 0x{line[err.start]:02x} at position {err.start + 1})"


def _decode(path: Path, raw: bytes, strict: bool) -> tuple[str, dict[int, str]]:
    """UTF-8 text and {line number: problem} of the lines that are not UTF-8."""
    try:
        return raw.decode("utf-8-sig"), {}
    except UnicodeDecodeError:
        pass
    bad: dict[int, str] = {}
    lines = raw.split(b"\n")
    for n, line in enumerate(lines, 1):
        try:
            line.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as err:
            bad[n] = not_utf8_message(n, line, err)
    if strict:
        first = next(iter(bad.values()))
        raise TableError(f"{path} is not a UTF-8 text file: {first}"
                         f"{f', and {len(bad) - 1} more lines' if len(bad) > 1 else ''}. "
                         "Save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)")
    return raw.decode("utf-8-sig", errors="replace"), bad


def _read_text(path: Path, fmt: str, smiles_column: Optional[str], strict: bool) -> MoleculeTable:
    raw = path.read_bytes()
    if path.suffix.lower() == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise TableError(f"{path} is not a readable gzip file ({err})") from err
    text, bad_lines = _decode(path, raw, strict)
    lines = text.splitlines()
    while lines and not lines[-1].strip():  # trailing blank lines are no rows
        lines.pop()
    if not lines:
        raise TableError(f"{path} is empty (only blank lines)")
    if fmt == ".smi":
        frame, first_line = _read_smi(lines, smiles_column)
    else:
        sep = "\t" if fmt == ".tsv" else ","
        try:
            frame = pd.read_csv(io.StringIO("\n".join(lines)), sep=sep, dtype=str,
                                keep_default_na=False, skip_blank_lines=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise TableError(f"{path} cannot be read as {fmt[1:].upper()}: {err}") from err
        frame = frame.fillna("")
        first_line = 2
        _refuse_repeated_columns(path, lines[0], sep)
    # a quoted cell spanning lines breaks "row k = line k + first_line": fall back to rows
    if first_line - 1 + len(frame) == len(lines):
        labels = [f"line {first_line + k}" for k in range(len(frame))]
        bad = {k: bad_lines[first_line + k] for k in range(len(frame)) if first_line + k in bad_lines}
    else:
        labels = [f"row {k + 1}" for k in range(len(frame))]
        bad = {}
        if bad_lines:  # cannot tell which rows hold the bad lines: refuse, naming one
            raise TableError(f"{path}: {next(iter(bad_lines.values()))}; save it as UTF-8")
    return MoleculeTable(path, frame, "", labels, bad)


def _refuse_repeated_columns(path: Path, header: str, sep: str) -> None:
    """pandas renames a second ``y`` to ``y.1`` and reads it as another column: a table whose
    header names a column twice is refused instead, naming the column and its positions."""
    import csv

    names = [n.strip() for n in next(csv.reader([header], delimiter=sep))]
    for name in dict.fromkeys(names):
        where = [k + 1 for k, n in enumerate(names) if n == name]
        if len(where) > 1 and name:
            raise TableError(f"{path}: the header names column {name!r} {len(where)} times "
                             f"(columns {', '.join(map(str, where))}); give each column its "
                             "own name")


def _read_smi(lines: list[str], smiles_column: Optional[str]) -> tuple[pd.DataFrame, int]:
    """.smi: ``SMILES [name]`` per line (whitespace-separated, the name may hold spaces); a
    first line whose first field is the SMILES column's name (``smiles`` by default) is a
    header, and then every line splits into that many whitespace-separated fields."""
    head = smi_header(lines[0], smiles_column)
    if head:
        return smi_frame(lines[1:], head), 2
    return smi_frame(lines, SMI_COLUMNS), 1


SMI_COLUMNS = ["smiles", "name"]  # a .smi file without a header line


def smi_header(first_line: str, smiles_column: Optional[str]) -> Optional[list[str]]:
    """The header of a .smi file whose first line names the SMILES column, else None."""
    head = first_line.split()
    return head if head and head[0].lower() == (smiles_column or "smiles").lower() else None


def smi_frame(lines: Sequence[str], columns: list[str]) -> pd.DataFrame:
    """.smi data lines split into ``columns`` (the last field keeps its spaces)."""
    width = len(columns)
    cells = [(line.split(maxsplit=width - 1) + [""] * width)[:width] for line in lines]
    return pd.DataFrame(cells, columns=columns, dtype=str)


def sdf_record(mol, k: int) -> tuple[dict, str]:
    """(the columns of SDF record ``k`` (0-based), why it cannot be read or "")."""
    from rdkit import Chem

    if mol is None:
        return {"smiles": ""}, f"record {k + 1}: RDKit cannot read this molecule"
    props = {name: str(v) for name, v in mol.GetPropsAsDict(True, False).items()}
    return {**props, "smiles": Chem.MolToSmiles(mol)}, ""


def _read_sdf(path: Path) -> MoleculeTable:
    """SDF records: SMILES from RDKit, properties as columns; an unreadable record is a bad row."""
    from rdkit import Chem, rdBase

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    records, bad = [], {}
    with opener(path, "rb") as handle, rdBase.BlockLogs():
        for k, mol in enumerate(Chem.ForwardSDMolSupplier(handle, sanitize=True)):
            record, why = sdf_record(mol, k)
            records.append(record)
            if why:
                bad[k] = why
    if not records:
        raise TableError(f"{path} holds no SDF records (no '$$$$' separated molecules)")
    frame = pd.DataFrame(records, dtype=str).fillna("")
    frame = frame[["smiles"] + [c for c in frame.columns if c != "smiles"]]
    return MoleculeTable(path, frame, "smiles", [f"record {k + 1}" for k in range(len(frame))], bad)


def _read_parquet(path: Path) -> MoleculeTable:
    try:
        frame = pd.read_parquet(path)
    except ImportError as err:
        raise TableError(f"reading {path} needs pyarrow (pip install pyarrow), or save the "
                         "table as .csv") from err
    except Exception as err:  # not a parquet file, truncated, ...
        raise TableError(f"{path} cannot be read as parquet: {err}") from err
    return MoleculeTable(path, parquet_text(frame), "", [f"row {k + 1}" for k in range(len(frame))])


def parquet_text(frame: pd.DataFrame) -> pd.DataFrame:
    """A parquet frame as the text every other format reads: str cells, "" for missing."""
    frame = frame.astype(str).where(frame.notna(), "")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def find_column(table: MoleculeTable, name: str, flag: str) -> str:
    """The table's column called ``name`` (exact, else the only case-insensitive match)."""
    cols = [str(c) for c in table.frame.columns]
    if name in cols:
        return name
    close = [c for c in cols if c.lower() == name.lower()]
    if len(close) == 1:
        return close[0]
    raise TableError(f"{table.path}: no column {name!r}; columns found: {', '.join(cols)}. "
                     f"Name the right one with {flag}")


def pick_smiles_column(table: MoleculeTable, name: Optional[str]) -> str:
    """The SMILES column: SDF's generated one, ``name``, or the one called 'smiles'."""
    if table.smiles_column:  # SDF: generated
        return table.smiles_column
    if name:
        return find_column(table, name, "--smiles-column NAME")
    cols = [str(c) for c in table.frame.columns]
    matches = [c for c in cols if c.lower() == "smiles"]
    if matches:
        return matches[0]
    hint = ""
    if len(cols) == 1:  # one column: another separator, or no header line
        other = next((f"{c!r}" for c in (";", "\t", "|") if c in cols[0]), None)
        hint = (f" (the header looks {other}-separated: save the file comma-separated, or "
                "tab-separated as .tsv)" if other else
                " (if the file has no header line, save it as .smi)")
    raise TableError(f"{table.path}: no 'smiles' column; columns found: {', '.join(cols)}. "
                     f"Pick the SMILES column with --smiles-column NAME{hint}")


def read_targets(table: MoleculeTable, columns: Sequence[str], task: str,
                 exclude: Sequence[str] = ()) -> tuple[np.ndarray, list[str]]:
    """Targets as float32 [rows, T] (NaN = missing label) and their column names.

    ``columns`` empty: every mostly numeric column except the SMILES column and ``exclude``
    (text columns such as ids are left out). ``task``:
    "regression" or "classification" (labels must be 0 or 1).
    """
    if task not in TABLE_TASKS:
        raise TableError(f"task must be one of {', '.join(TABLE_TASKS)}, got {task!r}")
    if columns:
        names = [find_column(table, c, "--target-columns A B ...") for c in columns]
    else:
        skip = {table.smiles_column, *exclude}
        others = [str(c) for c in table.frame.columns if c not in skip]
        names = [c for c in others if _mostly_numeric(table.frame[c])]  # not ids or names
        if not names:
            why = "; ".join(f"{c!r} {_why_not_numeric(table.frame[c])}" for c in others)
            raise TableError(f"{table.path}: no numeric column besides {table.smiles_column!r} "
                             f"to learn{f' ({why})' if why else ''}. "
                             "Name the targets with --target-columns A B ...")
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise TableError(f"target columns named twice: {', '.join(dupes)}")
    out = np.full((len(table), len(names)), np.nan, dtype=np.float32)
    for j, name in enumerate(names):
        out[:, j] = _numeric_column(table, name, task)
    return out, names


def _mostly_numeric(cells: pd.Series) -> bool:
    """Most non-empty cells are numbers: a target column (its stray text is then an error),
    not an id or name column."""
    cells = cells.astype(str).str.strip()
    cells = cells[~cells.str.lower().isin(MISSING)]
    return len(cells) > 0 and pd.to_numeric(cells, errors="coerce").notna().mean() > 0.5


def _why_not_numeric(cells: pd.Series) -> str:
    cells = cells.astype(str).str.strip()
    cells = cells[~cells.str.lower().isin(MISSING)]
    if not len(cells):
        return "is empty"
    text = cells[pd.to_numeric(cells, errors="coerce").isna()]
    return f"holds text, e.g. {text.iloc[0]!r} ({len(text)} of {len(cells)} filled cells)"


def _numeric_column(table: MoleculeTable, name: str, task: str) -> np.ndarray:
    cells = table.frame[name].astype(str).str.strip()
    missing = cells.str.lower().isin(MISSING)
    values = pd.to_numeric(cells.where(~missing), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~missing.to_numpy() & ~np.isfinite(values))
    where = f"{table.path}: target column {name!r}"
    if len(bad):
        k = bad[0]
        more = f" (and {len(bad) - 1} more rows)" if len(bad) > 1 else ""
        raise TableError(f"{where} is not numeric: {table.labels[k]} holds {cells.iloc[k]!r}{more}. "
                         "Fix those cells or leave them empty (an empty cell is a missing label)")
    if np.isnan(values).all():
        raise TableError(f"{where} is entirely empty: no molecule has a label; drop it from "
                         "--target-columns")
    if resolve_task(task).binary:
        wrong = np.flatnonzero(~np.isnan(values) & ~np.isin(values, (0.0, 1.0)))
        if len(wrong):
            k = wrong[0]
            raise TableError(f"{where}: classification labels must be 0 or 1, but "
                             f"{table.labels[k]} holds {cells.iloc[k]!r}"
                             f"{f' (and {len(wrong) - 1} more rows)' if len(wrong) > 1 else ''}. "
                             "Threshold the values into 0/1, or use --task regression")
    return values
