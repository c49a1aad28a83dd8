"""More validation splits of the TDC tasks than the official 5 seeds: validation power for
choosing a lever (issue 35). The 5 official splits resolve a mean relative change of only about
±0.8 % on validation over the 14 small tasks (`tdc_compare.py`'s bootstrap interval), so a
rule on them admits ~1 % losses.

Each task runs as `graphnorm benchmark --data <task table> --split tdc:tdc_set --repeats N`:
repeat k is PyTDC's scaffold split of ``train_val`` with seed k + 1, the suite's seed k for
k < 5 (`graphnorm/data/table_split.py`, ``tdc_split``), and further scaffold splits of the
same ``train_val`` beyond. The fixed test set is scored as always; the extra seeds are not
the leaderboard's protocol and are read for validation only. Seeds 0..4 of an existing board
(``--seeds-from``) are copied in and skipped, so only the new seeds train. The output has the
suite's layout (``<out>/<task>/runs/<variant>/seed<k>``): `tdc_runs_by_seed.py` and
`tdc_compare.py` read it.

    python experiments/tdc_extra_seeds.py --seeds-from experiments/results/tdc_admet/board30 \\
        --out experiments/results/tdc_admet/seeds10/blocks3 --repeats 10 -- --recipe admet
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from graphnorm.bench.tdc_suite import task_settings
from graphnorm.data.tdc import admet_group_dir
from tdc_default_cost import SMALL  # experiments/: the 14 tasks below 2,500 rows
FLAGS = {"data": "--data", "smiles_column": "--smiles-column", "task": "--task",
         "metric": "--metric", "split": "--split"}


def task_flags(task: str) -> list[str]:
    """The benchmark flags that make ``task`` the suite's table (`task_settings`)."""
    settings = task_settings(task, admet_group_dir(None))
    out = [x for key, flag in FLAGS.items() for x in (flag, str(settings[key]))]
    return out + ["--target-columns", *settings["target_columns"]]


def copy_seeds(source: Path, target: Path, repeats: int) -> int:
    """Copy the finished seed folders of ``source/runs/*/`` (k < repeats) into ``target``;
    returns how many."""
    n = 0
    for seed in sorted(source.glob("runs/*/seed*")):
        k = int(seed.name[4:])
        dest = target / "runs" / seed.parent.name / seed.name
        if k < repeats and (seed / "metrics.json").is_file() and not dest.exists():
            shutil.copytree(seed, dest, ignore=shutil.ignore_patterns("*.ckpt"))
            n += 1
    return n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seeds-from", type=Path, help="a suite board whose seeds are reused")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--tasks", default=",".join(SMALL))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("rest", nargs=argparse.REMAINDER, help="-- then the variant's flags")
    args = p.parse_args(argv)
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    for task in args.tasks.split(","):
        out = args.out / task
        if args.seeds_from:
            print(f"[extra-seeds] {task}: {copy_seeds(args.seeds_from / task, out, args.repeats)} "
                  f"seed folders from {args.seeds_from}", flush=True)
        cmd = [sys.executable, "-m", "graphnorm.cli", "benchmark", *task_flags(task),
               "--repeats", str(args.repeats), "--threads", "1", "--jobs", str(args.jobs),
               "--no-progress", "--out", str(out), *rest]
        print("[extra-seeds] " + " ".join(cmd[1:]), flush=True)
        subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
