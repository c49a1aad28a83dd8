"""Callbacks: training throughput and the learning-curve plot."""
from __future__ import annotations

import time
from pathlib import Path

import lightning as L


class Throughput(L.Callback):
    """Graphs per second of the training loop (forward, backward, optimiser step), over all
    ranks: with DDP every rank steps in lockstep on its share of each global batch."""

    def __init__(self):
        self.graphs, self.seconds, self._t0 = 0, 0.0, None

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self._t0 = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self._t0 is not None:
            self.seconds += time.perf_counter() - self._t0
            self.graphs += batch.num_graphs * trainer.world_size

    @property
    def graphs_per_second(self) -> float:
        return self.graphs / self.seconds if self.seconds else 0.0


def plot_learning_curve(metrics_csv: Path, out_png: Path, metric: str) -> None:
    """Train loss per step and validation metric per epoch from Lightning's CSV log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.read_csv(metrics_csv)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    if "train/loss" in df:
        t = df.dropna(subset=["train/loss"])
        a.plot(t["step"], t["train/loss"], lw=0.8)
    a.set(xlabel="step", ylabel="train loss", title="training loss")
    col = f"val/{metric}"
    if col in df:
        v = df.dropna(subset=[col])
        b.plot(v["epoch"] + 1, v[col], marker="o", ms=3)
    b.set(xlabel="epoch", ylabel=f"validation {metric}", title=f"validation {metric}")
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    plt.close(fig)
