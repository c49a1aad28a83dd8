"""Training (and inference) throughput of whole recipes (config files), in one run.

Per config: graphs/s of a training step (forward, L1 loss, backward, AdamW) on the same
pre-collated size-bucketed ZINC-subset batches the config's training would see, at 1 and 2
threads. ``--compile`` adds a ``torch.compile(dynamic=True)`` row (size-bucketed batches change
the padded size N each step); its compile time is reported apart from the steady step time.
``--infer`` adds eval-mode forward rows (what `predict` runs per batch); ``--device cuda``
times on a GPU (batches moved there before timing; the clock stops after a synchronize), and
``--amp bf16`` adds rows under bfloat16 autocast. The "collate ms" column is the CPU time
to pad one batch: a GPU step shorter than that starves without loader workers.

    python experiments/bench_recipes.py --out experiments/results/speed/recipes.md
    python experiments/bench_recipes.py --configs experiments/configs/zinc_subset_fast.yaml --compile
    python experiments/bench_recipes.py --device cuda --threads 16 --infer --amp bf16 --steps 50
"""
from __future__ import annotations

import argparse
import contextlib
import os
import time
from pathlib import Path

import torch

from graphnorm.graph import AttentionBias, LengthBucketSampler, collate_graphs
from graphnorm.models import build_model
from graphnorm.train.config import TrainConfig
from graphnorm.train.datamodule import GraphDataModule, graph_sizes
from graphnorm.train.model_config import model_config_for


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def steps(model, batches, opt, device: str = "cpu", amp: str = "fp32") -> float:
    """Seconds of one training step per batch (``opt`` None: eval-mode forwards)."""
    autocast = (torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16)
                if amp == "bf16" else contextlib.nullcontext())
    _sync(device)
    t0 = time.perf_counter()
    for b in batches:
        if opt is None:
            with torch.inference_mode(), autocast:
                model(b)
            continue
        opt.zero_grad(set_to_none=True)
        with autocast:
            loss = (model(b).float() - b.y).abs().mean()
        loss.backward()
        opt.step()
    _sync(device)
    return time.perf_counter() - t0


CONFIGS = ["experiments/configs/zinc_subset_cpu.yaml", "experiments/configs/zinc_subset_fast.yaml",
           "experiments/configs/zinc_subset_fast.yaml:gine"]


def collated(cfg, dm, n: int) -> tuple[list, float]:
    """``n`` size-bucketed training batches and the CPU ms it took to pad one."""
    ds = dm.splits["train"]
    sampler = LengthBucketSampler(graph_sizes(ds).tolist(), cfg.batch_size, pool_batches=cfg.bucket_pool)
    t0 = time.process_time()
    batches = [collate_graphs([ds[i] for i in idx]) for _, idx in zip(range(n), sampler)]
    return batches, (time.process_time() - t0) / len(batches) * 1e3


def measure(cfg, dm, batches, mode: str, device: str = "cpu", amp: str = "fp32",
            group_pairs: bool | None = None) -> tuple[float, float]:
    """(warm-up seconds, graphs/s) of the batches after the first 3 (warm-up); ``mode``
    eager, compiled (torch.compile, dynamic shapes) or infer (eval-mode forwards)."""
    torch.manual_seed(0)
    model = build_model(model_config_for(cfg, dm.info, dm.featurizer)).to(device)
    if group_pairs is not None:  # AttentionBias.group_pairs: None = on the CPU only
        for m in model.modules():
            if isinstance(m, AttentionBias):
                m.group_pairs = group_pairs
    model.train(mode != "infer")
    opt = None if mode == "infer" else torch.optim.AdamW(model.parameters(), lr=1e-4)
    if mode == "compiled":
        model = torch.compile(model, dynamic=True)
    warm = steps(model, batches[:3], opt, device, amp)
    t = steps(model, batches[3:], opt, device, amp)
    return warm, sum(b.num_graphs for b in batches[3:]) / t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", nargs="+", default=CONFIGS, help="CONFIG[:MODEL] ...")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--infer", action="store_true", help="also eval-mode forward rows")
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    ap.add_argument("--amp", nargs="+", default=["fp32"], choices=["fp32", "bf16"],
                    help="precisions to time (bf16: autocast)")
    ap.add_argument("--group-pairs", choices=["on", "off"],
                    help="force AttentionBias.group_pairs (default: the code's own choice)")
    ap.add_argument("--out")
    args = ap.parse_args()
    group = None if args.group_pairs is None else args.group_pairs == "on"
    raw = os.environ.get("GRAPHNORM_RAW_DIR")
    where = (f"{torch.cuda.get_device_name(args.device)}, torch {torch.__version__}"
             if args.device.startswith("cuda") else f"CPU, torch {torch.__version__}")
    lines = [f"# Throughput per recipe (ZINC-subset, size-bucketed batches, {args.steps} steps "
             f"after 3 warm-up steps) on {where}", "",
             f"Command: `python experiments/bench_recipes.py{' --compile' if args.compile else ''}"
             f"{' --infer' if args.infer else ''} --device {args.device} --amp {' '.join(args.amp)}"
             f"{' --group-pairs ' + args.group_pairs if args.group_pairs else ''}`; "
             f"load average before: {os.getloadavg()[0]:.2f}", "",
             "| config | model | batch | threads | mode | precision | collate ms | warm-up s | graphs/s |",
             "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)

    def save(rows: list) -> None:
        if args.out:
            Path(args.out).write_text("\n".join(rows) + "\n")

    modes = ["eager"] + (["compiled"] if args.compile else []) + (["infer"] if args.infer else [])
    for spec in args.configs:
        path, _, model_name = spec.partition(":")
        over = {"model_name": model_name, "model": {}} if model_name else {}
        cfg = TrainConfig.from_yaml(path, raw_dir=raw, **over)
        dm = GraphDataModule.from_config(cfg, progress=False)
        dm.setup()
        batches, collate_ms = collated(cfg, dm, args.steps + 3)
        batches = [b.to(args.device) for b in batches]
        for threads in args.threads:
            torch.set_num_threads(threads)
            for mode in modes:
                for amp in args.amp:
                    row = (f"| {Path(path).name} | {cfg.model_name} | {cfg.batch_size} | {threads} "
                           f"| {mode} | {amp} | {collate_ms:.1f} |")
                    try:
                        warm, gps = measure(cfg, dm, batches, mode, args.device, amp, group)
                        lines.append(f"{row} {warm:.1f} | {gps:.1f} |")
                    except Exception as err:  # one failed row (e.g. an op without bf16) must not lose the rest
                        lines.append(f"{row} failed: {type(err).__name__}: {str(err)[:120]} | |")
                    print(lines[-1], flush=True)
                    save(lines)  # row by row: a run stopped by its timeout keeps what it measured
    lines.append(f"\nload average after: {os.getloadavg()[0]:.2f}")
    save(lines)


if __name__ == "__main__":
    main()
