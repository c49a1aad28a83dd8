"""[VNode] and token geometry of every seed of a benchmark, as mean ± std per norm.

``graphnorm analyze`` compares two checkpoints; one checkpoint per norm can mislead when
seeds differ, so this script runs the same metrics (uniformity L_U, EV_1, effective rank;
graphnorm.analysis.metrics) on the best checkpoint of every (norm, seed) run under a
``graphnorm benchmark`` output directory and tabulates them.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/analyze_seeds.py \\
        --bench bench/zinc-subset --out experiments/results/zinc-subset/analysis
"""
from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
from pathlib import Path

import torch
from torch.utils.data import Subset

from graphnorm.analysis.analyze import collect_embeddings
from graphnorm.analysis.metrics import embedding_report
from graphnorm.checkpoint import load_checkpoint
from graphnorm.data import load_dataset

METRICS = ("uniformity", "ev_1", "effective_rank")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, required=True, help="graphnorm benchmark --out directory")
    ap.add_argument("--dataset", default="zinc-subset")
    ap.add_argument("--split", default="test")
    ap.add_argument("--limit", type=int, default=1000, help="graphs of the split")
    ap.add_argument("--max-token-samples", type=int, default=20000)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ckpts = sorted(args.bench.glob("runs/*/seed*/best.ckpt"))
    if not ckpts:
        raise SystemExit(f"no runs/*/seed*/best.ckpt under {args.bench}")
    rows = []
    for i, path in enumerate(ckpts, 1):
        loaded = load_checkpoint(path)
        # featurized as this checkpoint was trained (load_dataset caches per featurizer)
        split = load_dataset(args.dataset, featurizer=loaded.featurizer, progress=False)[args.split]
        split = Subset(split, range(min(args.limit, len(split))))
        emb = collect_embeddings(loaded, split, max_token_samples=args.max_token_samples)
        row = {"norm": loaded.meta["model_config"]["norm"], "seed": path.parent.name}
        for kind, z in emb.items():
            rep = embedding_report(z)
            row.update({f"{kind}_{m}": rep[m] for m in METRICS})
        rows.append(row)
        print(f"[{i}/{len(ckpts)}] {row['norm']} {row['seed']}: [VNode] L_U "
              f"{row['vnode_uniformity']:.3f} EV_1 {row['vnode_ev_1']:.3f}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "per_seed.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"# [VNode] and token geometry over seeds ({args.dataset} {args.split}, "
             f"{len(split)} graphs)", "",
             f"Command: `python experiments/analyze_seeds.py --bench {args.bench} --out {args.out}`",
             f"git sha: {sha}; data checksum: {data.checksum}", "",
             "| norm | seeds | [VNode] L_U | [VNode] EV_1 | [VNode] eff. rank | tokens L_U | tokens EV_1 |",
             "|---|---|---|---|---|---|---|"]
    for norm in dict.fromkeys(r["norm"] for r in rows):
        mine = [r for r in rows if r["norm"] == norm]

        def ms(key: str) -> str:
            vals = [r[key] for r in mine]
            sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
            return f"{statistics.mean(vals):.3f} ± {sd:.3f}"

        lines.append(f"| `{norm}` | {len(mine)} | {ms('vnode_uniformity')} | {ms('vnode_ev_1')} "
                     f"| {ms('vnode_effective_rank')} | {ms('tokens_uniformity')} | {ms('tokens_ev_1')} |")
    lines += ["", "mean ± sample std over seeds; L_U lower = more uniform; EV_1 = variance share "
              "of the first principal direction. Per run: per_seed.csv."]
    (args.out / "per_seed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
