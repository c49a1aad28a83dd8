"""Seconds per training step on a lent GPU, by batch size and model size: what a pre-training
run there should use (rule F's runs were bound by the main process at 13 steps/s of 128).

Reads the corpus cache that `device_corpus.py unpack` wrote; draws 4,096 molecules at random
(seed 0), collates each batch once (collation is the loader processes' job, not timed), then
per (size, batch): 5 warm-up steps and 20 timed steps of forward, masked multi-task loss,
backward and AdamW, synchronized (median of the 20). Prints a table and writes JSON.

    python3 experiments/device_step_cost.py --out $OUT/step_cost.json
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="4x64,6x96,8x128")
    ap.add_argument("--batches", default="128,512,2048")
    args = ap.parse_args()
    from graphnorm.data.cache import cache_root
    from graphnorm.data.table_dataset import table_featurizer
    from graphnorm.graph.collate import collate_graphs
    from graphnorm.models import build_model
    from graphnorm.pretrain.data import corpus_dataset
    from graphnorm.pretrain.objective import multitask_loss
    from graphnorm.pretrain.setup import model_config
    from graphnorm.pretrain.spec import PretrainSpec

    started = time.time()
    (data_file,) = (cache_root() / "pretrain").glob("*/data.pt")
    payload = torch.load(data_file, weights_only=False, mmap=True)
    rng = np.random.default_rng(0)
    pick = np.sort(rng.choice(len(payload["rows"]), 4096, replace=False))
    dataset = corpus_dataset(payload, pick, "timing")
    graphs = [dataset[i] for i in range(len(dataset))]
    featurizer, T = table_featurizer(), 802
    print(f"set-up {time.time() - started:.0f} s", flush=True)
    dev = torch.device("cuda")
    results = []
    for size in args.sizes.split(","):
        L, H = (int(v) for v in size.split("x"))
        spec = PretrainSpec(num_layers=L, hidden=H, ffn_hidden=2 * H)
        model = build_model(model_config(spec, T, featurizer)).to(dev).train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        params = sum(p.numel() for p in model.parameters())
        for B in (int(b) for b in args.batches.split(",")):
            batches = [collate_graphs(graphs[k:k + B]).to(dev)
                       for k in range(0, len(graphs) - B + 1, B)]
            y = torch.randn(B, T, device=dev).where(torch.rand(B, T, device=dev) < 0.01,
                                                    torch.tensor(float("nan"), device=dev))
            scaling_binary = torch.zeros(T, dtype=torch.bool, device=dev)
            from graphnorm.pretrain.objective import TaskScaling

            scaling = TaskScaling(scaling_binary, torch.zeros(T, device=dev),
                                  torch.ones(T, device=dev), torch.ones(T, dtype=torch.bool, device=dev))
            times = []
            for k in range(25):
                batch = batches[k % len(batches)]
                torch.cuda.synchronize()
                t = time.perf_counter()
                loss = multitask_loss(model(batch), y[:batch.num_graphs], scaling)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                torch.cuda.synchronize()
                if k >= 5:
                    times.append(time.perf_counter() - t)
            s = float(np.median(times))
            row = {"size": size, "params": params, "batch": B, "s_per_step": s,
                   "molecules_per_s": B / s, "peak_gib": torch.cuda.max_memory_allocated() / 2**30}
            results.append(row)
            print(f"{size:>7} {params:>9,} B={B:>5}: {s * 1e3:7.1f} ms/step, "
                  f"{B / s:8.0f} mol/s, peak {row['peak_gib']:.1f} GiB", flush=True)
            del batches
            torch.cuda.reset_peak_memory_stats()
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
