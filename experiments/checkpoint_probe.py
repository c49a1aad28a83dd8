"""What the checkpoint diagnostics share: a finished run's data as it was trained, and a
markdown table of scores per run (``fingerprint_ablation.py``, ``bn_stats_diagnostic.py``)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable, Sequence

import torch

from graphnorm.train.config import TrainConfig
from graphnorm.train.datamodule import GraphDataModule


def run_datamodule(run: Path) -> GraphDataModule:
    """The data module of a run directory, set up from its ``metrics.json`` config."""
    cfg = TrainConfig.from_dict(json.loads((run / "metrics.json").read_text())["config"])
    dm = GraphDataModule.from_config(cfg)
    dm.setup()
    return dm


def main(doc: str, columns: Sequence[str], scores: Callable[[Path], dict]) -> None:
    """Parse ``runs`` and ``--threads``; print one table row of ``scores(run).values()`` per run."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="run directories (metrics.json, best.ckpt)")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    print("| run | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for run in args.runs:
        print(f"| {run} | " + " | ".join(f"{v:.4f}" for v in scores(run).values()) + " |",
              flush=True)
