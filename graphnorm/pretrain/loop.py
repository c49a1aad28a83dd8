"""The pre-training loop: resumable, budgeted, logging its cost curve.

A plain loop rather than Lightning: the run is one long job cut into sessions, and what it
must keep between them is small and explicit (`state.pt`: model, optimizer, step, epoch, the
position in the epoch's permutation, the random state, the log so far). ``--max-time`` is this
call's wall budget; the learning rate follows an inverse-square-root schedule after a linear
warm-up, so it needs no planned length and a run resumed for more hours continues smoothly;
a warm start (``--init-from``) goes on from the schedule's point where its source stopped.

Every ``eval_every`` steps the run scores its held-out molecules (every ``probe_every``-th time
also its held-out tasks, whose 14 probes cost more than the molecules; `evaluate.py`) and
appends one line to ``log.jsonl``: step, molecules seen, wall and process-CPU seconds since
the start of the run (summed over its sessions), the training loss, and the held-out scores.
That file is the cost curve (held-out score against CPU-hours). ``best.ckpt`` holds the model
of the best held-out loss in the checkpoint format `--init-from` reads.
"""
from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

STATE_FILE, LOG_FILE, BEST_FILE, SPEC_FILE = "state.pt", "log.jsonl", "best.ckpt", "pretrain.json"
PROGRESS_EVERY = 100  # steps between two progress lines (an evaluation can be 1,000s away)


def lr_at(step: int, base: float, warmup: int) -> float:
    """Linear warm-up to ``base`` over ``warmup`` steps, then base * sqrt(warmup / step)."""
    step = max(step, 1)
    return base * min(step / warmup, math.sqrt(warmup / step))


class Stop:
    """Set by SIGINT/SIGTERM: the loop finishes its step, saves, and returns."""

    def __init__(self):
        self.requested = False
        self._before = {sig: signal.signal(sig, self._set) for sig in (signal.SIGINT,
                                                                         signal.SIGTERM)}

    def _set(self, *_):
        self.requested = True

    def restore(self) -> None:
        for sig, handler in self._before.items():
            signal.signal(sig, handler)


def _log(path: Path, record: dict, progress: bool) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
    if progress:
        shown = {k: (float(f"{v:.4g}") if isinstance(v, float) else v)
                 for k, v in record.items() if k != "per_task"}
        print(f"[graphnorm pretrain] {shown}", file=sys.stderr, flush=True)


def _progress_line(step: int, elapsed: tuple, loss: float, eval_every: int) -> None:
    """One line on stderr: where the run is, its cost so far, when it next scores held-out."""
    wall, cpu = elapsed
    following = (step // eval_every + 1) * eval_every
    print(f"[graphnorm pretrain] step {step:,}: train loss {loss:.4f}, {cpu / 3600:.2f} CPU-h "
          f"({cpu / max(step, 1):.2f} CPU-s a step over the run), held-out scores at step "
          f"{following:,}", file=sys.stderr, flush=True)


class ResumeError(RuntimeError):
    pass


def _read_state(path: Path) -> dict:
    """The saved state of a run; a file that does not load or lacks a part is named."""
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # unpickling garbage raises many exception types
        raise ResumeError(f"{path} is corrupt ({type(err).__name__}: {err}); move it away to "
                          "start the run again from scratch") from err
    missing = [k for k in ("model", "optimizer", "progress", "rng") if k not in saved]
    if missing:
        raise ResumeError(f"{path} is not a pre-training state (missing {missing})")
    return saved


def _save(path: Path, obj) -> None:
    from graphnorm.data.files import torch_save

    torch_save(obj, path)  # atomic: an interrupt never leaves half a state file


def _to_cpu(obj):
    """Tensors of a (nested) state on the CPU: a state saved on a GPU loads anywhere."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


def _epoch_batches(run, order: np.ndarray, position: int, size: int, workers: int):
    """(batch, labels) of the epoch's ``order`` from ``position`` on, in order; made in
    ``workers`` loader processes (forked: they share the featurized corpus) or in this one."""
    chunks = [order[s:s + size] for s in range(position, len(order), size)]
    if not workers:
        return (run.batch_and_labels(c) for c in chunks)
    from torch.utils.data import DataLoader

    return iter(DataLoader(chunks, batch_size=None, num_workers=workers,
                           collate_fn=run.batch_and_labels, multiprocessing_context="fork",
                           prefetch_factor=4))


def train(run, out: Path, max_time_s: float, max_steps: int | None, eval_every: int,
          progress: bool = True, probe_every: int = 1, device: str = "cpu",
          loader_workers: int = 0) -> dict:
    """Train ``run`` (a `setup.PretrainRun`) until the wall budget, ``max_steps`` (total over
    sessions) or a stop signal; returns the last log record and ``stopped_at`` (the step
    the saved state holds). ``device`` runs the model there (a lent GPU; states and
    checkpoints are saved on the CPU either way); ``loader_workers`` processes make the
    batches (what feeds a GPU; the CPU time logged is then this process's alone)."""
    from .evaluate import forward_all, molecule_scores, probe_scores
    from .memory import TRIM_EVERY, trim_heap
    from .objective import multitask_loss

    spec, model = run.spec, run.model.to(device)
    scaling = run.scaling.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    state_path, log_path = out / STATE_FILE, out / LOG_FILE
    state = {"step": 0, "epoch": 0, "position": 0, "wall": 0.0, "cpu": 0.0, "seen": 0,
             "best_loss": None}
    if state_path.is_file():
        saved = _read_state(state_path)
        try:
            model.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise ResumeError(f"{state_path} holds another model's state ({err}); continue it "
                              "with the settings in its pretrain.json, or pick a new --out") from err
        state.update(saved["progress"])
        torch.set_rng_state(saved["rng"])
    stop, started, cpu0 = Stop(), time.time(), time.process_time()
    wall0, cpu_base = state["wall"], state["cpu"]
    B = spec.batch_size
    running = None

    def elapsed() -> tuple[float, float]:
        return wall0 + time.time() - started, cpu_base + time.process_time() - cpu0

    def evaluate() -> dict:
        z, y, _, _ = forward_all(model, run.val_loader(), run.labels_of)
        record = {f"val_{k}": v for k, v in molecule_scores(z, y, run.scaling,
                                                              spec.weighting).items()}
        # no probe this time, or no held-out task at all (a corpus without one big enough)
        if (state["step"] // eval_every) % max(1, probe_every) or not len(run.probe_set):
            model.train()
            return record
        _, y_p, emb, _ = forward_all(model, run.probe_loader(), run.labels_of)
        probe = probe_scores(emb, y_p, run.held_tasks, scaling.binary.tolist(),
                             run.corpus.task_names, run.probe_folds)
        record.update({k: v for k, v in probe.items() if k != "per_task"})
        record["per_task"] = probe["per_task"]
        model.train()
        return record

    def checkpoint(record: dict, rng=None) -> None:
        loss = record.get("val_loss")
        if loss is not None and (state["best_loss"] is None or loss < state["best_loss"]):
            state["best_loss"] = loss
            _save(out / BEST_FILE, run.graphnorm_checkpoint(state["step"]))
        wall, cpu = elapsed()
        _save(state_path, {"model": _to_cpu(model.state_dict()),
                           "optimizer": _to_cpu(optimizer.state_dict()),
                           "progress": dict(state, wall=wall, cpu=cpu),
                           "rng": torch.get_rng_state() if rng is None else rng})

    def record_now() -> dict:
        wall, cpu = elapsed()
        record = {"step": state["step"], "epoch": state["epoch"], "seen": state["seen"],
                  "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                  "lr": lr_at(spec.schedule_offset + state["step"], spec.lr,
                                spec.warmup_steps),
                  "train_loss": running, **evaluate()}
        if device != "cpu":
            record["device"] = device
        return record

    model.train()
    last, evaluated_at = {}, state["step"]

    def must_stop() -> bool:
        return stop.requested or time.time() - started >= max_time_s or (
            max_steps is not None and state["step"] >= max_steps)

    try:
        while not must_stop():
            order = run.permutation(state["epoch"])
            if state["position"] >= len(order):
                state["epoch"], state["position"] = state["epoch"] + 1, 0
                continue
            batches = _epoch_batches(run, order, state["position"], B, loader_workers)
            for batch, y in batches:
                if must_stop():
                    break
                batch, y = batch.to(device), y.to(device)
                for group in optimizer.param_groups:
                    group["lr"] = lr_at(spec.schedule_offset + state["step"] + 1, spec.lr,
                                        spec.warmup_steps)
                loss = multitask_loss(model(batch), y, scaling, spec.weighting)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if spec.clip_norm:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), spec.clip_norm)
                optimizer.step()
                state["step"] += 1
                if state["step"] % TRIM_EVERY == 0:  # batch shapes fragment the heap: memory.py
                    trim_heap()
                state["position"] += len(y)
                state["seen"] += len(y)
                value = float(loss.detach())
                running = value if running is None else 0.98 * running + 0.02 * value
                if progress and state["step"] % PROGRESS_EVERY == 0:
                    _progress_line(state["step"], elapsed(), running, eval_every)
                if state["step"] % eval_every == 0:
                    last, evaluated_at = record_now(), state["step"]
                    checkpoint(last)
                    _log(log_path, last, progress)
            del batches  # a loader's processes end with it
        # the state of the last step, whatever stopped the loop, with the random state from
        # before a closing evaluation (its loader draws a seed): a resume goes on as if the
        # call had not stopped. A budget or step limit that falls between evaluations still
        # ends with a held-out score (an interrupt does not wait for one).
        rng = torch.get_rng_state()
        if state["step"] > evaluated_at and not stop.requested:
            last = record_now()
            _log(log_path, last, progress)
        checkpoint(last, rng)
    finally:
        stop.restore()
    return dict(last, stopped_at=state["step"])
