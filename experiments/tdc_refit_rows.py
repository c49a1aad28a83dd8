"""A board's rows as the default with ``--tree-refit`` scores them, from a refit check.

``tdc_refit_check.py`` refits each run's gbm member on train + validation and scores the
ensemble with the run's own Graphormer predictions and weights (``refit`` / ``refit:gbm``
rows' test; on the 14 small tasks that equalled the command's own runs to 1.8e-6, board31).
The command reports validation from the train-only fit, so the board's own validation is
kept: rows ``LABEL`` and ``LABEL:gbm`` = the board's ``OLD`` and ``OLD:gbm`` rows with test
replaced by the refit's.

    python experiments/tdc_refit_rows.py --board experiments/results/tdc_admet/large27/by_seed.csv \\
        --old l27 --check experiments/results/tdc_admet/refit31/large27_halves_by_seed.csv \\
        --label l31 --out experiments/results/tdc_admet/refit31/large31_by_seed.csv
"""
from __future__ import annotations

import argparse

import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", required=True, help="a board's by_seed.csv")
    ap.add_argument("--old", required=True, help="its label of the default (e.g. l27)")
    ap.add_argument("--check", required=True, help="tdc_refit_check.py's CSV of those runs")
    ap.add_argument("--label", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    board, check = pd.read_csv(args.board), pd.read_csv(args.check)
    parts = []
    for suffix in ("", ":gbm"):
        rows = board[board["members"] == args.old + suffix].drop(columns="test")
        refit = check[check["members"] == "refit" + suffix][["task", "seed", "test"]]
        merged = rows.merge(refit, on=["task", "seed"], how="inner", validate="one_to_one")
        if len(merged) != len(rows):
            missing = sorted(set(rows["task"]) - set(merged["task"]))
            raise SystemExit(f"{args.check}: no refit rows for {', '.join(missing) or 'some seeds'}")
        parts.append(merged.assign(members=args.label + suffix)[board.columns])
    pd.concat(parts).to_csv(args.out, index=False)
    print(f"wrote {args.out} ({sum(map(len, parts))} rows)")


if __name__ == "__main__":
    main()
