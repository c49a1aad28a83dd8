"""When does the 400-step Graphormer peak on validation? Per TDC task of the g400 campaign:
the training-set size, the step of the best validation score (the checkpoint `train` keeps),
and what stopping at 100, 200 or 300 steps would have kept of the validation score (read from
each run's logs/metrics.csv, every 50 steps). Validation only; test is not read.

    python experiments/tdc_best_step.py experiments/results/tdc_admet/g400 > experiments/results/tdc_admet/g400/best_step.md
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from graphnorm.tasks import HIGHER_IS_BETTER


def curve(run: Path) -> tuple[str, pd.DataFrame]:
    log = pd.read_csv(run / "logs" / "metrics.csv")
    col = next(c for c in log.columns if c.startswith("val/"))
    return col[4:], log.dropna(subset=[col])[["step", col]].rename(columns={col: "val"})


def main(root: Path) -> None:
    rows = []
    for run in sorted(root.glob("*/runs/*/seed*")):
        if not (run / "metrics.json").is_file() or not (run / "logs" / "metrics.csv").is_file():
            continue
        meta = json.loads((run / "metrics.json").read_text())
        metric, c = curve(run)
        higher = HIGHER_IS_BETTER[metric]
        best = c.val.max() if higher else c.val.min()
        step_best = int(c.step[c.val.idxmax() if higher else c.val.idxmin()])
        n_train = json.loads((run / "data_report.json").read_text())["split_sizes"]["train"]
        row = {"task": run.parts[-4], "seed": run.name, "train": n_train, "steps": meta["steps"],
               "best_step": step_best, "metric": metric}
        for cut in (100, 200, 300):
            part = c[c.step <= cut]
            kept = (part.val.max() if higher else part.val.min()) if len(part) else float("nan")
            # the score lost by stopping at `cut`, in the metric's units (positive = worse)
            row[f"loss@{cut}"] = (best - kept) if higher else (kept - best)
        rows.append(row)
    df = pd.DataFrame(rows)
    agg = df.groupby("task").agg(train=("train", "median"), seeds=("seed", "count"),
                                 best_step=("best_step", "median"),
                                 **{f"loss@{k}": (f"loss@{k}", "mean") for k in (100, 200, 300)},
                                 metric=("metric", "first")).sort_values("train")
    print("| task | train molecules | seeds | median best step | val lost at 100 | at 200 | at 300 | metric |")
    print("|---|---|---|---|---|---|---|---|")
    for t, r in agg.iterrows():
        print(f"| {t} | {r.train:.0f} | {r.seeds} | {r.best_step:.0f} | {r['loss@100']:.4f} | "
              f"{r['loss@200']:.4f} | {r['loss@300']:.4f} | {r.metric} |")
    print(f"\n{len(df)} runs; best step <= 200 in {(df.best_step <= 200).mean():.0%} of them.")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
