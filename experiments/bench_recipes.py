"""Training throughput of whole recipes (config files) on this CPU, in one run.

Per config: graphs/s of a training step (forward, L1 loss, backward, AdamW) on the same
pre-collated size-bucketed ZINC-subset batches the config's training would see, at 1 and 2
threads. ``--compile`` adds a ``torch.compile(dynamic=True)`` row (size-bucketed batches change
the padded size N each step); its compile time is reported apart from the steady step time.

    python experiments/bench_recipes.py --out experiments/results/speed/recipes.md
    python experiments/bench_recipes.py --configs experiments/configs/zinc_subset_fast.yaml --compile
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from graphnorm.graph import LengthBucketSampler, collate_graphs
from graphnorm.models import build_model
from graphnorm.train.config import TrainConfig
from graphnorm.train.datamodule import GraphDataModule, graph_sizes
from graphnorm.train.model_config import model_config_for


def steps(model, batches, opt) -> float:
    t0 = time.perf_counter()
    for b in batches:
        opt.zero_grad(set_to_none=True)
        loss = (model(b) - b.y).abs().mean()
        loss.backward()
        opt.step()
    return time.perf_counter() - t0


CONFIGS = ["experiments/configs/zinc_subset_cpu.yaml", "experiments/configs/zinc_subset_fast.yaml",
           "experiments/configs/zinc_subset_fast.yaml:gine"]


def measure(cfg, dm, steps_n: int, compile_model: bool) -> tuple[float, float]:
    """(warm-up seconds, graphs/s) of ``steps_n`` training steps after 3 warm-up steps."""
    ds = dm.splits["train"]
    sampler = LengthBucketSampler(graph_sizes(ds).tolist(), cfg.batch_size, pool_batches=cfg.bucket_pool)
    batches = [collate_graphs([ds[i] for i in idx]) for _, idx in zip(range(steps_n + 3), sampler)]
    torch.manual_seed(0)
    model = build_model(model_config_for(cfg, dm.info, dm.featurizer)).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    if compile_model:
        model = torch.compile(model, dynamic=True)
    warm = steps(model, batches[:3], opt)
    t = steps(model, batches[3:], opt)
    return warm, sum(b.num_graphs for b in batches[3:]) / t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", nargs="+", default=CONFIGS, help="CONFIG[:MODEL] ...")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    raw = os.environ.get("GRAPHNORM_RAW_DIR")
    lines = [f"# Training throughput per recipe (ZINC-subset, size-bucketed batches, {args.steps} steps "
             f"after 3 warm-up steps)", "",
             f"Command: `python experiments/bench_recipes.py{' --compile' if args.compile else ''}`; "
             f"load average before: {os.getloadavg()[0]:.2f}", "",
             "| config | model | batch | threads | mode | warm-up s | graphs/s |", "|---|---|---|---|---|---|---|"]
    for spec in args.configs:
        path, _, model_name = spec.partition(":")
        over = {"model_name": model_name, "model": {}} if model_name else {}
        cfg = TrainConfig.from_yaml(path, raw_dir=raw, **over)
        dm = GraphDataModule.from_config(cfg, progress=False)
        dm.setup()
        for threads in args.threads:
            torch.set_num_threads(threads)
            for mode in ("eager", "compiled") if args.compile else ("eager",):
                warm, gps = measure(cfg, dm, args.steps, mode == "compiled")
                lines.append(f"| {Path(path).name} | {cfg.model_name} | {cfg.batch_size} | {threads} "
                             f"| {mode} | {warm:.1f} | {gps:.1f} |")
                print(lines[-1], flush=True)
    lines.append(f"\nload average after: {os.getloadavg()[0]:.2f}")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
