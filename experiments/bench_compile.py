"""Does ``torch.compile`` speed up a training step on this CPU? Eager vs inductor, same batches.

Size-bucketed batches change the padded size N from step to step, so the model is compiled
with ``dynamic=True``; compile time is reported apart from the steady-state step time.

    python experiments/bench_compile.py --steps 30 --out experiments/results/speed/compile.txt
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="experiments/configs/zinc_subset_fast.yaml")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = TrainConfig.from_yaml(args.config, raw_dir=os.environ.get("GRAPHNORM_RAW_DIR"))
    dm = GraphDataModule(cfg.dataset, cfg.batch_size, cfg.raw_dir, progress=False)
    dm.setup()
    ds = dm.splits["train"]
    sampler = LengthBucketSampler(graph_sizes(ds).tolist(), cfg.batch_size, pool_batches=cfg.bucket_pool)
    batches = [collate_graphs([ds[i] for i in idx]) for _, idx in zip(range(args.steps), sampler)]
    lines = [f"torch.compile vs eager, {args.config}, {args.steps} bucketed batches of {cfg.batch_size}, "
             f"{args.threads} thread(s), load {os.getloadavg()[0]:.2f}"]
    for mode in ("eager", "compiled"):
        torch.manual_seed(0)
        model = build_model(model_config_for(cfg, dm.info)).train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        if mode == "compiled":
            model = torch.compile(model, dynamic=True)
        t0 = time.perf_counter()
        steps(model, batches[:3], opt)  # warm-up (compilation for "compiled")
        warm = time.perf_counter() - t0
        t = steps(model, batches, opt)
        lines.append(f"{mode:9s}: warm-up {warm:6.1f} s, {t / len(batches) * 1e3:7.1f} ms/step, "
                     f"{sum(b.num_graphs for b in batches) / t:7.1f} graphs/s")
        print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
