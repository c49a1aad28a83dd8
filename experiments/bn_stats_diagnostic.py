"""Is a BatchNorm model's test gap in its *statistics* or in its *weights*? Val/test score
of each checkpoint with the running statistics of every batch-statistics norm estimated from
different molecules (weights unchanged):

- ``as saved``: the checkpoint's (random training batches, as in training);
- ``train (all)``: the average over every training batch (more batches, same population);
- ``val`` / ``test``: the average over that split's own batches. This is transductive — it
  reads the evaluated molecules' features (never their labels) — so it is a DIAGNOSTIC, not
  a recipe: if it closes the gap, the model is fine and its statistics describe the wrong
  molecules (covariate shift between scaffold splits); if not, the weights are the problem.

Prints a markdown table. A model without batch statistics (``ln``) gives one number per
split in every column.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/bn_stats_diagnostic.py \\
        experiments/results/ogbg-molhiv/ep8_fp2048_slots_final/runs/sep-bn-ln/seed0
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from checkpoint_probe import main, run_datamodule  # noqa: E402
from graphnorm.checkpoints import load_checkpoint
from graphnorm.norms import recalibrate_batch_stats
from graphnorm.tasks import compute_metric
from graphnorm.train.evaluate import predict_loader

SOURCES = ("as saved", "train (all)", "val", "test")


def scores(run: Path) -> dict:
    dm = run_datamodule(run)
    out = {}
    for source in SOURCES:
        loaded = load_checkpoint(run / "best.ckpt")  # fresh statistics for every source
        if source != "as saved":
            split = "train" if source.startswith("train") else source
            recalibrate_batch_stats(loaded.model, dm.loader(split, train=False))
        for split in ("val", "test"):
            (pred,), y, _ = predict_loader([loaded], dm.loader(split, train=False))
            out[(source, split)] = compute_metric(loaded.task["metric"], pred, y)
    return out


if __name__ == "__main__":
    main(__doc__, [f"{split} ({source})" for source in SOURCES for split in ("val", "test")], scores)
