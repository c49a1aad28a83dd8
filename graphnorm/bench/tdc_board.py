"""The TDC ADMET group in the leaderboard's form: one row per (task, variant), mean ± std of
the test metric over the seeds, beside the public leaderboard's entries and the rank we would
hold there.

Reads ``<out>/<task>/runs/<variant>/seed<k>/metrics.json`` (what `graphnorm benchmark
--suite tdc-admet` writes) and the leaderboard snapshot ``leaderboard.csv`` (columns task,
metric, better, rank1, rank3, minimol, maplight_gnn, maplight, chemprop_rdkit, chemprop).
The leaderboard shows rounded means, so a tie at its precision counts as a tie (we take the
better rank); a task with fewer than 5 finished seeds is marked, never hidden. Without
``final`` (a selection suite, no ``--final``) the board reads validation scores alone: no test
score and no leaderboard rank, which only test scores could give.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from graphnorm.data.tdc import TDC_ADMET_TASKS
from graphnorm.run_folder import METRICS_FILE, read_metrics

ENTRIES = ("minimol", "maplight_gnn", "maplight", "chemprop_rdkit", "chemprop")
SEEDS = 5  # the official protocol


def read_leaderboard(path: Optional[Path]) -> Optional[pd.DataFrame]:
    if path is None or not Path(path).is_file():
        return None
    return pd.read_csv(path).set_index("task")


def _runs(task_dir: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in sorted(task_dir.glob(f"runs/*/seed*/{METRICS_FILE}")):
        out.setdefault(f.parent.parent.name, []).append(read_metrics(f))
    return out


def _better(a: float, b: float, higher: bool) -> bool:
    """a at least as good as b at the leaderboard's 3 decimals."""
    a, b = round(a, 3), round(b, 3)
    return a >= b if higher else a <= b


def leaderboard_rank(mean: float, row: pd.Series) -> str:
    """"1" (at least rank 1's value), "top 3" (at least rank 3's), else "> 3"."""
    higher = row["better"] == "higher"
    if _better(mean, row["rank1"], higher):
        return "1"
    return "top 3" if _better(mean, row["rank3"], higher) else "> 3"


def board_row(task: str, metric: str, variant: str, test, val, cpu, lb) -> dict:
    """One (task, variant) line from its seeds' test and validation scores and CPU seconds,
    placed against the leaderboard snapshot ``lb`` (None: no placement)."""
    test, val = np.asarray(test, dtype=float), np.asarray(val, dtype=float)
    row = {"task": task, "metric": metric, "variant": variant, "seeds": len(test),
           "test_mean": round(float(test.mean()), 4),
           "test_std": round(float(test.std()), 4),
           "val_mean": round(float(val.mean()), 4),
           "cpu_s_per_seed": round(float(np.mean(cpu)), 1) if None not in cpu else None}
    if lb is not None and task in lb.index:
        ref = lb.loc[task]
        row["rank"] = leaderboard_rank(row["test_mean"], ref)
        for name in ("rank1", "rank3") + ENTRIES:
            value = ref[name]
            row[name] = None if pd.isna(value) else float(value)
        higher = ref["better"] == "higher"
        row["beats_chemprop_rdkit"] = _better(row["test_mean"], ref["chemprop_rdkit"], higher)
        row["note"] = None if pd.isna(ref.get("note")) else ref.get("note")
    return row


def validation_row(task: str, metric: str, variant: str, val, cpu) -> dict:
    """A selection board's (task, variant) line: validation scores only."""
    val = np.asarray(val, dtype=float)
    return {"task": task, "metric": metric, "variant": variant, "seeds": len(val),
            "val_mean": round(float(val.mean()), 4), "val_std": round(float(val.std()), 4),
            "cpu_s_per_seed": round(float(np.mean(cpu)), 1) if None not in cpu else None}


def board(out: Path, leaderboard: Optional[Path] = None, final: bool = True) -> pd.DataFrame:
    """One row per (task, variant) with finished seeds: test-scored ones (``final``), or
    validation scores alone, never a test score (not ``final``)."""
    lb = read_leaderboard(leaderboard) if final else None
    rows = []
    for task, metric in TDC_ADMET_TASKS.items():
        for variant, runs in _runs(Path(out) / task).items():
            cpu = [r.get("cpu_time_s") for r in runs]
            if not final:
                rows.append(validation_row(task, metric, variant,
                                           [r[f"val_{metric}"] for r in runs], cpu))
                continue
            runs = [r for r in runs if r[f"test_{metric}"] is not None]  # not selection runs
            if runs:
                rows.append(board_row(task, metric, variant, [r[f"test_{metric}"] for r in runs],
                                      [r[f"val_{metric}"] for r in runs],
                                      [r.get("cpu_time_s") for r in runs], lb))
    return pd.DataFrame(rows)


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _cpu(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.0f}"


def board_markdown(table: pd.DataFrame) -> str:
    """The leaderboard-form table, one line per (task, variant), and per variant the count of
    tasks where it reaches rank 1, the top 3, and beats Chemprop-RDKit."""
    if table.empty:
        return "No finished TDC ADMET run yet.\n"
    if "test_mean" not in table:
        return validation_markdown(table)
    head = ("| task | metric | variant | test (mean ± std) | seeds | CPU-s/seed | rank | "
            "rank 1 | rank 3 | MapLight+GNN | MapLight | Chemprop-RDKit |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for _, r in table.iterrows():
        seeds = f"{r['seeds']}" + ("" if r["seeds"] >= SEEDS else " (incomplete)")
        task = r["task"] + (" †" if isinstance(r.get("note"), str) else "")
        lines.append(f"| {task} | {r['metric']} | {r['variant']} | "
                     f"{r['test_mean']:.3f} ± {r['test_std']:.3f} | {seeds} | "
                     f"{_cpu(r.get('cpu_s_per_seed'))} | {_cell(r.get('rank'))} | "
                     f"{_cell(r.get('rank1'))} | {_cell(r.get('rank3'))} | "
                     f"{_cell(r.get('maplight_gnn'))} | {_cell(r.get('maplight'))} | "
                     f"{_cell(r.get('chemprop_rdkit'))} |")
    text = head + "\n".join(lines) + "\n"
    notes = sorted({f"{r['task']}: {r['note']}" for _, r in table.iterrows() if isinstance(r.get("note"), str)})
    if notes:
        text += "\n" + "\n".join(f"† {n}" for n in notes) + "\n"
    complete = table[table["seeds"] >= SEEDS]
    if "rank" in table and not complete.empty:
        text += ("\nTasks with all 5 seeds only:\n\n"
                 "| variant | tasks | rank 1 | top 3 | beats Chemprop-RDKit |\n|---|---|---|---|---|\n")
        for variant, part in complete.groupby("variant"):
            text += (f"| {variant} | {len(part)} | {int((part['rank'] == '1').sum())} | "
                     f"{int(part['rank'].isin(['1', 'top 3']).sum())} | "
                     f"{int(part['beats_chemprop_rdkit'].sum())} |\n")
    return text


def validation_markdown(table: pd.DataFrame) -> str:
    """A selection board: validation mean ± std per (task, variant), no test, no rank."""
    lines = ["| task | metric | variant | validation (mean ± std) | seeds | CPU-s/seed |",
             "|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        seeds = f"{r['seeds']}" + ("" if r["seeds"] >= SEEDS else " (incomplete)")
        lines.append(f"| {r['task']} | {r['metric']} | {r['variant']} | {r['val_mean']:.3f} ± "
                     f"{r['val_std']:.3f} | {seeds} | {_cpu(r.get('cpu_s_per_seed'))} |")
    return ("\n".join(lines) + "\n\nValidation scores only: the test set was not read. "
            "`--final` scores it, and each such scoring is appended to the test ledger "
            "(docs/usage.md).\n")


def write_board(out: Path, leaderboard: Optional[Path] = None, final: bool = True) -> pd.DataFrame:
    """``out/board.csv`` and ``out/board.md``; returns the table."""
    table = board(out, leaderboard, final)
    table.to_csv(Path(out) / "board.csv", index=False)
    (Path(out) / "board.md").write_text(board_markdown(table))
    return table
