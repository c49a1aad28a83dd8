"""Train/val/test splits of a user's table: scaffold, random, a column, or a saved splits.json.

- ``scaffold``: Bemis–Murcko scaffold groups (:func:`graphnorm.data.scaffold.murcko_scaffold`)
  never straddle two splits. Chemprop's "scaffold_balanced" order: groups larger than half the
  val or test size go first (so that one huge scaffold cannot fill val or test), the rest in
  a seeded random order; each group goes to train while it fits, else val, else test.
- ``random``: a seeded permutation.
- ``column:NAME``: the column says ``train``, ``val`` (or ``valid``) or ``test`` per row.
- ``file:PATH``: the row labels of a ``splits.json`` a run wrote: an exact rerun.
- ``tdc:NAME``: TDC's benchmark protocol (`graphnorm.data.tdc`): rows whose column says
  ``test`` are the fixed test set; the others are split into train and val by PyTDC's scaffold
  split with seed ``split_seed + 1`` (the leaderboard's seeds are 1..5).
Identical molecules (canonical SMILES) share a scaffold, so a scaffold split keeps duplicates
together; a random split may not (they are counted and reported).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from .info import SPLITS as SPLIT_NAMES  # a table is split like a benchmark
from .table import TableError

COLUMN_VALUES = {"train": "train", "training": "train", "val": "val", "valid": "val",
                 "validation": "val", "test": "test", "testing": "test"}


def parse_split_sizes(sizes) -> tuple[float, float, float]:
    """"0.8,0.1,0.1" or [0.8, 0.1, 0.1] -> fractions that sum to 1."""
    parts = sizes.split(",") if isinstance(sizes, str) else list(sizes)
    try:
        values = tuple(float(p) for p in parts)
    except (TypeError, ValueError):
        raise TableError(f"--split-sizes {sizes!r}: write three fractions, e.g. 0.8,0.1,0.1") from None
    if len(values) != 3 or any(v < 0 for v in values) or abs(sum(values) - 1) > 1e-6:
        raise TableError(f"--split-sizes {sizes!r}: three non-negative fractions for train, "
                         "val and test that sum to 1, e.g. 0.8,0.1,0.1")
    if min(values) == 0:
        raise TableError(f"--split-sizes {sizes!r}: every split needs a share (val picks the "
                         "best checkpoint, test reports it)")
    return values


def split_kind(split: str) -> tuple[str, Optional[str]]:
    """("scaffold" | "random" | "column" | "file", argument)."""
    kind, _, arg = str(split).partition(":")
    if kind in ("scaffold", "random") and not arg:
        return kind, None
    if kind in ("column", "file", "tdc") and arg:
        return kind, arg
    raise TableError(f"--split {split!r}: use scaffold, random, column:NAME, file:splits.json "
                     "or tdc:NAME")


def random_split(n: int, sizes: Sequence[float], seed: int) -> dict[str, list[int]]:
    order = np.random.default_rng(seed).permutation(n)
    n_train = int(round(sizes[0] * n))
    n_val = int(round(sizes[1] * n))
    parts = np.split(order, [n_train, n_train + n_val])
    return {k: sorted(p.tolist()) for k, p in zip(SPLIT_NAMES, parts)}


def balanced_scaffold_split(scaffolds: Sequence[str], sizes: Sequence[float], seed: int
                   ) -> dict[str, list[int]]:
    """Balanced scaffold split of rows keyed by scaffold (module docstring)."""
    groups: dict[str, list[int]] = {}
    for i, scaf in enumerate(scaffolds):
        groups.setdefault(scaf, []).append(i)
    n = len(scaffolds)
    train_size, val_size = sizes[0] * n, sizes[1] * n
    test_size = n - train_size - val_size
    sets = list(groups.values())
    big = [g for g in sets if len(g) > val_size / 2 or len(g) > test_size / 2]
    small = [g for g in sets if not (len(g) > val_size / 2 or len(g) > test_size / 2)]
    rng = np.random.default_rng(seed)
    big = [big[k] for k in rng.permutation(len(big))]
    small = [small[k] for k in rng.permutation(len(small))]
    big.sort(key=len, reverse=True)  # stable: ties keep the seeded order
    out: dict[str, list[int]] = {k: [] for k in SPLIT_NAMES}
    for g in big + small:
        if len(out["train"]) + len(g) <= train_size:
            out["train"] += g
        elif len(out["val"]) + len(g) <= val_size:
            out["val"] += g
        else:
            out["test"] += g
    return {k: sorted(v) for k, v in out.items()}


def column_split(values: Sequence[str], labels: Sequence[str], column: str, path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {k: [] for k in SPLIT_NAMES}
    for i, (v, where) in enumerate(zip(values, labels)):
        name = COLUMN_VALUES.get(str(v).strip().lower())
        if name is None:
            raise TableError(f"{path}: split column {column!r} must say train, val or test; "
                             f"{where} holds {v!r}")
        out[name].append(i)
    return out


def tdc_split(table, column: str, usable: Sequence[int], split_seed: int) -> dict[str, list[int]]:
    """Positions into ``usable`` for ``--split tdc:COLUMN`` (module docstring). The scaffold
    split runs over every non-test row of the file, as PyTDC splits all of ``train_val``,
    then keeps the usable ones."""
    from .table import find_column
    from .tdc import tdc_scaffold_split

    col = find_column(table, column, "--split tdc:NAME")
    is_test = table.frame[col].astype(str).str.strip().str.lower().eq("test").to_numpy()
    pool = [i for i in range(len(table)) if not is_test[i]]
    smiles = table.smiles
    parts = tdc_scaffold_split([smiles[i] for i in pool], split_seed + 1)
    where = {row: k for k, row in enumerate(usable)}
    out = {"train": [], "val": [], "test": [where[i] for i in range(len(table))
                                            if is_test[i] and i in where]}
    for name in ("train", "val"):
        out[name] = [where[pool[p]] for p in parts[name] if pool[p] in where]
    return out


def file_split(splits_json, labels: Sequence[str], sha256: str) -> dict[str, list[int]]:
    """Rows named in a run's splits.json (by their labels, e.g. "line 7")."""
    path = Path(splits_json)
    try:
        saved = json.loads(path.read_text())
        named = {k: saved[k] for k in SPLIT_NAMES}
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise TableError(f"--split file:{path}: not a splits.json written by a run ({err})") from err
    if saved.get("sha256") and saved["sha256"] != sha256:
        raise TableError(f"--split file:{path} was written for another version of the data "
                         f"file (sha256 {saved['sha256'][:12]}..., this one {sha256[:12]}...)")
    where = {label: i for i, label in enumerate(labels)}
    out: dict[str, list[int]] = {}
    for k in SPLIT_NAMES:
        unknown = [x for x in named[k] if x not in where]
        if unknown:
            raise TableError(f"--split file:{path}: {unknown[0]} of its {k} split is not a "
                             "usable row of the table")
        out[k] = sorted(where[x] for x in named[k])
    return out


def check_split(split: dict[str, list[int]], n: int, sizes, how: str) -> None:
    """Every split must hold a molecule (val picks the checkpoint, test reports); but a
    ``tdc:`` table may hold no test row: the TDC suite's selection tables leave test.csv out
    (graphnorm/data/tdc.py), and such a run reports validation only."""
    withheld = ("test",) if split_kind(how)[0] == "tdc" else ()
    empty = [k for k in SPLIT_NAMES if not split[k] and k not in withheld]
    if empty:
        raise TableError(
            f"the {' and '.join(empty)} split{'s' if len(empty) > 1 else ''} of --split {how} "
            f"hold{'' if len(empty) > 1 else 's'} no molecule ({n} usable rows, split sizes "
            f"{','.join(f'{s:g}' for s in sizes)}): add rows or give "
            f"{'them' if len(empty) > 1 else 'it'} a larger share with --split-sizes")
