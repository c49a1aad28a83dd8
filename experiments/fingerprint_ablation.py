"""Does a model trained with fingerprints use them? Val/test score of each checkpoint with its
molecules' fingerprint bits as they are, zeroed, and shuffled across the molecules of a batch
(the bits of another molecule). Prints a markdown table.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/fingerprint_ablation.py \
        experiments/results/ogbg-molhiv/ep8_fp2048/runs/sep-bn-bn/seed0 \
        experiments/results/ogbg-molhiv/ep8_fp2048/runs/gin-vn/seed0
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import torch

from graphnorm.checkpoint import load_checkpoint
from graphnorm.task import compute_metric
from graphnorm.train.config import TrainConfig
from graphnorm.train.datamodule import GraphDataModule
from graphnorm.train.evaluate import predict_loader

MODES = ("as is", "zeroed", "shuffled")


def altered(fingerprint: torch.Tensor, mode: str, gen: torch.Generator) -> torch.Tensor:
    if mode == "zeroed":
        return torch.zeros_like(fingerprint)
    if mode == "shuffled":
        return fingerprint[torch.randperm(fingerprint.shape[0], generator=gen)]
    return fingerprint


def scores(run: Path) -> dict:
    cfg = TrainConfig.from_dict(json.loads((run / "metrics.json").read_text())["config"])
    dm = GraphDataModule.from_config(cfg)
    dm.setup()
    loaded = load_checkpoint(run / "best.ckpt")
    metric = loaded.task["metric"]
    bits = loaded.featurizer.fingerprint_bits
    out = {}
    for split in ("val", "test"):
        for mode in MODES:
            gen = torch.Generator().manual_seed(0)
            batches = (dataclasses.replace(b, fingerprint=altered(b.fingerprints(bits), mode, gen))
                       for b in dm.loader(split, train=False))
            (pred,), y, _ = predict_loader([loaded], batches)
            out[(split, mode)] = compute_metric(metric, pred, y)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="run directories (metrics.json, best.ckpt)")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    head = [f"{split} {mode}" for split in ("val", "test") for mode in MODES]
    print("| run | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")
    for run in args.runs:
        s = scores(run)
        print(f"| {run} | " + " | ".join(f"{v:.4f}" for v in s.values()) + " |", flush=True)


if __name__ == "__main__":
    main()
