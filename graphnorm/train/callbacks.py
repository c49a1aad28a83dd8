"""Callbacks: throughput, wall and CPU time over a whole (resumed) run, checkpoints that
follow a moved run folder, 1-based epoch progress, the metrics history across resumes, and
the learning-curve plot."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint, TQDMProgressBar


class Throughput(L.Callback):
    """Graphs per second of the training loop (forward, backward, optimiser step), over all
    ranks (with DDP every rank steps in lockstep on its share of each global batch), and the
    run's wall time and this process's CPU time. All are saved in checkpoints, so a resumed
    run reports the whole run (up to the checkpoint it resumed from), not only the part after
    the resume (a board's CPU-s per seed would otherwise count a resumed run's tail)."""

    def __init__(self, started: float | None = None, cpu_started: float | None = None):
        self.graphs, self.seconds, self._t0 = 0, 0.0, None
        self.wall_before = self.cpu_before = 0.0  # earlier sessions of this run
        self._session_start = time.time() if started is None else started  # incl. data setup
        self._cpu_start = time.process_time() if cpu_started is None else cpu_started

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self._t0 = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self._t0 is not None:
            self.seconds += time.perf_counter() - self._t0
            graphs = batch[0] if isinstance(batch, tuple) else batch  # pre-training: (graphs, labels)
            self.graphs += graphs.num_graphs * trainer.world_size

    @property
    def graphs_per_second(self) -> float:
        return self.graphs / self.seconds if self.seconds else 0.0

    @property
    def wall_time(self) -> float:
        return self.wall_before + time.time() - self._session_start

    @property
    def cpu_time(self) -> float:
        return self.cpu_before + time.process_time() - self._cpu_start

    def state_dict(self) -> dict:
        return {"graphs": self.graphs, "seconds": self.seconds, "wall_time": self.wall_time,
                "cpu_time": self.cpu_time}

    def load_state_dict(self, state: dict) -> None:
        self.graphs, self.seconds = state.get("graphs", 0), state.get("seconds", 0.0)
        # this session's setup still counts; checkpoints before session 32 have no CPU time
        self.wall_before, self.cpu_before = state.get("wall_time", 0.0), state.get("cpu_time", 0.0)


class RunFolderCheckpoint(ModelCheckpoint):
    """Lightning's ModelCheckpoint, whose saved state follows its run folder when the folder
    is moved (another clone, a copied campaign, a renamed disk) before ``--resume``.

    Lightning reloads only ``best_model_path`` when the checkpoint's ``dirpath`` differs from
    today's, so the resumed run forgets the best score so far and the next validation, however
    worse, overwrites best.ckpt: a silently wrong test score. Here the saved paths are rebased
    onto today's folder and the whole state is reloaded."""

    def load_state_dict(self, state_dict: dict) -> None:
        old, new = state_dict.get("dirpath"), self.dirpath
        if old and new and old != new:
            def rebase(path):
                return new + path[len(old):] if isinstance(path, str) and path.startswith(old) else path

            state_dict = dict(state_dict, dirpath=new,
                              best_k_models={rebase(k): v for k, v in
                                             (state_dict.get("best_k_models") or {}).items()},
                              **{k: rebase(state_dict.get(k)) for k in
                                 ("best_model_path", "kth_best_model_path", "last_model_path")})
        super().load_state_dict(state_dict)


class EpochProgressBar(TQDMProgressBar):
    """Lightning's bar, counting epochs from 1 like metrics.json and the learning curve."""

    def on_train_epoch_start(self, trainer, *args) -> None:
        super().on_train_epoch_start(trainer, *args)
        total = trainer.max_epochs if trainer.max_epochs and trainer.max_epochs > 0 else "?"
        self.train_progress_bar.set_description(f"Epoch {trainer.current_epoch + 1}/{total}")


class EpochLines(L.Callback):
    """One line per epoch instead of a bar, for output that is not a terminal (logs, CI,
    ``nohup``): a bar redrawn every batch fills a log file with thousands of lines."""

    def __init__(self, stream):  # progress_callbacks picks the stream (stdout by default)
        self.stream = stream
        self._t0 = time.time()
        self._validated = False

    def on_validation_end(self, trainer, pl_module) -> None:
        self._validated = self._validated or not trainer.sanity_checking

    def on_train_epoch_end(self, trainer, pl_module) -> None:  # after this epoch's validation
        if trainer.global_rank != 0:
            return
        # validation scores only in the line of an epoch that validated (a run validating
        # every N steps skips epochs): a repeated stale score reads as a flat curve
        shown_keys = ("train/loss", "val/") if self._validated else ("train/loss",)
        self._validated = False
        m = trainer.callback_metrics
        shown = "  ".join(f"{k} {float(v):.4f}" for k, v in sorted(m.items())
                          if k.startswith(shown_keys))
        print(f"epoch {trainer.current_epoch + 1}: {shown}  ({time.time() - self._t0:.0f} s)",
              file=self.stream, flush=True)


def progress_callbacks(enabled: bool, stream=None) -> list:
    """A 1-based bar on a terminal, a line per epoch otherwise, nothing when disabled."""
    if not enabled:
        return []
    stream = stream or sys.stdout
    return [EpochProgressBar()] if stream.isatty() else [EpochLines(stream)]


def weight_averaging(decay: float, recalibrate: bool) -> L.Callback:
    """Lightning's EMA of the weights, swapped in for validation and saved as the checkpoints'
    ``state_dict`` (the live weights go to ``current_model_state`` for --resume). With
    recalibration the average keeps its own BN statistics, re-estimated for the averaged
    weights before each validation (an average of running statistics skewed by size buckets
    would describe no weights); without, the statistics are averaged too."""
    from lightning.pytorch.callbacks import EMAWeightAveraging

    return EMAWeightAveraging(decay=decay, use_buffers=not recalibrate)


def keep_history(run_dir: Path) -> None:
    """Before a resume: move the CSV log out of ``logs/`` (Lightning's CSV logger starts a new
    ``metrics.csv`` there and deletes what it finds) into ``history/metrics.part<k>.csv``;
    :func:`merge_history` puts the parts back together. ``logs/`` is left empty, so the
    logger has nothing to warn about."""
    logs, history = run_dir / "logs", run_dir / "history"
    current = logs / "metrics.csv"
    if current.is_file():
        history.mkdir(exist_ok=True)
        k = len(list(history.glob("metrics.part*.csv")))
        current.rename(history / f"metrics.part{k}.csv")
    (logs / "hparams.yaml").unlink(missing_ok=True)  # the resumed run writes it again


def merge_history(run_dir: Path) -> None:
    """``logs/metrics.csv`` = every part in order, each cut where the next one resumed (rows
    logged after the checkpoint a resume started from are replaced by the resumed run's)."""
    import pandas as pd

    history, current = run_dir / "history", run_dir / "logs" / "metrics.csv"
    parts = sorted(history.glob("metrics.part*.csv"), key=lambda p: int(p.stem[len("metrics.part"):]))
    if not parts:
        return
    frames = [pd.read_csv(p) for p in parts] + ([pd.read_csv(current)] if current.is_file() else [])
    kept = []
    for frame, nxt in zip(frames, frames[1:] + [None]):
        if nxt is not None and len(nxt) and "step" in nxt:
            frame = frame[frame["step"] < nxt["step"].min()]
        kept.append(frame)
    current.parent.mkdir(exist_ok=True)
    pd.concat(kept, ignore_index=True).to_csv(current, index=False)
    for p in parts:
        p.unlink()
    history.rmdir()


def plot_learning_curve(metrics_csv: Path, out_png: Path, metric: str) -> None:
    """Train loss per step and validation metric per epoch (1-based) from the CSV log."""
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


class RecalibrateBatchStats(L.Callback):
    """Before every validation, running statistics of all BN/IsoBN channels become the
    average over ``num_batches`` random (not size-bucketed) training batches.

    Size-bucketed batches hold molecules of one size, and penalized logP or activity grows
    with size, so each batch's [VNode] statistics are those of one size bucket and the
    moving averages track the last few buckets (measured: val MAE 0.818 with them vs 0.628
    with random-batch statistics on one ``sep:bn+ln`` checkpoint). Checkpoints are written
    after validation, so they carry the recalibrated statistics; with weight averaging
    (:func:`weight_averaging`) those of the averaged weights.

    With ``source="training"`` no batch is run for it: the BatchNorms keep the moments of
    their last ``num_batches`` training batches, and the statistics become those of the
    union (:func:`graphnorm.norms.load_batch_moments`); random batches remain the fallback
    where a norm cannot keep them (IsoBN) or none was kept yet.
    """

    def __init__(self, num_batches: int = 8, seed: int = 0, source: str = "random"):
        self.num_batches, self.seed, self.source = num_batches, seed, source
        self.norms, self.restored = [], None

    def on_train_start(self, trainer, pl_module) -> None:
        from graphnorm.norms import keep_batch_moments

        if self.source == "training" and self.num_batches:
            self.norms = keep_batch_moments(pl_module.model, self.num_batches)
            if self.norms and self.restored and len(self.restored) == len(self.norms):
                for norm, kept in zip(self.norms, self.restored):
                    norm.batch_moments.extend(kept)

    # the kept moments travel in last.ckpt: a resumed run validates as an uninterrupted one
    def state_dict(self) -> dict:
        return {"moments": [list(m.batch_moments) for m in self.norms]} if self.norms else {}

    def load_state_dict(self, state_dict: dict) -> None:
        self.restored = state_dict.get("moments")

    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        # at epoch start, after the EMA callback (listed before this one) swapped the averaged
        # weights in: the statistics are those of the weights being validated
        from graphnorm.norms import load_batch_moments, recalibrate_batch_stats

        if trainer.sanity_checking or not self.num_batches:
            return
        if self.norms and load_batch_moments(pl_module.model):
            return
        dm = trainer.datamodule
        batches = dm.random_batches(self.num_batches, seed=self.seed + trainer.current_epoch)
        device = pl_module.device
        recalibrate_batch_stats(pl_module.model, (b.to(device) for b in batches))
