"""The small-table Graphormer with RDKit's 2D list (``g400/``) against the fast descriptor set
(``g400_fast/``) on the same TDC splits and seeds: per task, the means over the seeds both
have and the paired difference (`graphnorm.bench.compare`), validation and test.

    python experiments/tdc_descriptor_sets.py > experiments/results/tdc_admet/g400_fast/comparison.md
"""
from __future__ import annotations

import sys
from pathlib import Path

from graphnorm.bench.compare import compare
from graphnorm.bench.summary import paired_cell

ROOT = Path(__file__).resolve().parents[1] / "experiments" / "results" / "tdc_admet"


def main(a: str = "g400", b: str = "g400_fast") -> None:
    print(f"| task | metric | seeds | val: 2D list | val: fast | test: 2D list | test: fast | "
          f"test: 2D list - fast, paired by seed ('better on': seeds where the 2D list wins) |\n|---|---|---|---|---|---|---|---|")
    for folder in sorted(p for p in (ROOT / b).iterdir() if (p / "runs" / "sep-bn-bn").is_dir()):
        pair = [ROOT / a / folder.name / "runs" / "sep-bn-bn", folder / "runs" / "sep-bn-bn"]
        try:
            val, test = compare(*pair, split="val"), compare(*pair, split="test")
        except ValueError as e:  # no seed in common yet
            print(f"<!-- {folder.name}: {e} -->", file=sys.stderr)
            continue
        arrow = "↑" if test["higher_is_better"] else "↓"
        print(f"| {folder.name} | {test['metric']} {arrow} | {len(test['seeds'])} | "
              f"{val['a_mean']:.3f} | {val['b_mean']:.3f} | {test['a_mean']:.3f} | "
              f"{test['b_mean']:.3f} | {paired_cell(test, 3)} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
