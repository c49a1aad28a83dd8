"""Does a model trained with fingerprints use them? Val/test score of each checkpoint with its
molecules' fingerprint bits as they are, zeroed, and shuffled across the molecules of a batch
(the bits of another molecule). Prints a markdown table.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/fingerprint_ablation.py \
        experiments/results/ogbg-molhiv/ep8_fp2048/runs/sep-bn-bn/seed0 \
        experiments/results/ogbg-molhiv/ep8_fp2048/runs/gin-vn/seed0
"""
from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, os.path.dirname(__file__))
from checkpoint_probe import main, run_datamodule  # noqa: E402
from graphnorm.checkpoints import load_checkpoint
from graphnorm.tasks import compute_metric
from graphnorm.train.evaluate import predict_loader

MODES = ("as is", "zeroed", "shuffled")


def altered(fingerprint: torch.Tensor, mode: str, gen: torch.Generator) -> torch.Tensor:
    if mode == "zeroed":
        return torch.zeros_like(fingerprint)
    if mode == "shuffled":
        return fingerprint[torch.randperm(fingerprint.shape[0], generator=gen)]
    return fingerprint


def scores(run: Path) -> dict:
    dm = run_datamodule(run)
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


if __name__ == "__main__":
    main(__doc__, [f"{split} {mode}" for split in ("val", "test") for mode in MODES], scores)
