"""``graphnorm board``: the TDC ADMET board of one configuration gathered from finished
benchmark folders, beside a reference variant (graphnorm/bench/tdc_published.py).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from graphnorm.cli.common import show_defaults


def add_parser(sub) -> argparse.ArgumentParser:
    c = sub.add_parser("board", help="the TDC ADMET board from finished benchmark folders",
                       description="One row per task from the first folder that holds it "
                       "(folders of `benchmark --suite tdc-admet --final`; DIR or DIR:VARIANT), "
                       "its standing on the leaderboard snapshot, and counts over the ranked "
                       "tasks. Reads finished runs only; trains and scores nothing.")
    c.add_argument("runs", nargs="+", help="benchmark folders, in order of preference")
    c.add_argument("--label", default="default", help="the name the gathered rows are shown under")
    c.add_argument("--reference", help="DIR:VARIANT shown beside, with the tasks beaten, "
                   "e.g. bench/tdc-gbm:gbm")
    c.add_argument("--leaderboard", help="the snapshot (default: "
                   "$GRAPHNORM_RAW_DIR/tdc_admet_group/leaderboard.csv)")
    c.add_argument("--out", help="also write the Markdown here (and the table beside it as .csv)")
    c.set_defaults(func=run)
    show_defaults(c, train=False)
    return c


def run(args: argparse.Namespace) -> int:
    from graphnorm.bench.tdc_published import published_board, published_markdown
    from graphnorm.bench.tdc_suite import default_leaderboard

    leaderboard = Path(args.leaderboard) if args.leaderboard else default_leaderboard(None)
    if leaderboard is None or not leaderboard.is_file():
        raise FileNotFoundError(f"{leaderboard or '$GRAPHNORM_RAW_DIR/tdc_admet_group/leaderboard.csv'}"
                                ": no leaderboard snapshot; pass --leaderboard")
    table, wins = published_board(args.runs, leaderboard, args.label, args.reference)
    command = " ".join(["graphnorm board", *args.runs, "--label", args.label]
                       + (["--reference", args.reference] if args.reference else []))
    text = published_markdown(table, wins, args.reference, command)
    if args.out:
        Path(args.out).write_text(text)
        table.to_csv(Path(args.out).with_suffix(".csv"), index=False)
    print(text, end="")
    return 0
