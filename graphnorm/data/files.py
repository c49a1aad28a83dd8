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


# Shipped and cached JSON (LightGBM model strings in the booster bundles): xz, which stores
# LightGBM's text in ~30 % less than gzip -9 (graphnorm/pretrained: 12.3 -> 9.4 MB) and is
# in the standard library. The preset is fixed, so equal content gives equal bytes (the
# panel names its bundle by sha256).
JSON_XZ = ".json.xz"


def json_xz_bytes(obj) -> bytes:
    """``obj`` as JSON, xz-compressed (preset 9)."""
    import json
    import lzma

    return lzma.compress(json.dumps(obj).encode(), preset=9)


def json_from_xz(data: bytes):
    """The JSON value of `json_xz_bytes`' output; ValueError naming what is wrong when not."""
    import json
    import lzma

    try:
        return json.loads(lzma.decompress(data))
    except lzma.LZMAError as err:
        raise ValueError(f"not xz-compressed data ({err})") from err
