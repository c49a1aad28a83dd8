"""``train(run, out, ...)``: one call of a pre-training run, through the package's one
training stack -- a Lightning ``Trainer`` over `module.MultitaskModule` and
`datamodule.CorpusDataModule`, with train's callbacks for time (`Throughput`) and memory
(`graphnorm.train.memory`), the held-out log and stops (`held_out.HeldOutLog`), resumed from
``last.ckpt`` by Lightning and written as the run record ``metrics.json`` (`RunRecord`).

The run is one long job cut into calls: ``max_time_s`` is this call's wall budget,
``max_steps`` the run's step limit over all calls; calling again on the same folder goes on
where the last call stopped, as if it had not (the batches, their order, the random state).
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import torch

from .folder import OLD_STATE_FILE, STATE_FILE

# the batches are made in this process by default (`--loader-workers` for a GPU)
warnings.filterwarnings("ignore", message=r".*does not have many workers.*")


class ResumeError(RuntimeError):
    pass


def read_saved_state(out: Path) -> dict | None:
    """The state ``out/last.ckpt`` holds (None: a new run); a file that does not load, is not
    a pre-training state, or is the loop's before the one training stack, is named."""
    path = out / STATE_FILE
    if not path.is_file():
        if (out / OLD_STATE_FILE).is_file():
            raise ResumeError(f"{out} holds {OLD_STATE_FILE}, the state of the pre-training loop "
                              "before the one training stack, which this version cannot continue: "
                              f"start a new --out from its weights (--init-from {out}/best.ckpt) "
                              "or continue it with graphnorm 0.x from before that change")
        return None
    try:
        saved = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # unpickling garbage raises many exception types
        raise ResumeError(f"{path} is corrupt ({type(err).__name__}: {err}); move it away to "
                          "start the run again from scratch") from err
    if not isinstance(saved, dict) or not {"state_dict", "global_step", "loops"} <= set(saved):
        raise ResumeError(f"{path} is not a pre-training state (a Lightning checkpoint with "
                          "state_dict, global_step and loops)")
    return saved


def _accelerator(device: str) -> tuple[str, object]:
    kind = torch.device(device)
    if kind.type == "cpu":
        return "cpu", 1
    return "gpu", [kind.index] if kind.index is not None else 1


def train(run, out: Path, max_time_s: float, max_steps: int | None, eval_every: int,
          progress: bool = True, probe_every: int = 1, device: str = "cpu",
          loader_workers: int = 0, patience: int | None = None) -> dict:
    """Train ``run`` (a `setup.PretrainRun`) until this call's wall budget, ``max_steps``,
    ``patience`` held-out evaluations in a row without a better loss, or a stop signal;
    returns the last log record with ``stopped_at`` (the step ``last.ckpt`` holds) and
    ``stopped_by``. ``device``: where the model trains (states and checkpoints load on any);
    ``loader_workers``: processes making the batches (what feeds a GPU; the CPU time logged
    is then this process's alone)."""
    import lightning as L

    from graphnorm.train.callbacks import Throughput
    from graphnorm.train.memory import heap_trim_callback, hold_freed_memory

    from .datamodule import CorpusDataModule
    from .held_out import HeldOutLog
    from .module import MultitaskModule

    started, cpu_started = time.time(), time.process_time()
    out = Path(out)
    saved = read_saved_state(out)
    module = MultitaskModule(run.model, run.scaling, run.spec)
    if saved is not None:
        try:  # before Lightning loads it: another model's state is named, not a traceback
            module.load_state_dict(saved["state_dict"])
        except (RuntimeError, KeyError) as err:
            raise ResumeError(f"{out / STATE_FILE} holds another model's state ({err}); continue "
                              "it with the settings in its pretrain.json, or pick a new --out") from err
        step = int(saved["global_step"])
        if max_steps is not None and step >= max_steps:
            return {"stopped_at": step}
        if progress:
            print(f"[graphnorm pretrain] resuming {out} at step {step:,}", file=sys.stderr,
                  flush=True)
        del saved
    hold_freed_memory()
    speed = Throughput(started, cpu_started)
    log = HeldOutLog(run, out, eval_every, probe_every, max_time_s, max_steps, progress, speed,
                     device, patience)
    accelerator, devices = _accelerator(device)
    trainer = L.Trainer(
        max_epochs=-1, max_steps=max_steps if max_steps is not None else -1,
        accelerator=accelerator, devices=devices, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
        gradient_clip_val=run.spec.clip_norm or None, use_distributed_sampler=False,
        callbacks=[speed, heap_trim_callback(), log])
    ckpt = out / STATE_FILE
    trainer.fit(module, datamodule=CorpusDataModule(run, loader_workers),
                ckpt_path=str(ckpt) if ckpt.is_file() else None,
                weights_only=False)  # our own run's state: optimizer and loop state too
    stopped_by = _stopped_by(trainer, log)
    _write_record(run, out, trainer, log, stopped_by)
    return dict(log.last, stopped_at=trainer.global_step, stopped_by=stopped_by)


def _stopped_by(trainer, log) -> str:
    if log.stop_requested:
        return "signal"
    if log.out_of_patience:
        return "patience"
    if log.max_steps is not None and trainer.global_step >= log.max_steps:
        return "max_steps"
    return "max_time"


def _write_record(run, out: Path, trainer, log, stopped_by: str) -> None:
    """metrics.json: the run so far (best held-out loss, steps, cost, code and data)."""
    from graphnorm.provenance import code_sha, cpu_model
    from graphnorm.run_folder import RunRecord

    wall, cpu = log.speed.wall_time, log.speed.cpu_time
    RunRecord("loss", run.spec.seed, log.best_loss, None, model="graphormer",
              dataset="admet_corpus", norm=run.spec.norm, steps=trainer.global_step,
              wall_time_s=round(wall, 1), cpu_time_s=round(cpu, 1), budget_s=log.max_time_s,
              stopped_by=stopped_by,
              params=sum(p.numel() for p in run.model.parameters()),
              hardware=f"{cpu_model()}, {torch.get_num_threads()} threads, {log.device}",
              git_sha=code_sha(), data_checksum=run.corpus.checksum(),
              config=run.spec.to_dict(),
              extra={"seen": log.seen, "torch": torch.__version__}).write(out)
