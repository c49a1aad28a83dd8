"""``graphnorm compare A B --suite tdc-admet``: two selection suites (``benchmark --suite
tdc-admet`` without ``--final``) compared task by task on validation, by the rule written
before the runs (experiments/results/pretrain/RULE.md, B):

- the score of a run is its **cross-fitted** validation score (graphnorm/bench/crossfit.py) on
  a task whose ``train_val`` table has fewer than `CROSSFIT_BELOW_ROWS` rows, its plain
  validation score on the larger ones;
- ``rule="spread"`` (B): per task, the arm with the better mean over the seeds both finished
  wins, unless the difference is within one seed standard deviation (the larger of the two
  arms' population standard deviations): then the two are *tied*, and a tie counts as not
  better;
- ``rule="paired"`` (G): per task, d_s = A_s - B_s on each seed s (signed so that higher is
  better); A is better when the 95 % paired t-interval mean(d) ± t_{0.975, n-1} sd(d) / sqrt(n)
  lies above 0, B when it lies below, *tied* otherwise or with fewer than `PAIRED_SEEDS` common
  seeds. Both arms of a seed share its validation split, so d does not carry the split's
  variance, which the unpaired rule has to swallow.

The test set is never read: a suite folder holding test-scored runs is refused.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from graphnorm.stats.bootstrap import verdict as interval_verdict

CROSSFIT_BELOW_ROWS = 2000
PAIRED_SEEDS = 5  # rule G: a task with fewer common seeds is tied
RULES = ("spread", "paired", "pooled")
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


def verdict(xa: np.ndarray, xb: np.ndarray, higher_is_better: bool, rule: str) -> tuple[str, dict]:
    """(``A``, ``B`` or ``tied``; the paired interval's columns) for one task's seed scores,
    aligned seed by seed."""
    from graphnorm.bench.summary import paired_difference

    sign = 1.0 if higher_is_better else -1.0
    paired = paired_difference(pd.Series(sign * xa), pd.Series(sign * xb), higher_is_better=True)
    columns = {"d_mean": paired["paired_diff_mean"], "d_low": paired["paired_ci95_low"],
               "d_high": paired["paired_ci95_high"]}
    if rule in ("paired", "pooled"):  # pooled: the suite's verdict is `pooled_summary`'s
        if len(xa) < PAIRED_SEEDS or not np.isfinite(columns["d_low"]):
            return "tied", columns
        return interval_verdict(columns["d_low"], columns["d_high"], ("A", "B", "tied")), columns
    if rule != "spread":
        raise ValueError(f"rule {rule!r}: one of {', '.join(RULES)}")
    gain, spread = sign * (xa.mean() - xb.mean()), max(xa.std(), xb.std())
    return ("tied" if abs(gain) <= spread else ("A" if gain > 0 else "B")), columns


def versus(a: Path, b: Path, group: Path, tasks: Optional[list[str]] = None,
           rule: str = "spread") -> pd.DataFrame:
    """One row per task both suites hold: each arm's mean and std over the common seeds, the
    score kind, the paired difference A - B (signed: higher is better) with its 95 %
    t-interval, and the verdict (``A``, ``B`` or ``tied``) by `rule`."""
    from graphnorm.data.tdc import TDC_ADMET_TASKS
    from graphnorm.tasks import HIGHER_IS_BETTER

    if rule not in RULES:
        raise ValueError(f"rule {rule!r}: one of {', '.join(RULES)}")
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
        said, paired = verdict(xa, xb, HIGHER_IS_BETTER[metric], rule)
        rows.append({"task": task, "metric": metric, "score": "cross-fitted" if crossfitted
                     else "validation", "seeds": len(common), "a_variant": va, "b_variant": vb,
                     "a_mean": xa.mean(), "a_std": xa.std(), "b_mean": xb.mean(),
                     "b_std": xb.std(), **paired, "rule": rule, "verdict": said,
                     "seed_list": common, "a_scores": xa.tolist(), "b_scores": xb.tolist()})
    return pd.DataFrame(rows)


def pooled_summary(table: pd.DataFrame) -> dict:
    """RULE.md L over the tasks of `versus`: r = the relative error reduction of A over B per
    (task, seed), clipped to [-1, 1]; its mean over tasks with a two-stage bootstrap
    interval and the verdict (`graphnorm.bench.pooled`)."""
    from graphnorm.bench.pooled import improvements, pooled_interval, pooled_verdict

    by_task = {r["task"]: improvements(r["metric"], r["b_scores"], r["a_scores"])
               for _, r in table.iterrows()}
    interval = pooled_interval(by_task)
    return {**interval, "verdict": pooled_verdict(interval),
            "per_task": {t: float(np.mean(v)) for t, v in by_task.items()}}


TIED_MEANS = {"spread": "the difference is within one seed standard deviation",
              "paired": "the paired 95 % t-interval over the seeds holds 0, or fewer than "
                        f"{PAIRED_SEEDS} seeds"}
TIED_MEANS["pooled"] = TIED_MEANS["paired"]  # per task; the suite's verdict is pooled


def versus_markdown(table: pd.DataFrame, a: str, b: str) -> str:
    """The per-task table and the count of tasks each arm wins."""
    if table.empty:
        return "No task finished in both suites.\n"
    lines = [f"A = {a}", f"B = {b}", "",
             "| task | metric | score | seeds | A (mean ± std) | B (mean ± std) | A − B, paired "
             "(95 % CI, higher is better) | better |", "|---|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        ci = (f"{r['d_mean']:+.4f} [{r['d_low']:+.4f}, {r['d_high']:+.4f}]"
              if np.isfinite(r["d_low"]) else f"{r['d_mean']:+.4f}")
        lines.append(f"| {r['task']} | {r['metric']} | {r['score']} | {r['seeds']} | "
                     f"{r['a_mean']:.4f} ± {r['a_std']:.4f} | {r['b_mean']:.4f} ± "
                     f"{r['b_std']:.4f} | {ci} | {r['verdict']} |")
    n, rule = len(table), table["rule"].iloc[0]
    lines += ["", f"A better on {int((table['verdict'] == 'A').sum())} of {n} tasks, B better on "
              f"{int((table['verdict'] == 'B').sum())}, tied on {int((table['verdict'] == 'tied').sum())} "
              f"(rule {rule}; tied: {TIED_MEANS[rule]})."]
    if rule == "pooled":
        p = pooled_summary(table)
        lines += ["", f"Pooled over {p['tasks']} tasks and {p['pairs']} (task, seed) pairs: A "
                  f"reduces B's error by {p['mean']:+.2%} [95 % interval {p['low']:+.2%}, "
                  f"{p['high']:+.2%}]: A **{p['verdict']}** (relative error reduction, clipped "
                  "to ±1, bootstrap over tasks then seeds)."]
    return "\n".join(lines) + "\n"
