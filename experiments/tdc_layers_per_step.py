"""CPU-s per training step of the admet default's Graphormer at 4, 3 and 2 blocks, the three
models interleaved on the same batches in one process (one thread), so that the host's drift
between hours (docs/results/tdc_admet.md, session 29) falls on all three alike. Forward,
backward and an AdamW step on each task's first training batches (the run's own loader:
size-bucketed, random-walk PE from the loader), freshly initialized models.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/tdc_layers_per_step.py \\
        --runs experiments/results/tdc_admet/board29 --tasks dili,hia_hou,vdss_lombardo \\
        --out experiments/results/tdc_admet/layers3_29/per_step.md
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path

import torch

from graphnorm.checkpoints import load_member
from graphnorm.graph import Graphormer
from graphnorm.provenance import code_sha, cpu_model
from graphnorm.run_folder import read_metrics
from graphnorm.train.config import TrainConfig
from graphnorm.train.datamodule import GraphDataModule

BLOCKS = (4, 3, 2)


def per_step(run: Path, batches: int, reps: int) -> dict:
    """Mean CPU-s per step for each block count, from ``run``'s seed-0 member."""
    member = next(run.glob("runs/*/seed0/model_0"))
    cfg = TrainConfig.from_dict(read_metrics(member)["config"])
    dm = GraphDataModule.from_config(cfg, progress=False, num_workers=0)
    dm.setup()
    data = [b for _, b in zip(range(batches), dm.loader("train", train=True))]
    base = load_member(member / "best.ckpt").model.config
    models = {k: Graphormer(dataclasses.replace(base, num_layers=k)).train() for k in BLOCKS}
    optims = {k: torch.optim.AdamW(m.parameters(), 1e-3) for k, m in models.items()}
    spent = dict.fromkeys(BLOCKS, 0.0)
    for _ in range(reps):
        for k, model in models.items():
            start = time.process_time()
            for batch in data:
                loss = model(batch).float().pow(2).mean()
                optims[k].zero_grad()
                loss.backward()
                optims[k].step()
            spent[k] += time.process_time() - start
    return {k: spent[k] / (reps * len(data)) for k in BLOCKS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, required=True, help="a board folder (TASK/runs/...)")
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    lines = ["| task | " + " | ".join(f"{k} blocks, CPU-s per step" for k in BLOCKS)
             + " | 3 vs 4 | 2 vs 4 |", "|---|" + "---|" * (len(BLOCKS) + 2)]
    for task in args.tasks.split(","):
        s = per_step(args.runs / task, args.batches, args.reps)
        lines.append(f"| {task} | " + " | ".join(f"{s[k]:.3f}" for k in BLOCKS)
                     + f" | {s[3] / s[4] - 1:+.0%} | {s[2] / s[4] - 1:+.0%} |")
        print(lines[-1], flush=True)
    text = (f"command: `python experiments/tdc_layers_per_step.py --runs {args.runs} --tasks "
            f"{args.tasks} --batches {args.batches} --reps {args.reps} --out {args.out}` "
            f"({code_sha()[:7]}, {cpu_model()}, one thread; load {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end)\n\n" + "\n".join(lines) + "\n")
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
