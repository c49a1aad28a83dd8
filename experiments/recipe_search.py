"""Search for a Graphormer recipe that converges fast on a 2-core CPU (ZINC-subset).

Every variant is an ordinary ``graphnorm train`` run under a wall-time budget, ``--jobs``
at once with one thread each; a finished run (metrics.json) is skipped, so the search
resumes. Writes ``OUT/search.md`` (one row per variant) and ``OUT/search.csv``.

    python experiments/recipe_search.py --round 1 --budget 5m --jobs 2 \
        --out experiments/results/recipe_search
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pandas as pd

from graphnorm.bench.benchmark import run_parallel
from graphnorm.train.config import TrainConfig

# a fast shape: shallower and wider than slim (12 x 80) uses CPU GEMMs better
WIDE = dict(num_layers=4, hidden=128, ffn_hidden=256, heads=8)
FAST = dict(batch_size=64, lr=1e-3, dropout=0.0, attention_dropout=0.0, model=WIDE)
# the best of round 1: GraphGPS-style local GINE branch, random-walk PE, [VNode] + sum readout
GPS = dict(FAST, readout="vnode+sum", rwpe_steps=16, local_mp="gine")
N64 = dict(num_layers=4, hidden=64, ffn_hidden=128, heads=8)

ROUNDS = {
    1: {
        "slim-cpu": dict(batch_size=256, lr=1e-3, dropout=0.1, attention_dropout=0.0),
        "wide": dict(FAST),
        "wide+sum": dict(FAST, readout="vnode+sum"),
        "wide+sum+rwpe": dict(FAST, readout="vnode+sum", rwpe_steps=16),
        "wide+sum+rwpe+gine": dict(FAST, readout="vnode+sum", rwpe_steps=16, local_mp="gine"),
        "gine": dict(model_name="gine", batch_size=64, lr=1e-3, dropout=0.0),
    },
    2: {
        "gps-b32": dict(GPS, batch_size=32),
        "gps-lr2e-3": dict(GPS, lr=2e-3),
        "gps-3x128": dict(GPS, model=dict(WIDE, num_layers=3)),
        "gps-6x64": dict(GPS, model=dict(num_layers=6, hidden=64, ffn_hidden=128, heads=8)),
        "gps-ln": dict(GPS, norm="ln"),
        "gps-unbucketed": dict(GPS, bucket_by_size=False),
    },
    3: {  # round 2: narrower and shallower wins at 5 min (more epochs); norms on the tokens
        "gps-4x64": dict(GPS, model=N64),
        "gps-4x64-bn": dict(GPS, model=N64, norm="bn"),
        "gps-4x64-sepbnbn": dict(GPS, model=N64, norm="sep:bn+bn"),
        "gps-3x96": dict(GPS, model=dict(num_layers=3, hidden=96, ffn_hidden=192, heads=8)),
        "gps-6x64-ffn64": dict(GPS, model=dict(N64, num_layers=6, ffn_hidden=64)),
        "gps-8x64": dict(GPS, model=dict(N64, num_layers=8)),
    },
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--round", type=int, default=1, choices=sorted(ROUNDS))
    ap.add_argument("--budget", default="5m")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", help="comma-separated variant names")
    ap.add_argument("--out", default="experiments/results/recipe_search")
    args = ap.parse_args()
    out = Path(args.out)
    base = TrainConfig(dataset="zinc-subset", norm="sep:bn+ln", max_time=args.budget,
                       raw_dir=os.environ.get("GRAPHNORM_RAW_DIR"), seed=args.seed)
    variants = ROUNDS[args.round]
    if args.only:
        variants = {k: v for k, v in variants.items() if k in args.only.split(",")}
    todo = []
    for k, (name, kw) in enumerate(variants.items(), 1):
        run_dir = out / "runs" / f"{name}-{args.budget}" / f"seed{args.seed}"
        if (run_dir / "metrics.json").is_file():
            continue
        cfg = dataclasses.replace(base, **kw, out=str(run_dir), resume=(run_dir / "last.ckpt").is_file())
        cfg.model = dict(cfg.model)
        todo.append((k, cfg))
    load = os.getloadavg()
    print(f"[search] round {args.round}: {len(todo)} runs of {args.budget}, {args.jobs} jobs x 1 thread, "
          f"load {load[0]:.2f}", flush=True)
    if todo:
        run_parallel(todo, len(variants), args.jobs)
    summarize(out)


def summarize(out: Path) -> pd.DataFrame:
    rows = []
    for path in sorted(out.glob("runs/*/seed*/metrics.json")):
        m = json.loads(path.read_text())
        rows.append({"variant": path.parent.parent.name, "seed": m["seed"], "model": m.get("model"),
                     "norm": m["norm"], "params": m["params"], "budget_s": m.get("budget_s"),
                     "wall_s": m["wall_time_s"], "epochs": m["epochs"], "steps": m["steps"],
                     "graphs_per_s": m["train_graphs_per_s"], "val_mae": round(m["val_mae"], 4),
                     "test_mae": round(m["test_mae"], 4), "git_sha": m["git_sha"],
                     "data_checksum": m["data_checksum"][:12]})
    df = pd.DataFrame(rows).sort_values("val_mae")
    df.to_csv(out / "search.csv", index=False)
    cpu = subprocess.run(["sh", "-c", "lscpu | grep 'Model name' | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    header = (f"# Recipe search, ZINC-subset (sorted by val MAE)\n\nHardware: {cpu}, 2 cores; each run "
              f"one thread, two runs at a time. Command: `python experiments/recipe_search.py "
              f"--round N --budget B --jobs 2`; variants in the script.\n\n")
    table = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    table += ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    (out / "search.md").write_text(header + "\n".join(table) + "\n")
    print(df.to_string(index=False))
    return df


if __name__ == "__main__":
    main()
