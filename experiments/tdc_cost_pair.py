"""Two cost measurements of `tdc_default_cost.py --seeds 5` side by side: the code before a
change and after, measured the same day on the same host, one after the other.

The gbm command is the same code in both (`--models gbm`: no ensemble), so its change is
the host's drift between the two measurements (each task's gbm and default commands run
minutes apart, the two measurements half an hour apart); the default / gbm ratio of each
measurement, its own gbm beside it, is the comparison that drift does not move.

    python experiments/tdc_cost_pair.py --before experiments/results/tdc_admet/cost/default_cost33_before.md \\
        --after experiments/results/tdc_admet/cost/default_cost33.md --out experiments/results/tdc_admet/cost/default_cost33_pair.md
"""
from __future__ import annotations

import argparse
from pathlib import Path


def rows(path: Path) -> dict[str, dict]:
    """task -> {gbm, default} process CPU-s per seed, from a `tdc_default_cost.py` table."""
    out = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 8 or not cells[1].isdigit():
            continue
        out[cells[0]] = dict(gbm=float(cells[5].split("/")[0]), default=float(cells[6].split("/")[0]),
                             steps=sum(int(s) for s in cells[2].split(",")))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--limit", type=float, default=3.0, help="issue 35's ratio target")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    before, after = rows(args.before), rows(args.after)
    lines = [f"command: `python experiments/tdc_cost_pair.py --before {args.before} --after {args.after}`", "",
             "CPU-s per seed (process: the 5-seed command on an empty cache, / 5)", "",
             "| task | default before / after | change | Graphormer steps, 5 seeds, before / after "
             "| gbm before / after | change (the host) | ratio before / after | ratio change |",
             "|---|---|---|---|---|---|---|---|"]
    counts, changes = dict(before=0, after=0), dict(default=[], gbm=[], ratio=[])
    for task in sorted(set(before) & set(after)):
        b, a = before[task], after[task]
        ratio = dict(before=b["default"] / b["gbm"], after=a["default"] / a["gbm"])
        for k, v in ratio.items():
            counts[k] += v <= args.limit
        change = {k: 100 * (x / y - 1) for k, x, y in (("default", a["default"], b["default"]),
                                                       ("gbm", a["gbm"], b["gbm"]),
                                                       ("ratio", ratio["after"], ratio["before"]))}
        for k, v in change.items():
            changes[k].append(v)
        lines.append(f"| {task} | {b['default']:.1f} / {a['default']:.1f} | {change['default']:+.0f} % | "
                     f"{b['steps']} / {a['steps']} | {b['gbm']:.1f} / {a['gbm']:.1f} | {change['gbm']:+.0f} % | "
                     f"{ratio['before']:.2f}x / {ratio['after']:.2f}x | {change['ratio']:+.0f} % |")
    n = len(changes["ratio"])
    mean = {k: sum(v) / n for k, v in changes.items()}
    lines += ["", f"- mean change over {n} tasks: default {mean['default']:+.1f} %, gbm (the same code: "
              f"the host) {mean['gbm']:+.1f} %, default / gbm {mean['ratio']:+.1f} %",
              f"- ratio ≤ {args.limit:g}x: before {counts['before']} of {n}, after {counts['after']} of {n}"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
