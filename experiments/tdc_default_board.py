"""One board of all 22 TDC ADMET tasks from member combinations scored by
``experiments/tdc_members.py``: a combination per task set (e.g. the ADMET-booster features on
the 14 tasks they never saw, plain gbm features on the 8 whose labels they learned), beside
gbm alone, with the counts the issue's targets name (rank 1, top 3, beats Chemprop-RDKit,
beats our gbm).

    python experiments/tdc_default_board.py \\
        --by-seed experiments/results/tdc_admet/g400/members/members_by_seed.csv \\
        --by-seed experiments/results/tdc_admet/gbm_admet/members/members_by_seed.csv \\
        --use "gbm-admet+sep-bn-bn (w_gbm-admet=0.7)" --else "gbm+sep-bn-bn (w_gbm=0.7)" \\
        --out experiments/results/tdc_admet/default_board.md
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from graphnorm.bench.tdc_suite import default_leaderboard
from tdc_members import board_table  # experiments/: the board form of member combinations


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--by-seed", action="append", required=True, help="members_by_seed.csv")
    p.add_argument("--use", action="append", required=True,
                   help="a combination, on every task where it has all --seeds seeds; several: "
                   "the first such one")
    p.add_argument("--else", dest="fallback", required=True, help="on the other tasks")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--reference", default="gbm")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    table = pd.concat([pd.read_csv(f) for f in args.by_seed]).drop_duplicates(
        ["task", "seed", "members"])
    chosen = []
    for _, part in table.groupby("task"):
        full = [u for u in args.use if part["members"].eq(u).sum() >= args.seeds]
        chosen.append(part[part["members"] == (full[0] if full else args.fallback)])
    default = pd.concat(chosen).assign(members="default")
    uses = ", else ".join(f"`{u}`" for u in args.use)
    text = (f"# One default on all 22 tasks\n\ncommand: `python experiments/tdc_default_board.py "
            f"{' '.join(sys.argv[1:] if argv is None else argv)}`\n\n`default` is {uses} "
            f"where scored on all {args.seeds} seeds, else `{args.fallback}`.\n\n" +
            board_table(pd.concat([table, default]), ["default", args.reference],
                        default_leaderboard(None), args.reference))
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
