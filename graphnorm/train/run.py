"""``train(config)``: one training run from config to metrics.json.

Writes into ``config.out``: ``best.ckpt`` (best validation metric), ``last.ckpt`` (resumable,
also refreshed every ``checkpoint_every_n_steps``), ``logs/`` (CSV), ``learning_curve.png``
and ``metrics.json`` (val/test metric at the best validation epoch, epochs, wall time,
parameter count, graphs/s, git sha, data checksum, full config).
"""
from __future__ import annotations

import datetime
import json
import warnings
import time
from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping
from lightning.pytorch.loggers import CSVLogger

from .callbacks import (EpochProgressBar, progress_callbacks, RecalibrateBatchStats, RunFolderCheckpoint,
                        Throughput, keep_history, merge_history, plot_learning_curve, weight_averaging)
from .config import TrainConfig
from .datamodule import GraphDataModule
from .evaluate import evaluate_checkpoint
from .val_trace import ValidationTrace
from .init_from import RECORD as INIT_RECORD, init_from_checkpoint
from .memory import hold_freed_memory
from .model_config import model_config_for
from .module import GraphormerModule, backbone_lr_of
from .plan import step_budget
from graphnorm.provenance import code_sha, cpu_model
from graphnorm.run_folder import (BEST_CHECKPOINT, KEPT_CHECKPOINTS, LAST_CHECKPOINT, RunRecord,
                                  refuse_overwrite)
from graphnorm.tasks import HIGHER_IS_BETTER, target_names


def model_line(model) -> str:
    """``Graphormer, 199,489 parameters`` (``, 12 frozen`` where some are not trained)."""
    total = sum(p.numel() for p in model.parameters())
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    return f"{type(model).__name__}, {total:,} parameters" + (f", {frozen:,} frozen" if frozen else "")


def _hardware(trainer) -> str:
    """What the run actually used (``accelerator="auto"`` resolved), for metrics.json."""
    cpu = f"{cpu_model()}, {torch.get_num_threads()} threads"
    kind = type(trainer.accelerator).__name__.replace("Accelerator", "").lower()
    if kind == "cuda":
        kind = f"cuda {torch.cuda.get_device_name(trainer.strategy.root_device)}"
    return f"{cpu}, {kind} x{trainer.world_size}"


# a Lightning notice that says nothing about this run: checkpoints share the run directory
# with logs/ and the data files by design (Lightning's other noise: graphnorm/quiet.py)
warnings.filterwarnings("ignore", message=r"Checkpoint directory .* exists and is not empty")


def _initialize(module, model_config: dict, featurizer, init_from, out: Path, resuming: bool,
                panel_column=None):
    """``--init-from``: the pre-trained weights, once; a resumed run has them in last.ckpt.
    What was loaded is kept in OUT/init_from.json, for metrics.json (None: no init_from)."""
    if not init_from:
        return None
    record = out / INIT_RECORD
    if resuming and record.is_file():
        return json.loads(record.read_text())
    info = init_from_checkpoint(module.model, model_config, featurizer, init_from,
                                panel_column=panel_column)
    fresh = " and ".join(["the head"] + [f"the {k} encoder" for k in info.get("added_at_head", [])])
    shipped = info.get("shipped")
    what = f"the shipped backbone {shipped!r} ({info['path']}, " if shipped else f"{info['path']} ("
    # a pre-training checkpoint counts optimizer steps, a training run's its epochs
    trained = (f"{info['pretrain_steps']:,} pre-training steps" if "pretrain_steps" in info
               else f"epoch {info['epoch']}")
    print(f"[graphnorm] fine-tuning from {what}sha256 {info['sha256'][:8]}, {trained}, "
          f"{info['tensors']} tensors; {fresh} start"
          f"{'s' if fresh == 'the head' else ''} fresh); --init-from none trains from scratch",
          flush=True)
    return info


def train(cfg: TrainConfig) -> dict:
    from graphnorm.norms import build_norm

    from graphnorm.models import model_kind

    if model_kind(cfg.model_name).tree:
        raise ValueError(f"train() trains the torch models; --model {cfg.model_name} runs through "
                         "graphnorm.train.processes.train_run (graphnorm/train/tree_run.py)")

    started = time.time()  # a time budget covers the whole run, data set-up included
    cpu_started = time.process_time()  # CPU seconds: the cost, whatever else shares the cores
    hold_freed_memory()  # else every step faults its big tensors' pages in again (memory.py)
    build_norm(cfg.norm, 8)  # a typo in the norm spec fails now, not after loading data
    budget_note = cfg.budget_warning()
    if budget_note:
        warnings.warn(budget_note, stacklevel=2)
    code_sha()  # fixed now, before a long run
    out = Path(cfg.out)
    refuse_overwrite(out, cfg.resume)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    backbone_lr_of(cfg.to_dict())  # a share that cannot apply is refused before any work
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    dm = GraphDataModule.from_config(cfg)
    dm.setup()
    cfg = step_budget(cfg, dm.steps_per_epoch())  # a recipe's max_steps, in epochs
    model_config = model_config_for(cfg, dm.info, dm.featurizer)  # own tables: info after setup
    transforms = dm.target_transforms() if cfg.target_transform == "auto" else None
    if transforms and cfg.progress:
        logged = [n for n, t in zip(target_names(dm.info), transforms) if t]
        print(f"[graphnorm] fitted in log10 units, predicted in yours (positive, heavy-tailed "
              f"labels): {', '.join(map(str, logged))}; --target-transform none keeps raw units", flush=True)
    mean, std = dm.target_stats(transforms)
    task = dict(dm.info, name=dm.name, **({"target_transforms": transforms} if transforms else {}))
    module = GraphormerModule(model_config, task, cfg.to_dict(), mean, std,
                              dm.steps_per_epoch(), dm.train_domain(), dm.featurizer.to_dict())
    ckpt = out / LAST_CHECKPOINT
    resuming = cfg.resume and ckpt.is_file()
    # after the data and the pre-trained weights: a failed load leaves no empty folder
    initialized = _initialize(module, model_config, dm.featurizer, cfg.init_from, out, resuming,
                              cfg.panel_column)
    encoder = getattr(module.model, "descriptors", None)
    if encoder is not None and not resuming:  # a resumed run restores them from last.ckpt
        encoder.fit_scaling(dm.train_descriptors())  # the training split's mean and std
    out.mkdir(parents=True, exist_ok=True)
    dm.write_data_files(out)  # own data: splits.json, skipped_rows.csv, data_report.json
    if initialized:
        (out / INIT_RECORD).write_text(json.dumps(initialized, indent=2))
    metric = dm.info["metric"]
    mode = "max" if HIGHER_IS_BETTER[metric] else "min"
    # best.ckpt at the best validation epoch; last.ckpt after every validation ...
    best_cb = RunFolderCheckpoint(dirpath=out, filename=Path(BEST_CHECKPOINT).stem,
                              monitor=f"val/{metric}", mode=mode,
                              save_top_k=1, save_last=True, enable_version_counter=False)
    # ... and every few steps, so a run killed mid-epoch loses little (monitor=None, fixed name)
    last_cb = RunFolderCheckpoint(dirpath=out, filename=Path(LAST_CHECKPOINT).stem,
                              every_n_train_steps=cfg.checkpoint_every_n_steps,
                              enable_version_counter=False)
    # --keep-checkpoints: every validation's weights, named by step (after recalibration)
    # (no monitor: Lightning refuses two checkpoint callbacks with the same one)
    kept = [RunFolderCheckpoint(dirpath=out / KEPT_CHECKPOINTS, filename="{step}", save_top_k=-1,
                            enable_version_counter=False)] if cfg.keep_checkpoints else []
    # --patience: after the checkpoints, so the validation that stops the run is saved too
    patience = cfg.patience_validations(dm.steps_per_epoch())
    if cfg.patience and not patience:
        warnings.warn(f"patience {cfg.patience} is a share of the run's validations, whose number "
                      "a time budget alone does not fix: training the whole budget", stacklevel=2)
    stopper = [EarlyStopping(monitor=f"val/{metric}", mode=mode, patience=patience,
                             check_on_train_epoch_end=False)] if patience else []
    speed = Throughput(started, cpu_started)
    averaging = [weight_averaging(cfg.ema_decay, cfg.recalibrate_batches > 0)] if cfg.ema_decay else []
    # averaging before recalibration: it swaps the averaged weights in, then BN is re-estimated
    traced = [ValidationTrace(out)] if cfg.trace_validation else []
    callbacks = [best_cb, last_cb, *kept, *stopper, *traced, speed, *averaging,
                 RecalibrateBatchStats(cfg.recalibrate_batches, cfg.seed,
                                       "random" if cfg.ema_decay else cfg.recalibrate_source)]
    progress = progress_callbacks(cfg.progress)
    callbacks += progress
    max_time = None
    if cfg.budget_s is not None:  # Lightning's Timer; what data set-up took is not left to train
        max_time = datetime.timedelta(seconds=max(1.0, cfg.budget_s - (time.time() - started)))
    if resuming:
        keep_history(out)
    trainer = L.Trainer(
        max_epochs=cfg.epochs_limit, max_time=max_time,
        check_val_every_n_epoch=cfg.val_every_epochs(dm.steps_per_epoch()), accelerator=cfg.accelerator,
        devices=cfg.devices, strategy=cfg.strategy, callbacks=callbacks,
        logger=CSVLogger(out, name="logs", version=""), gradient_clip_val=cfg.grad_clip,
        enable_progress_bar=any(isinstance(c, EpochProgressBar) for c in progress), log_every_n_steps=max(1, min(10, dm.steps_per_epoch())), deterministic=False,
        # one line of our own instead of Lightning's table, whose FLOPs column reads 0 here (it
        # counts them only for a module with an example input)
        enable_model_summary=False,
        use_distributed_sampler=False)
    if cfg.progress:
        print(f"[graphnorm] model: {model_line(module.model)}", flush=True)  # GraphDataModule shards (size-bucketed) batches itself
    if cfg.resume and not resuming:
        print(f"--resume: no {ckpt} yet, starting from scratch")
    trainer.fit(module, datamodule=dm, ckpt_path=str(ckpt) if resuming else None)
    if trainer.global_rank != 0:
        return {}
    best_path = out / BEST_CHECKPOINT
    validated = best_path.is_file()
    if not validated:  # the budget ended before the first validation: keep the final weights
        trainer.save_checkpoint(best_path)
    scores = evaluate_checkpoint(best_path, dm, out)
    timer = next((c for c in trainer.callbacks if type(c).__name__ == "Timer"), None)
    stopped_by = "max_epochs"
    if stopper and stopper[0].wait_count >= stopper[0].patience:
        stopped_by = "patience"
    if timer is not None and timer._duration and timer.time_elapsed("train") >= timer._duration:
        stopped_by = "max_time"
    record = RunRecord(
        metric, cfg.seed, scores["val"], scores["test"], model=cfg.model_name,
        dataset=cfg.data or cfg.dataset, norm=cfg.norm, per_target=scores.get("per_target"),
        # epochs count from 1 everywhere (progress bar, here, learning curve)
        best_epoch=scores["epoch"] + 1 if validated else None, epochs=trainer.current_epoch,
        steps=trainer.global_step, wall_time_s=round(speed.wall_time, 1),
        cpu_time_s=round(speed.cpu_time, 1), budget_s=cfg.budget_s, stopped_by=stopped_by,
        params=sum(p.numel() for p in module.model.parameters()), hardware=_hardware(trainer),
        git_sha=code_sha(), data_checksum=dm.checksum, config=cfg.to_dict(),
        extra={"train_graphs_per_s": round(speed.graphs_per_second, 1),
               **({"init_from": initialized} if initialized else {}),
               **({"resumes": dm.resumes} if dm.resumes else {}),  # exact: as if never stopped
               "torch": torch.__version__})
    record.write(out)
    result = record.fields
    merge_history(out)
    log_csv = out / "logs" / "metrics.csv"
    if log_csv.is_file():
        plot_learning_curve(log_csv, out / "learning_curve.png", metric)
    return result
