"""Per-seed rows of a `benchmark --suite tdc-admet --recipe admet` output, in the form of
``experiments/tdc_members.py``'s ``members_by_seed.csv`` (so `tdc_compare.py` and
`tdc_default_board.py` read them): for each task and seed, the default as the command ran it
(``LABEL``: gbm and the Graphormer averaged at the recipe's weight) and its two members
(``LABEL:gbm``, ``LABEL:graphormer``). ``val_cv`` repeats ``val`` (nothing cross-fitted).

    python experiments/tdc_runs_by_seed.py experiments/results/tdc_admet/board27 --label d27 \\
        --out experiments/results/tdc_admet/board27/by_seed.csv
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from graphnorm.run_folder import read_member_weights, read_metrics


def rows(bench: Path, label: str) -> list[dict]:
    out = []
    for run in sorted(bench.glob("*/runs/*/seed*/metrics.json")):
        folder, task, seed = run.parent, run.parents[3].name, run.parent.name
        default = read_metrics(folder)
        metric = default["metric"]
        parts = {label: default}
        for name, sub in ((":gbm", "gbm"), (":graphormer", "model_0")):
            if (folder / sub / "metrics.json").is_file():
                parts[label + name] = read_metrics(folder / sub)
        weights = read_member_weights(folder, len(parts) - 1)
        for members, m in parts.items():
            out.append({"task": task, "metric": metric, "seed": seed, "members": members,
                        "val": m[f"val_{metric}"], "val_cv": m[f"val_{metric}"],
                        "test": m[f"test_{metric}"], "cpu_s": m.get("cpu_time_s"),
                        "w": json.dumps(weights) if members == label and weights else ""})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench", type=Path)
    p.add_argument("--label", required=True)
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    table = pd.DataFrame(rows(args.bench, args.label))
    if table.empty:
        raise SystemExit(f"{args.bench}: no finished run (*/runs/*/seed*/metrics.json)")
    table.to_csv(args.out, index=False)
    print(f"{len(table)} rows, {table['task'].nunique()} tasks -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
