"""The published TDC ADMET board: one configuration's row per task gathered from several
benchmark folders, beside a reference variant, on the leaderboard snapshot.

A configuration is often run in pieces (the small tasks in one folder, the large ones in
another, each under its own variant name); the first folder holding a task gives that task's
row, shown under one label (e.g. ``default``). A folder may hold one variant per task, or name
it (``DIR:VARIANT``). The reference (e.g. ``bench:gbm``) adds its rows and a count of the
tasks where the configuration beats it: the test mean over the seeds both have, at the
leaderboard's 3 decimals (a tie is not a win). Standing and counts are ``tdc_board``'s.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from graphnorm.bench.tdc_board import (board_markdown, better, scored_row, test_scored,
                                        variant_runs)
from graphnorm.data.tdc import TDC_ADMET_TASKS


def folder_and_variant(spec: str | Path) -> tuple[Path, Optional[str]]:
    """``DIR`` or ``DIR:VARIANT`` (a Windows drive letter is not a variant)."""
    text = str(spec)
    head, sep, tail = text.rpartition(":")
    if sep and head and tail and "/" not in tail and "\\" not in tail:
        return Path(head), tail
    return Path(text), None


def scored_runs(folder: Path, variant: Optional[str] = None) -> dict[str, list[dict]]:
    """{task: test-scored runs} of one benchmark folder: the named variant, or the one variant
    each task holds (several without a name is an error naming them)."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such benchmark folder")
    out = {}
    for task in TDC_ADMET_TASKS:
        by_variant = {v: test_scored(task, runs) for v, runs in variant_runs(folder / task).items()
                      if variant is None or v == variant}
        by_variant = {v: runs for v, runs in by_variant.items() if runs}
        if len(by_variant) > 1:
            raise ValueError(f"{folder / task}: several variants {sorted(by_variant)}; name one "
                             f"as {folder}:VARIANT")
        if by_variant:
            out[task] = next(iter(by_variant.values()))
    return out


def beats(a: list[dict], b: list[dict], metric: str, higher: bool) -> bool:
    """a's test mean better than b's over the seeds both finished, at 3 decimals."""
    sa = {r["seed"]: r[f"test_{metric}"] for r in a}
    sb = {r["seed"]: r[f"test_{metric}"] for r in b}
    seeds = sorted(set(sa) & set(sb))
    if not seeds:
        return False
    return better(float(np.mean([sa[s] for s in seeds])), float(np.mean([sb[s] for s in seeds])),
                  higher)


def published_board(folders: Sequence[str | Path], leaderboard: Path, label: str = "default",
                    reference: Optional[str | Path] = None) -> tuple[pd.DataFrame, Optional[dict]]:
    """The board's table and, with a reference, {label: tasks where it beats the reference}."""
    lb = pd.read_csv(leaderboard).set_index("task")
    chosen: dict[str, list[dict]] = {}
    for spec in folders:
        for task, runs in scored_runs(*folder_and_variant(spec)).items():
            chosen.setdefault(task, runs)
    if not chosen:
        raise ValueError(f"no test-scored TDC ADMET run in {', '.join(map(str, folders))}")
    rows = [scored_row(t, label, chosen[t], lb) for t in sorted(chosen)]
    wins = None
    if reference is not None:
        ref_folder, ref_variant = folder_and_variant(reference)
        if ref_variant is None:
            raise ValueError(f"--reference {reference}: name the variant, DIR:VARIANT")
        ref = scored_runs(ref_folder, ref_variant)
        rows += [scored_row(t, ref_variant, ref[t], lb) for t in sorted(ref)]
        wins = {label: sum(beats(chosen[t], ref[t], TDC_ADMET_TASKS[t],
                                 lb.loc[t, "better"] == "higher")
                           for t in chosen if t in ref and not isinstance(lb.loc[t].get("note"), str))}
        wins[ref_variant] = 0
    return pd.DataFrame(rows), wins


def published_markdown(table: pd.DataFrame, wins: Optional[dict], reference: Optional[str],
                       command: str) -> str:
    ref_name = None if reference is None else folder_and_variant(reference)[1]
    return (f"# The TDC ADMET board\n\ncommand: `{command}`\n\n"
            "Standing: `first` = better than rank 1 by more than one seed standard deviation; "
            "`tied with first` = at least rank 1's value at 3 decimals, within one standard "
            "deviation; `top 3` = at least rank 3's value. `code`: the commit each row's runs "
            "recorded.\n\n" + board_markdown(table, wins, ref_name))
