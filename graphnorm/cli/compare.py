"""``graphnorm compare``: two benchmark variants paired by seed (graphnorm/bench/compare.py), or
two TDC selection suites task by task (graphnorm/bench/tdc_versus.py).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from graphnorm.cli.common import show_defaults


def add_parser(sub) -> argparse.ArgumentParser:
    c = sub.add_parser("compare", help="two benchmark variants paired by seed, across folders",
                       description="A - B per seed both have finished: mean ± std, 95 % "
                       "t-interval and wins. A and B are <benchmark out>/runs/<variant> folders, "
                       "e.g. two recipes' ln runs.")
    c.add_argument("a", help="variant folder of seed<k>/metrics.json")
    c.add_argument("b", help="the one it is compared against")
    c.add_argument("--split", default="test", choices=["val", "test"])
    c.add_argument("--json", help="also write the numbers to this file")
    c.add_argument("--suite", choices=["tdc-admet"], help="A and B are two selection suites' "
                   "--out folders (benchmark --suite tdc-admet, no --final): per task, the "
                   "cross-fitted validation score on tables under 2,000 rows, the plain one "
                   "above; better only beyond one seed standard deviation (needs --split val)")
    c.add_argument("--rule", default="spread", choices=["spread", "paired", "pooled"],
                   help="--suite: 'spread' calls a task tied within one seed standard deviation; "
                   "'paired' judges the per-seed differences by their 95 %% t-interval; "
                   "'pooled' adds one verdict over all tasks and seeds: the mean relative error "
                   "reduction and its bootstrap interval (--json then writes {pooled, tasks})")
    c.add_argument("--tasks", help="--suite: comma list of task names (default: all)")
    c.add_argument("--tdc-dir", dest="tdc_dir", help="--suite: the TDC ADMET group (default: "
                   "$GRAPHNORM_RAW_DIR/tdc_admet_group)")
    c.set_defaults(func=run)
    show_defaults(c, train=False)
    return c


def run(args: argparse.Namespace) -> int:
    import json

    from graphnorm.run_folder import json_safe
    from graphnorm.bench.compare import compare, format_comparison

    if args.suite:  # two selection suites, task by task, on validation
        from graphnorm.bench.tdc_versus import pooled_summary, versus, versus_markdown
        from graphnorm.data.tdc import admet_group_dir

        if args.split != "val":
            raise ValueError("--suite compares selection suites on validation: add --split val")
        table = versus(Path(args.a), Path(args.b), admet_group_dir(args.tdc_dir),
                       args.tasks.split(",") if args.tasks else None, rule=args.rule)
        print(versus_markdown(table, args.a, args.b))
        if args.json:
            text = table.to_json(orient="records", indent=2)
            if args.rule == "pooled" and not table.empty:
                text = json.dumps({"pooled": pooled_summary(table),
                                   "tasks": json.loads(text)}, indent=2)
            Path(args.json).write_text(text + "\n")
        return 0
    result = compare(Path(args.a), Path(args.b), split=args.split)
    print(format_comparison(result))
    if args.json:
        Path(args.json).write_text(json.dumps(json_safe(result), indent=2) + "\n")
    return 0
