"""The TDC ADMET board of the default (`--recipe admet`) and `--model gbm`, from the committed
runs' metrics.json, with claims an audit can check.

    python experiments/tdc_default_board.py \\
        --runs experiments/results/tdc_admet/board35 --runs experiments/results/tdc_admet/large32 \\
        --reference experiments/results/tdc_admet/bench:gbm \\
        --out experiments/results/tdc_admet/default_board.md

Reads ``<dir>/<task>/runs/<variant>/seed<k>/metrics.json`` (what `graphnorm benchmark --suite
tdc-admet` writes). ``--runs`` dirs give the default, one variant per task (the first dir that
has the task wins); ``--reference DIR:VARIANT`` gives gbm. Each row names the commit(s) its
runs recorded (``git_sha``), so a reader sees which code produced it.

Standing against the leaderboard snapshot (``leaderboard.csv``), at its 3 decimals:

- ``first``: the mean is better than rank 1 by more than one seed standard deviation;
- ``tied with first``: at least rank 1's value, but not by more than one standard deviation;
- ``top 3``: at least rank 3's value (``= 3``: equal to it at 3 decimals); else ``> 3``.

Counts leave out bioavailability_ma: the snapshot's block for it is a copy of pgp_broccatelli's
(same rank 3 and entries), so it cannot be ranked (21 tasks are counted).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

UNRANKED = {"bioavailability_ma": "the snapshot's block is a copy of pgp_broccatelli's"}
ENTRIES = (("maplight_gnn", "MapLight+GNN"), ("maplight", "MapLight"),
           ("chemprop_rdkit", "Chemprop-RDKit"))


def runs(folder: Path, variant: str | None = None) -> dict[str, list[dict]]:
    """{task: [metrics.json of each seed]} of one benchmark folder (one variant per task)."""
    out: dict[str, dict[str, list[dict]]] = {}
    for f in sorted(folder.glob("*/runs/*/seed*/metrics.json")):
        task, var = f.parents[3].name, f.parents[1].name
        if variant is None or var == variant:
            out.setdefault(task, {}).setdefault(var, []).append(json.loads(f.read_text()))
    for task, by_var in out.items():
        if len(by_var) > 1:
            raise SystemExit(f"{folder}/{task}: several variants {sorted(by_var)}; name one")
    return {task: next(iter(by_var.values())) for task, by_var in out.items()}


def at_least(a: float, b: float, higher: bool) -> bool:
    a, b = round(a, 3), round(b, 3)
    return a >= b if higher else a <= b


def standing(mean: float, std: float, lb: pd.Series) -> str:
    higher = lb["better"] == "higher"
    margin = (mean - lb["rank1"]) if higher else (lb["rank1"] - mean)
    if margin > std:
        return "first"
    if at_least(mean, lb["rank1"], higher):
        return "tied with first"
    if at_least(mean, lb["rank3"], higher):
        return "top 3 (= 3)" if round(mean, 3) == round(lb["rank3"], 3) else "top 3"
    return "> 3"


def row(task: str, variant: str, records: list[dict], lb: pd.DataFrame) -> dict:
    metric = records[0]["metric"]
    test = np.array([r[f"test_{metric}"] for r in records], dtype=float)
    cpu = [r.get("cpu_time_s") for r in records]
    shas = sorted({str(r.get("git_sha", "?"))[:7] for r in records})
    out = {"task": task, "metric": metric, "variant": variant, "code": ", ".join(shas),
           "seeds": len(test), "test_mean": float(test.mean()), "test_std": float(test.std()),
           "cpu_s": float(np.mean(cpu)) if None not in cpu else None,
           "by_seed": {r["seed"]: r[f"test_{metric}"] for r in records}}
    ref = lb.loc[task]
    out["standing"] = "unranked †" if task in UNRANKED else standing(
        out["test_mean"], out["test_std"], ref)
    higher = ref["better"] == "higher"
    out["beats_chemprop_rdkit"] = (round(out["test_mean"], 3) != round(ref["chemprop_rdkit"], 3)
                                   and at_least(out["test_mean"], ref["chemprop_rdkit"], higher))
    out["higher"] = higher
    return out


def beats(a: dict, b: dict) -> bool:
    """a better than b on test at 3 decimals, over the seeds both have."""
    seeds = sorted(set(a["by_seed"]) & set(b["by_seed"]))
    ma = round(float(np.mean([a["by_seed"][s] for s in seeds])), 3)
    mb = round(float(np.mean([b["by_seed"][s] for s in seeds])), 3)
    return ma > mb if a["higher"] else ma < mb


def markdown(rows: list[dict], lb: pd.DataFrame, reference: str) -> str:
    head = ("| task | metric | variant | code | test (mean ± std) | seeds | CPU-s/seed | standing "
            "| rank 1 | rank 3 | " + " | ".join(n for _, n in ENTRIES) + " |\n"
            "|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(ENTRIES) + "\n")
    lines = []
    for r in rows:
        ref = lb.loc[r["task"]]
        cpu = "" if r["cpu_s"] is None else f"{r['cpu_s']:.0f}"
        lines.append(f"| {r['task']} | {r['metric']} | {r['variant']} | {r['code']} | "
                     f"{r['test_mean']:.3f} ± {r['test_std']:.3f} | {r['seeds']} | {cpu} | "
                     f"{r['standing']} | {ref['rank1']:.3f} | {ref['rank3']:.3f} | "
                     + " | ".join(f"{ref[c]:.3f}" for c, _ in ENTRIES) + " |")
    text = head + "\n".join(lines) + "\n\n"
    text += "".join(f"† {t}: {why}; not counted.\n" for t, why in UNRANKED.items()) + "\n"
    text += (f"Counts over the {len(lb.index.difference(list(UNRANKED)))} ranked tasks "
             "(5 seeds each; ties at the leaderboard's 3 decimals are not wins):\n\n"
             f"| variant | first | tied with first | top 3 (of them = rank 3) | beats "
             f"Chemprop-RDKit | beats {reference} |\n|---|---|---|---|---|---|\n")
    ref_rows = {r["task"]: r for r in rows if r["variant"] == reference}
    for variant in dict.fromkeys(r["variant"] for r in rows):
        part = [r for r in rows if r["variant"] == variant and r["task"] not in UNRANKED]
        n = lambda *s: sum(r["standing"] in s for r in part)
        top3 = n("first", "tied with first", "top 3", "top 3 (= 3)")
        wins = ("-" if variant == reference else
                f"{sum(beats(r, ref_rows[r['task']]) for r in part if r['task'] in ref_rows)}")
        text += (f"| {variant} | {n('first')} | {n('tied with first')} | {top3} "
                 f"({n('top 3 (= 3)')}) | {sum(r['beats_chemprop_rdkit'] for r in part)} | "
                 f"{wins} |\n")
    return text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", action="append", required=True, type=Path,
                   help="a benchmark folder of the default (several: the first with a task)")
    p.add_argument("--reference", required=True, help="DIR:VARIANT, e.g. .../bench:gbm")
    p.add_argument("--leaderboard", type=Path,
                   default=Path(os.environ.get("GRAPHNORM_RAW_DIR", "../shared/datasets"))
                   / "tdc_admet_group" / "leaderboard.csv")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    lb = pd.read_csv(args.leaderboard).set_index("task")
    default: dict[str, list[dict]] = {}
    for folder in args.runs:
        for task, records in runs(folder).items():
            default.setdefault(task, records)
    ref_dir, ref_variant = args.reference.rsplit(":", 1)
    reference = runs(Path(ref_dir), ref_variant)
    rows = ([row(t, "default", default[t], lb) for t in sorted(default)]
            + [row(t, ref_variant, reference[t], lb) for t in sorted(reference)])
    command = " ".join(sys.argv[1:] if argv is None else argv)
    text = (f"# The default and gbm on the TDC ADMET board\n\ncommand: `python "
            f"experiments/tdc_default_board.py {command}`\n\nStanding: `first` = better than "
            "rank 1 by more than one seed standard deviation; `tied with first` = at least rank "
            "1's value at 3 decimals, within one standard deviation; `top 3` = at least rank 3's "
            "value. `code`: the commit each row's runs recorded.\n\n"
            + markdown(rows, lb, ref_variant))
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
