"""The offline raw directory: finding, checking, hashing and reading the source files.

Layout (as in the project's offline mirror, see data/README.md)::

    <raw_dir>/zinc/jtvae_train.txt.gz   220,011 SMILES, one a line (JT-VAE ZINC250k train)
    <raw_dir>/zinc/jtvae_valid.txt.gz    24,445
    <raw_dir>/zinc/jtvae_test.txt.gz      5,000
    <raw_dir>/zinc/{train,val,test}.index  benchmarking-gnns ZINC-subset row numbers
    <raw_dir>/molhiv/HIV.csv.gz          MoleculeNet HIV: smiles, activity, HIV_active

Uncompressed copies (``.txt``, ``.csv``) are accepted too, and so is a raw_dir that is the
``zinc/`` or ``molhiv/`` folder itself.
"""
from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path
from typing import Optional

from .files import repo_root, sha256_file
from .info import MOLHIV_ROWS, SPLITS, ZINC_ROWS, DatasetError, SplitSizeError

ENV_RAW_DIR = "GRAPHNORM_RAW_DIR"

# sha256 of the files of the project's offline mirror (SHA256SUMS there); a mismatch is only
# a warning because a re-compressed copy of the same rows is fine.
KNOWN_SHA256 = {
    "zinc/jtvae_train.txt.gz": "34ea3c264fcdb48dac456224fcca75a2e460d9508ef3aa426da3675b29a0fca3",
    "zinc/jtvae_valid.txt.gz": "394b08e373ed8cbec646a892eb95db177a7ed7f77a7bb2e4d3d6374b383911b3",
    "zinc/jtvae_test.txt.gz": "bed539fd6b066631a209efb7afd5ff0953a39074bf3b4bd6cbfd000b27fe357e",
    "zinc/train.index": "575d6acd72ac207a95947e2bdd16411ef6fc3faa88c2f55a2c496ea43022a6d8",
    "zinc/val.index": "fe48c38157f0d38e7fc441903a143392eda080511a79e8fb8f60f5c1b0a9c164",
    "zinc/test.index": "6aa50d98976044fb36089afef5b4c991b429ca1c8e009d33a0319e42a2d9b525",
    "molhiv/HIV.csv.gz": "a522521b29ff40a733ec971ba169284d059ef8cb9fde8b8b7b0b4dd8b65b461a",
}

# Logical file -> (sub-folder, file name as in the mirror).
_ZINC_SMILES = {"train": "jtvae_train.txt.gz", "val": "jtvae_valid.txt.gz",
                "test": "jtvae_test.txt.gz"}
_ZINC_INDEX = {s: f"{s}.index" for s in SPLITS}
RAW_FILES: dict[str, dict[str, tuple[str, str]]] = {
    "zinc-full": {f"smiles_{s}": ("zinc", f) for s, f in _ZINC_SMILES.items()},
    "zinc-subset": {**{f"smiles_{s}": ("zinc", f) for s, f in _ZINC_SMILES.items()},
                    **{f"index_{s}": ("zinc", f) for s, f in _ZINC_INDEX.items()}},
    "ogbg-molhiv": {"csv": ("molhiv", "HIV.csv.gz")},
}


class RawDataError(DatasetError, FileNotFoundError):
    """A raw source file is missing, empty or unreadable; the message names it."""


def expected_files(name: str) -> list[str]:
    """'zinc/jtvae_train.txt.gz', ... : what `name` needs below the raw directory."""
    return [f"{sub}/{fname}" for sub, fname in RAW_FILES[name].values()]


def default_raw_dir() -> Optional[Path]:
    """$GRAPHNORM_RAW_DIR, else ``<checkout>/data/raw`` when that folder exists, else None."""
    env = os.environ.get(ENV_RAW_DIR)
    if env:
        return Path(env).expanduser()
    repo = repo_root()
    if repo is not None and (repo / "data" / "raw").is_dir():
        return repo / "data" / "raw"
    return None


def find_raw_files(name: str, raw_dir: os.PathLike | str) -> dict[str, Path]:
    """Map each logical file of `name` to its path under `raw_dir`; `RawDataError` if any
    is missing or empty (the message lists what is missing and where it was looked for)."""
    raw_dir = Path(raw_dir).expanduser()
    found, missing = {}, []
    for key, (sub, fname) in RAW_FILES[name].items():
        stems = [fname, fname[:-3]] if fname.endswith(".gz") else [fname]
        candidates = [raw_dir / sub / f for f in stems] + [raw_dir / f for f in stems]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            missing.append(f"{sub}/{fname}")
        elif path.stat().st_size == 0:
            raise RawDataError(f"{name}: raw file {path} is empty; replace it with the "
                               f"original {sub}/{fname}.")
        else:
            found[key] = path
    if missing:
        raise RawDataError(
            f"{name}: raw directory {raw_dir} lacks {', '.join(missing)} (expected files: "
            f"{', '.join(expected_files(name))}; pass --raw-dir DIR or set {ENV_RAW_DIR}=DIR, "
            f"in Python raw_dir=DIR).")
    return found


def source_checksum(files: dict[str, Path]) -> tuple[str, dict[str, str]]:
    """(combined sha256, per-file sha256) of the raw files; combined hashes the sorted
    'key:sha' lines so it does not depend on where the files live."""
    per_file = {key: sha256_file(p) for key, p in sorted(files.items())}
    combined = hashlib.sha256("\n".join(f"{k}:{v}" for k, v in per_file.items()).encode())
    return combined.hexdigest(), per_file


def unknown_copies(name: str, files: dict[str, Path], per_file: dict[str, str]) -> list[str]:
    """Raw files whose sha256 differs from the offline mirror's (reported as a warning)."""
    out = []
    for key, (sub, fname) in RAW_FILES[name].items():
        known = KNOWN_SHA256.get(f"{sub}/{fname}")
        if known and files[key].name == fname and per_file[key] != known:
            out.append(str(files[key]))
    return out


def _open_text(path: Path):
    opener = gzip.open if path.suffix == ".gz" else open
    return opener(path, "rt", encoding="utf-8", newline=None)


def read_lines(path: Path) -> list[str]:
    """Stripped non-empty lines of a (gzipped) text file."""
    try:
        with _open_text(path) as f:
            lines = [line.strip() for line in f]
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise RawDataError(f"cannot read raw file {path}: {e}") from e
    lines = [line for line in lines if line]
    if not lines:
        raise RawDataError(f"raw file {path} holds no rows")
    return lines


def read_zinc_smiles(files: dict[str, Path]) -> dict[str, list[str]]:
    """The three JT-VAE SMILES files, checked against their known row counts."""
    out = {}
    for split in SPLITS:
        path = files[f"smiles_{split}"]
        out[split] = read_lines(path)
        if len(out[split]) != ZINC_ROWS[split]:
            raise SplitSizeError(f"raw file {path} has {len(out[split])} SMILES rows, "
                                 f"expected {ZINC_ROWS[split]} (truncated or wrong file?)")
    return out


def read_zinc_index(path: Path, num_rows: int) -> list[int]:
    """benchmarking-gnns ``*.index``: comma-separated 0-based rows (parsed as PyG does)."""
    try:
        text = path.read_text().strip()
        rows = [int(x) for x in text.split(",")] if text else []
    except (OSError, ValueError) as e:
        raise RawDataError(f"cannot parse index file {path}: {e}") from e
    if not rows:
        raise RawDataError(f"index file {path} holds no rows")
    bad = [r for r in rows if not 0 <= r < num_rows]
    if bad:
        raise RawDataError(f"index file {path} has rows outside [0, {num_rows}): {bad[:5]}")
    return rows


def read_molhiv(path: Path) -> tuple[list[str], list[int]]:
    """(smiles, HIV_active) of MoleculeNet HIV.csv in file order (= OGB's graph order)."""
    import pandas as pd

    try:
        df = pd.read_csv(path)
    except Exception as e:  # pandas raises many types for broken gzip/csv input
        raise RawDataError(f"cannot read raw file {path}: {e}") from e
    for col in ("smiles", "HIV_active"):
        if col not in df.columns:
            raise RawDataError(f"raw file {path} lacks column {col!r} (has {list(df.columns)})")
    if len(df) != MOLHIV_ROWS:
        raise SplitSizeError(f"raw file {path} has {len(df)} molecules, expected "
                             f"{MOLHIV_ROWS}: ogbg-molhiv keeps every row")
    return df["smiles"].astype(str).tolist(), df["HIV_active"].astype(int).tolist()
