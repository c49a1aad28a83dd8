"""``graphnorm compare A B --suite tdc-admet``: two selection suites (``benchmark --suite
tdc-admet`` without ``--final``) compared task by task on validation, by the rule written
before the runs (experiments/results/pretrain/RULE.md, B):

- the score of a run is its **cross-fitted** validation score (graphnorm/bench/crossfit.py) on
  a task whose ``train_val`` table has fewer than `CROSSFIT_BELOW_ROWS` rows, its plain
  validation score on the larger ones;
- per task, the arm with the better mean over the seeds both finished wins, unless the
  difference is within one seed standard deviation (the larger of the two arms' population
  standard deviations): then the two are *tied*, and a tie counts as not better.

The test set is never read: a suite folder holding test-scored runs is refused.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

CROSSFIT_BELOW_ROWS = 2000
SKIPPED = ("bioavailability_ma",)  # its leaderboard row is a copy of pgp's: out of every count


def task_rows(task: str, group: Path) -> int:
    """Rows of a task's ``train_val`` table in the TDC ADMET group folder (`admet_group_dir`)."""
    return len(pd.read_csv(Path(group) / task / "train_val.csv"))


def seed_scores(task_dir: Path, crossfitted: bool) -> tuple[str, dict[int, float]]:
    """(variant, {seed: score}) of the one variant in a selection suite's task folder."""
    from graphnorm.bench.crossfit import crossfit_run
    from graphnorm.run_folder import METRICS_FILE, read_record

    variants = sorted({p.parent.parent.name for p in task_dir.glob(f"runs/*/seed*/{METRICS_FILE}")})
    if len(variants) != 1:
        raise ValueError(f"{task_dir}: {len(variants)} variants ({', '.join(variants) or 'none'}); "
                         "compare suites of one variant each")
    scores = {}
    for path in sorted(task_dir.glob(f"runs/{variants[0]}/seed*/{METRICS_FILE}")):
        record = read_record(path)
        if record.test is not None:
            raise ValueError(f"{path}: scored on test (a --final suite); the comparison is made "
                             "on validation only")
        scores[record.seed] = (crossfit_run(path.parent).crossfit if crossfitted
                               else float(record.fields[f"val_{record.metric}"]))
    return variants[0], scores


def versus(a: Path, b: Path, group: Path, tasks: Optional[list[str]] = None) -> pd.DataFrame:
    """One row per task both suites hold: each arm's mean and std over the common seeds, the
    score kind, and the verdict (``A``, ``B`` or ``tied``)."""
    from graphnorm.data.tdc import TDC_ADMET_TASKS
    from graphnorm.tasks import HIGHER_IS_BETTER

    rows = []
    for task, metric in TDC_ADMET_TASKS.items():
        if task in SKIPPED or (tasks and task not in tasks):
            continue
        if not ((Path(a) / task).is_dir() and (Path(b) / task).is_dir()):
            continue
        crossfitted = task_rows(task, group) < CROSSFIT_BELOW_ROWS
        va, sa = seed_scores(Path(a) / task, crossfitted)
        vb, sb = seed_scores(Path(b) / task, crossfitted)
        common = sorted(set(sa) & set(sb))
        if not common:
            continue
        xa, xb = np.array([sa[s] for s in common]), np.array([sb[s] for s in common])
        sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
        gain, spread = sign * (xa.mean() - xb.mean()), max(xa.std(), xb.std())
        verdict = "tied" if abs(gain) <= spread else ("A" if gain > 0 else "B")
        rows.append({"task": task, "metric": metric, "score": "cross-fitted" if crossfitted
                     else "validation", "seeds": len(common), "a_variant": va, "b_variant": vb,
                     "a_mean": xa.mean(), "a_std": xa.std(), "b_mean": xb.mean(),
                     "b_std": xb.std(), "verdict": verdict})
    return pd.DataFrame(rows)


def versus_markdown(table: pd.DataFrame, a: str, b: str) -> str:
    """The per-task table and the count of tasks each arm wins."""
    if table.empty:
        return "No task finished in both suites.\n"
    lines = [f"A = {a}", f"B = {b}", "",
             "| task | metric | score | seeds | A (mean ± std) | B (mean ± std) | better |",
             "|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        lines.append(f"| {r['task']} | {r['metric']} | {r['score']} | {r['seeds']} | "
                     f"{r['a_mean']:.4f} ± {r['a_std']:.4f} | {r['b_mean']:.4f} ± "
                     f"{r['b_std']:.4f} | {r['verdict']} |")
    n = len(table)
    lines += ["", f"A better on {int((table['verdict'] == 'A').sum())} of {n} tasks, B better on "
              f"{int((table['verdict'] == 'B').sum())}, tied on {int((table['verdict'] == 'tied').sum())} "
              "(tied: the difference is within one seed standard deviation)."]
    return "\n".join(lines) + "\n"
