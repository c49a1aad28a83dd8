"""The TDC ADMET group in the leaderboard's form: one row per (task, variant), mean ± std of
the test metric over the seeds, beside the public leaderboard's entries and the rank we would
hold there.

Reads ``<out>/<task>/runs/<variant>/seed<k>/metrics.json`` (what `graphnorm benchmark
--suite tdc-admet` writes) and the leaderboard snapshot ``leaderboard.csv`` (columns task,
metric, better, rank1, rank3, minimol, maplight_gnn, maplight, chemprop_rdkit, chemprop).
Where a row stands (``standing``), at the leaderboard's 3 decimals: ``first`` = better than
rank 1 by more than one seed standard deviation; ``tied with first`` = at least rank 1's value,
within one standard deviation; ``top 3`` = at least rank 3's value (``top 3 (= 3)``: equal to
it); else ``> 3``. A task whose snapshot row carries a note (bioavailability_ma: its block
copies pgp_broccatelli's) is ``unranked`` and never counted. Ties at 3 decimals are not wins
(``beats_chemprop_rdkit``). A task with fewer than 5 finished seeds is marked, never hidden. Without
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


def variant_runs(task_dir: Path) -> dict[str, list[dict]]:
    """{variant: [metrics.json of each finished seed]} of one task's benchmark folder."""
    out: dict[str, list[dict]] = {}
    for f in sorted(task_dir.glob(f"runs/*/seed*/{METRICS_FILE}")):
        out.setdefault(f.parent.parent.name, []).append(read_metrics(f))
    return out


UNRANKED = "unranked"
TOP3 = ("first", "tied with first", "top 3", "top 3 (= 3)")


def at_least(a: float, b: float, higher: bool) -> bool:
    """a at least as good as b at the leaderboard's 3 decimals."""
    a, b = round(a, 3), round(b, 3)
    return a >= b if higher else a <= b


def better(a: float, b: float, higher: bool) -> bool:
    """a strictly better than b at the leaderboard's 3 decimals (a tie is not a win)."""
    return round(a, 3) != round(b, 3) and at_least(a, b, higher)


def standing(mean: float, std: float, row: pd.Series) -> str:
    """Where a mean ± one seed SD stands against a leaderboard snapshot row (module doc)."""
    if isinstance(row.get("note"), str):
        return UNRANKED
    higher = row["better"] == "higher"
    margin = mean - row["rank1"] if higher else row["rank1"] - mean
    if better(mean, row["rank1"], higher) and margin > std:
        return "first"
    if at_least(mean, row["rank1"], higher):
        return "tied with first"
    if at_least(mean, row["rank3"], higher):
        return "top 3 (= 3)" if round(mean, 3) == round(row["rank3"], 3) else "top 3"
    return "> 3"


def code_of(runs: list[dict]) -> str:
    """The commits a row's runs recorded (``git_sha``), so a reader sees which code made it."""
    return ", ".join(sorted({str(r.get("git_sha") or "?")[:7] for r in runs}))


def board_row(task: str, metric: str, variant: str, test, val, cpu, lb, code: str = "") -> dict:
    """One (task, variant) line from its seeds' test and validation scores and CPU seconds,
    placed against the leaderboard snapshot ``lb`` (None: no placement)."""
    test, val = np.asarray(test, dtype=float), np.asarray(val, dtype=float)
    # full precision: the board shows 3 decimals, and rounding twice moves a few of them
    row = {"task": task, "metric": metric, "variant": variant, "code": code, "seeds": len(test),
           "test_mean": float(test.mean()),
           "test_std": float(test.std()),
           "val_mean": float(val.mean()),
           "cpu_s_per_seed": round(float(np.mean(cpu)), 1) if None not in cpu else None}
    if lb is not None and task in lb.index:
        ref = lb.loc[task]
        row["standing"] = standing(float(test.mean()), float(test.std()), ref)
        for name in ("rank1", "rank3") + ENTRIES:
            value = ref[name]
            row[name] = None if pd.isna(value) else float(value)
        higher = ref["better"] == "higher"
        row["beats_chemprop_rdkit"] = better(row["test_mean"], ref["chemprop_rdkit"], higher)
        row["note"] = None if pd.isna(ref.get("note")) else ref.get("note")
    return row


def validation_row(task: str, metric: str, variant: str, val, cpu) -> dict:
    """A selection board's (task, variant) line: validation scores only."""
    val = np.asarray(val, dtype=float)
    return {"task": task, "metric": metric, "variant": variant, "seeds": len(val),
            "val_mean": float(val.mean()), "val_std": float(val.std()),
            "cpu_s_per_seed": round(float(np.mean(cpu)), 1) if None not in cpu else None}


def test_scored(task: str, runs: list[dict]) -> list[dict]:
    """The runs of ``task`` that scored test (a selection run, no ``--final``, did not)."""
    metric = TDC_ADMET_TASKS[task]
    return [r for r in runs if r.get(f"test_{metric}") is not None]


def scored_row(task: str, variant: str, runs: list[dict], lb) -> dict:
    """`board_row` of ``runs`` (test-scored runs of one task and variant)."""
    metric = TDC_ADMET_TASKS[task]
    return board_row(task, metric, variant, [r[f"test_{metric}"] for r in runs],
                     [r[f"val_{metric}"] for r in runs], [r.get("cpu_time_s") for r in runs],
                     lb, code_of(runs))


def board(out: Path, leaderboard: Optional[Path] = None, final: bool = True) -> pd.DataFrame:
    """One row per (task, variant) with finished seeds: test-scored ones (``final``), or
    validation scores alone, never a test score (not ``final``)."""
    lb = read_leaderboard(leaderboard) if final else None
    rows = []
    for task, metric in TDC_ADMET_TASKS.items():
        for variant, runs in variant_runs(Path(out) / task).items():
            cpu = [r.get("cpu_time_s") for r in runs]
            if not final:
                rows.append(validation_row(task, metric, variant,
                                           [r[f"val_{metric}"] for r in runs], cpu))
                continue
            runs = test_scored(task, runs)
            if runs:
                rows.append(scored_row(task, variant, runs, lb))
    return pd.DataFrame(rows)


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _cpu(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.0f}"


def board_markdown(table: pd.DataFrame, wins: Optional[dict[str, int]] = None,
                   reference: Optional[str] = None) -> str:
    """The leaderboard-form table, one line per (task, variant), and per variant, over the
    ranked tasks with all 5 seeds, how many stand first, tied with first and in the top 3 and
    beat Chemprop-RDKit (and the ``reference`` variant: ``wins``, from ``tdc_published``)."""
    if table.empty:
        return "No finished TDC ADMET run yet.\n"
    if "test_mean" not in table:
        return validation_markdown(table)
    head = ("| task | metric | variant | code | test (mean ± std) | seeds | CPU-s/seed | standing "
            "| rank 1 | rank 3 | MapLight+GNN | MapLight | Chemprop-RDKit |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for _, r in table.iterrows():
        seeds = f"{r['seeds']}" + ("" if r["seeds"] >= SEEDS else " (incomplete)")
        task = r["task"] + (" †" if isinstance(r.get("note"), str) else "")
        lines.append(f"| {task} | {r['metric']} | {r['variant']} | {_cell(r.get('code'))} | "
                     f"{r['test_mean']:.3f} ± {r['test_std']:.3f} | {seeds} | "
                     f"{_cpu(r.get('cpu_s_per_seed'))} | {_cell(r.get('standing'))} | "
                     f"{_cell(r.get('rank1'))} | {_cell(r.get('rank3'))} | "
                     f"{_cell(r.get('maplight_gnn'))} | {_cell(r.get('maplight'))} | "
                     f"{_cell(r.get('chemprop_rdkit'))} |")
    text = head + "\n".join(lines) + "\n"
    notes = sorted({f"{r['task']}: {r['note']}" for _, r in table.iterrows()
                    if isinstance(r.get("note"), str)})
    if notes:
        text += "\n" + "\n".join(f"† {n}; not counted" for n in notes) + "\n"
    if "standing" not in table:
        return text
    complete = table[(table["seeds"] >= SEEDS) & (table["standing"] != UNRANKED)]
    if complete.empty:
        return text
    extra = f" beats {reference} |" if wins is not None else ""
    text += ("\nRanked tasks with all 5 seeds (ties at the leaderboard's 3 decimals are not "
             "wins):\n\n| variant | tasks | first | tied with first | top 3 (of them = rank 3) | "
             "beats Chemprop-RDKit |" + extra + "\n|---|---|---|---|---|---|"
             + ("---|" if wins is not None else "") + "\n")
    for variant, part in complete.groupby("variant", sort=False):
        n = lambda *names: int(part["standing"].isin(names).sum())
        text += (f"| {variant} | {len(part)} | {n('first')} | {n('tied with first')} | "
                 f"{n(*TOP3)} ({n('top 3 (= 3)')}) | {int(part['beats_chemprop_rdkit'].sum())} |")
        if wins is not None:
            text += " - |" if variant == reference else f" {wins.get(variant, 0)} |"
        text += "\n"
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
