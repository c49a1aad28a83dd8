"""File helpers shared by the raw reader and the caches: where the checkout is, sha256,
and writes that never leave a half-written file behind."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable, Optional


def repo_root() -> Optional[Path]:
    """The source checkout graphnorm is imported from, or None for an installed wheel."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "graphnorm").is_dir():
        return root
    return None


def sha256_file(path: os.PathLike | str, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    # Writers in parallel (e.g. one per DDP rank) each finish their own temp file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def torch_save(obj, path: Path) -> None:
    # Through a file object: torch.save(obj, path) names the zip records after the (temp)
    # file name, which would make identical builds differ byte-wise.
    import torch

    with open(path, "wb") as f:
        torch.save(obj, f)
