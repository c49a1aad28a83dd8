"""Two member combinations of ``tdc_members.py`` side by side, task-seed by task-seed: which is
better on validation (what chooses) and on test (beside it), with a two-sided sign test and
the mean relative change with its 95 % bootstrap interval (seeds resampled within each task):
how large a change the splits can see. ``--judge val_cv`` judges on the cross-fitted validation score
(``tdc_members.py``'s ``val_cv``) instead: the fair score of a rule that fits on validation.

    python experiments/tdc_compare.py --by-seed A/members_by_seed.csv [--by-seed B/...] \\
        --new "gbm-admet+sep-bn-bn-s150 (w_gbm-admet=0.7)" \\
        --old "gbm-admet+sep-bn-bn (w_gbm-admet=0.7)" --out compare.md
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

LOWER = {"mae", "rmse"}  # every other TDC metric: higher is better


def paired(rows: pd.DataFrame, new: str, old: str, judge: str = "val") -> pd.DataFrame:
    """One row per task and seed that both combinations have: val (the ``judge`` column)
    and test of each, and whether ``new`` is better or worse (a tie is neither; the sign test
    leaves ties out)."""
    missing = [m for m in (new, old) if m not in set(rows["members"])]
    if missing:
        raise SystemExit(f"no rows of {missing[0]!r}; the combinations there: "
                         f"{', '.join(sorted(set(rows['members'])))}")
    wide = rows[rows["members"].isin([new, old])].pivot_table(
        index=["task", "metric", "seed"], columns="members", values=[judge, "test", "cpu_s"],
        dropna=False)  # CPU-s may be unknown (a rescoring measures no run's CPU)
    wide = wide.dropna(subset=[(c, m) for c in (judge, "test") for m in (new, old)])
    out = pd.DataFrame(index=wide.index)
    for split, column in (("val", judge), ("test", "test"), ("cpu_s", "cpu_s")):
        out[f"{split}_new"], out[f"{split}_old"] = wide[(column, new)], wide[(column, old)]
    sign = [-1.0 if m in LOWER else 1.0 for m in out.index.get_level_values("metric")]
    for split in ("val", "test"):
        gain = (out[f"{split}_new"] - out[f"{split}_old"]) * sign
        out[f"{split}_better"], out[f"{split}_worse"] = gain > 0, gain < 0
        out[f"{split}_rel"] = gain / out[f"{split}_old"].abs()
    return out.reset_index()


def mean_interval(rel: pd.Series, task: pd.Series, draws: int = 4000, seed: int = 0) -> tuple:
    """95 % percentile bootstrap interval of ``rel``'s mean, each draw resampling the rows of
    every task with replacement (a task keeps its count of seeds, so every draw weighs the
    tasks as the data do)."""
    rng = np.random.default_rng(seed)
    groups = [rel[task == t].to_numpy() for t in task.unique()]
    means = np.zeros(draws)
    for g in groups:
        means += rng.choice(g, size=(draws, len(g))).sum(axis=1)
    means /= sum(len(g) for g in groups)
    return tuple(np.percentile(means, [2.5, 97.5]))


def _cpu(values: pd.Series) -> str:
    return "-" if values.isna().all() else f"{values.mean():.0f}"


def report(pairs: pd.DataFrame, new: str, old: str, command: str, judge: str = "val") -> str:
    note = (["val = cross-fitted on the validation rows (`val_cv`): the weights chosen on one "
             "half, scored on the other", ""] if judge == "val_cv" else [])
    lines = [f"# {new} against {old}", "", f"command: `{command}`", "", *note,
             "| task | metric | seeds | val new | val old | test new | test old | CPU-s new | "
             "CPU-s old | val: new better |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (task, metric), g in pairs.groupby(["task", "metric"]):
        lines.append(f"| {task} | {metric} | {len(g)} | {g.val_new.mean():.4f} | "
                     f"{g.val_old.mean():.4f} | {g.test_new.mean():.4f} | {g.test_old.mean():.4f} "
                     f"| {_cpu(g.cpu_s_new)} | {_cpu(g.cpu_s_old)} | "
                     f"{int(g.val_better.sum())} of {len(g)} |")
    lines.append("")
    for split in ("val", "test"):
        wins, losses = int(pairs[f"{split}_better"].sum()), int(pairs[f"{split}_worse"].sum())
        p = binomtest(wins, wins + losses).pvalue if wins + losses else float("nan")
        by_task = pairs.groupby("task")[f"{split}_rel"].mean()
        ties = len(pairs) - wins - losses
        low, high = mean_interval(pairs[f"{split}_rel"], pairs["task"])
        lines.append(f"- {split}: new better on {wins} task-seeds, worse on {losses}"
                     f"{f', tied on {ties}' if ties else ''} (sign test p = {p:.3f}), "
                     f"on {int((by_task > 0).sum())} of {len(by_task)} tasks by the mean; "
                     f"mean relative change {100 * pairs[f'{split}_rel'].mean():+.2f} % "
                     f"(95 % bootstrap interval {100 * low:+.2f} to {100 * high:+.2f} %)")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--by-seed", action="append", required=True, help="members_by_seed.csv")
    p.add_argument("--new", required=True)
    p.add_argument("--old", required=True)
    p.add_argument("--tasks", help="comma list (default: every task both have)")
    p.add_argument("--judge", choices=("val", "val_cv"), default="val",
                   help="the validation column that judges (val_cv: cross-fitted)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    rows = pd.concat([pd.read_csv(f) for f in args.by_seed]).drop_duplicates(
        ["task", "seed", "members"])
    if args.tasks:
        rows = rows[rows["task"].isin(args.tasks.split(","))]
    pairs = paired(rows, args.new, args.old, args.judge)
    if pairs.empty:
        raise SystemExit(f"no task-seed has both {args.new!r} and {args.old!r}")
    text = report(pairs, args.new, args.old, "python " + " ".join(
        [Path(sys.argv[0]).as_posix()] + [f'"{a}"' if " " in a else a for a in sys.argv[1:]]), args.judge)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
