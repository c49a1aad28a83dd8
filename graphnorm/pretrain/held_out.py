"""What a pre-training call does around its steps (a Lightning callback): every
``eval_every`` steps score the held-out molecules (every ``probe_every``-th time also the
held-out tasks), append one record to ``log.jsonl``, keep ``best.ckpt`` (the model of the best
held-out loss, as a graphnorm checkpoint; the latest one where nothing is held out) and save
``last.ckpt``; a progress line every `PROGRESS_EVERY` steps; and the stops: this call's wall
budget, the run's step limit, ``patience`` (the held-out loss not better than its best for
that many scheduled evaluations in a row, counted across calls: early stopping as
Lightning's ``EarlyStopping``, kept in the run's state so a resumed run stops where a
straight one would), SIGINT/SIGTERM. A stop finishes the step, scores held-out (not after a
signal: it should not wait) and saves ``last.ckpt``, which the next call resumes from
exactly.

A record: step, epoch, molecules seen, wall and process-CPU seconds since the run began
(summed over its calls: `graphnorm.train.callbacks.Throughput`), learning rate, the training
loss (a running average) and the held-out scores (`evaluate.held_out_record`). That file is
the cost curve (held-out score against CPU-hours: `graphnorm pretrain curve`).
"""
from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import lightning as L

from .folder import BEST_FILE, LOG_FILE, STATE_FILE

PROGRESS_EVERY = 100  # steps between two progress lines (an evaluation can be 1,000s away)


class HeldOutLog(L.Callback):
    """``speed``: the call's `Throughput` callback, the run's wall and CPU clock."""

    def __init__(self, run, out: Path, eval_every: int, probe_every: int, max_time_s: float,
                 max_steps: int | None, progress: bool, speed, device: str = "cpu",
                 patience: int | None = None):
        self.run, self.out, self.eval_every, self.speed = run, Path(out), eval_every, speed
        self.probe_every, self.max_time_s, self.max_steps = max(1, probe_every), max_time_s, max_steps
        self.progress, self.device, self.patience = progress, device, patience
        # the run's, saved in last.ckpt
        self.seen, self.running, self.best_loss, self.since_best = 0, None, None, 0
        # this call's
        self.last, self.evaluated_at, self.stop_requested, self._handlers = {}, 0, False, {}

    # ---- the run's state, in last.ckpt ---------------------------------------------------
    def state_dict(self) -> dict:
        return {"seen": self.seen, "running": self.running, "best_loss": self.best_loss,
                "since_best": self.since_best}

    def load_state_dict(self, state: dict) -> None:
        self.seen, self.running = state["seen"], state["running"]
        self.best_loss = state["best_loss"]
        self.since_best = state.get("since_best", 0)  # a run saved before patience existed

    @property
    def out_of_patience(self) -> bool:
        return self.patience is not None and self.since_best >= self.patience

    # ---- signals ------------------------------------------------------------------------
    def on_train_start(self, trainer, pl_module) -> None:
        self.started, self.evaluated_at = time.time(), trainer.global_step
        # after Lightning's own handlers (set up at fit start): a signal ends the step, saves
        self._handlers = {s: signal.signal(s, self._request_stop)
                          for s in (signal.SIGINT, signal.SIGTERM)}
        if self.out_of_patience:  # a run that stopped early stays stopped: no step is taken
            trainer.should_stop = True

    def _request_stop(self, *_):
        self.stop_requested = True

    def _restore(self) -> None:
        for s, handler in self._handlers.items():
            signal.signal(s, handler)
        self._handlers = {}

    def on_train_end(self, trainer, pl_module) -> None:
        self._restore()

    def on_exception(self, trainer, pl_module, exception) -> None:
        self._restore()

    # ---- every step -----------------------------------------------------------------------
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        step = trainer.global_step
        self.seen += len(batch[1])
        value = float(outputs["loss"].detach())
        self.running = value if self.running is None else 0.98 * self.running + 0.02 * value
        if self.progress and step % PROGRESS_EVERY == 0:
            self._progress_line(trainer, step)
        stop = (self.stop_requested or time.time() - self.started >= self.max_time_s
                or (self.max_steps is not None and step >= self.max_steps))
        if step % self.eval_every == 0 or (stop and not self.stop_requested):
            self._evaluate(trainer, pl_module, step)
        stop = stop or self.out_of_patience
        if step % self.eval_every == 0 or stop:
            trainer.save_checkpoint(self.out / STATE_FILE, weights_only=False)  # optimizer, loops too
        if stop:
            trainer.should_stop = True

    def _evaluate(self, trainer, pl_module, step: int) -> None:
        from lightning.fabric.utilities.apply_func import move_data_to_device

        from graphnorm.data.files import torch_save
        from graphnorm.train.schedule import lr_at

        from .evaluate import held_out_record

        spec = self.run.spec
        probe = (step // self.eval_every) % self.probe_every == 0
        record = {"step": step, "epoch": (step - 1) // trainer.num_training_batches,
                  "seen": self.seen, "wall_s": round(self.speed.wall_time, 1),
                  "cpu_s": round(self.speed.cpu_time, 1),
                  "lr": lr_at(spec.schedule_offset + step, spec.lr, spec.warmup_steps),
                  "train_loss": self.running,
                  **held_out_record(self.run, pl_module.model, probe)}
        if self.device != "cpu":
            record["device"] = self.device
        self.last, self.evaluated_at = record, step
        loss = record.get("val_loss")
        better = loss is not None and (self.best_loss is None or loss < self.best_loss)
        if better:
            self.since_best = 0
        elif loss is not None and step % self.eval_every == 0:  # an end-of-call score is extra
            self.since_best += 1
        if better or not len(self.run.val_set):  # nothing held out: the latest is the model
            self.best_loss = loss if better else self.best_loss
            # on the CPU, so that one trained on a GPU loads anywhere; atomic, as every save
            torch_save(move_data_to_device(self.run.graphnorm_checkpoint(step), "cpu"),
                       self.out / BEST_FILE)
        with open(self.out / LOG_FILE, "a") as f:
            f.write(json.dumps(record) + "\n")
        if self.progress:
            shown = {k: (float(f"{v:.4g}") if isinstance(v, float) else v)
                     for k, v in record.items() if k != "per_task"}
            print(f"[graphnorm pretrain] {shown}", file=sys.stderr, flush=True)

    def _progress_line(self, trainer, step: int) -> None:
        """Where the run is, its cost so far, when it next scores held-out."""
        cpu = self.speed.cpu_time
        following = (step // self.eval_every + 1) * self.eval_every
        print(f"[graphnorm pretrain] step {step:,}: train loss {self.running:.4f}, "
              f"{cpu / 3600:.2f} CPU-h ({cpu / max(step, 1):.2f} CPU-s a step over the run), "
              f"held-out scores at step {following:,}", file=sys.stderr, flush=True)

