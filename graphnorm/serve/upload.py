"""Uploaded molecule files, read from the request's bytes only (never from a path).

Formats by the file name's suffix: ``.csv``, ``.tsv``, ``.smi`` / ``.txt`` (``SMILES [name]``
per line, or a header line starting with ``smiles``), ``.sdf``; each may be ``.gz``
(decompressed up to the upload limit, so a small bomb cannot fill the memory). Rows are named as
``graphnorm predict`` names them: ``line N`` (the header is line 1), ``record N`` of an SDF. A
line that is not UTF-8 becomes that row's error; the other rows are read.
"""
from __future__ import annotations

import io
import zlib
from dataclasses import dataclass, field

import pandas as pd

TEXT_FORMATS = {".csv": ",", ".tsv": "\t", ".smi": None, ".txt": None}
FORMATS = tuple(TEXT_FORMATS) + (".sdf",)


class UploadError(ValueError):
    """The upload cannot be read at all (the message says why); answered with HTTP 422."""


@dataclass
class Upload:
    smiles: list
    labels: list  # "line 2", "record 3"
    errors: list = field(default_factory=list)  # "" or why the row cannot be read


def upload_format(name: str) -> tuple[str, bool]:
    """(format suffix, gzipped) of an uploaded file name."""
    lower = (name or "").lower()
    gz = lower.endswith(".gz")
    stem = lower[:-3] if gz else lower
    fmt = next((f for f in FORMATS if stem.endswith(f)), None)
    if fmt is None:
        raise UploadError(f"cannot read {name!r}: name the file .csv, .tsv, .smi, .txt or .sdf "
                          "(optionally .gz)")
    return fmt, gz


def gunzip(raw: bytes, limit: int, name: str) -> bytes:
    """gzip bytes decompressed, refusing more than ``limit`` bytes of output."""
    d = zlib.decompressobj(wbits=31)
    try:
        out = d.decompress(raw, limit + 1)
    except zlib.error as err:
        raise UploadError(f"{name!r} is not a readable gzip file ({err})") from None
    if len(out) > limit or d.unconsumed_tail:
        raise UploadError(f"{name!r} decompresses to more than {limit:,} bytes, the server's "
                          "upload limit; send a smaller file")
    return out


def decode_lines(raw: bytes) -> tuple[list[str], dict[int, str]]:
    """Text lines (trailing blank lines dropped) and {line number: why it is not UTF-8}."""
    bad: dict[int, str] = {}
    lines = []
    for n, line in enumerate(raw.split(b"\n"), 1):
        try:
            lines.append(line.decode("utf-8-sig" if n == 1 else "utf-8").rstrip("\r"))
        except UnicodeDecodeError as err:
            bad[n] = (f"UnicodeDecodeError: line {n} is not valid UTF-8 (byte "
                      f"0x{line[err.start]:02x} at position {err.start + 1})")
            lines.append(line.decode("utf-8", errors="replace").rstrip("\r"))
    while lines and not lines[-1].strip():
        lines.pop()
    return lines, bad


def _smiles_column(columns: list[str], wanted: str | None, name: str) -> str:
    target = (wanted or "smiles").lower()
    hits = [c for c in columns if c == wanted] or [c for c in columns if c.lower() == target]
    if not hits:
        raise UploadError(f"{name!r} has no {wanted or 'smiles'!r} column (columns: "
                          f"{', '.join(columns[:20])}); name the SMILES column, or upload .smi")
    return hits[0]


def _read_text(raw: bytes, sep: str | None, wanted: str | None, name: str) -> Upload:
    lines, bad = decode_lines(raw)
    if not lines:
        raise UploadError(f"{name!r} is empty: upload one SMILES per line, or a CSV with a "
                          "'smiles' column")
    head = lines[0].split()
    if sep is None and not (head and head[0].lower() == (wanted or "smiles").lower()):
        return Upload([(l.split() or [""])[0] for l in lines],  # no header: SMILES [name]
                      [f"line {n}" for n in range(1, len(lines) + 1)],
                      [bad.get(n, "") for n in range(1, len(lines) + 1)])
    if sep is None:  # .smi with a header: the SMILES is the first field
        smiles = [(l.split() or [""])[0] for l in lines[1:]]
    else:
        try:
            frame = pd.read_csv(io.StringIO("\n".join(lines)), sep=sep, dtype=str,
                                keep_default_na=False, skip_blank_lines=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise UploadError(f"{name!r} cannot be read as {'TSV' if sep == chr(9) else 'CSV'}: "
                              f"{err}") from None
        column = _smiles_column([str(c) for c in frame.columns], wanted, name)
        smiles = frame[column].fillna("").astype(str).tolist()
        if len(smiles) != len(lines) - 1:  # quoted cells spanning lines: row numbers
            if bad:
                raise UploadError(f"{name!r}: {next(iter(bad.values()))}; save it as UTF-8")
            return Upload(smiles, [f"row {k + 1}" for k in range(len(smiles))], [""] * len(smiles))
    if not smiles:
        raise UploadError(f"{name!r} holds a header but no molecules")
    return Upload(smiles, [f"line {k + 2}" for k in range(len(smiles))],
                  [bad.get(k + 2, "") for k in range(len(smiles))])


def _read_sdf(raw: bytes, name: str) -> Upload:
    from rdkit import Chem, rdBase

    smiles, errors = [], []
    with rdBase.BlockLogs():
        for k, mol in enumerate(Chem.ForwardSDMolSupplier(io.BytesIO(raw), sanitize=True)):
            smiles.append("" if mol is None else Chem.MolToSmiles(mol))
            errors.append(f"record {k + 1}: RDKit cannot read this molecule" if mol is None else "")
    if not smiles:
        raise UploadError(f"{name!r} holds no SDF records (molecules separated by '$$$$')")
    return Upload(smiles, [f"record {k + 1}" for k in range(len(smiles))], errors)


def read_upload(name: str, raw: bytes, limit: int, smiles_column: str | None = None) -> Upload:
    """The molecules of an uploaded file ``name`` with content ``raw`` (at most ``limit``
    bytes, also after decompression)."""
    fmt, gz = upload_format(name)
    if not raw:
        raise UploadError(f"{name!r} is empty (0 bytes)")
    if gz:
        raw = gunzip(raw, limit, name)
    if fmt == ".sdf":
        return _read_sdf(raw, name)
    return _read_text(raw, TEXT_FORMATS[fmt], smiles_column, name)
