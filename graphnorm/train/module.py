"""LightningModule around a model of graphnorm.models: training steps and the optimiser.

The task (loss, target scaling, metric) is `graphnorm.tasks`'; the checkpoint block is
written by `graphnorm.checkpoints`.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import lightning as L
import torch

from graphnorm.models import build_model
from graphnorm.tasks import compute_metric, metric_named, resolve_task
from .schedule import warmup_linear_decay


class GraphormerModule(L.LightningModule):
    def __init__(self, model_config: dict, task: dict, train_config: dict,
                 target_mean: float = 0.0, target_std: float = 1.0,
                 steps_per_epoch: int = 1, train_domain: Optional[dict] = None,
                 featurizer: Optional[dict] = None):
        super().__init__()
        self.save_hyperparameters()
        self.model = build_model(model_config)  # Graphormer or a baseline (graphnorm.models)
        self.task = task  # {"name", "task_type", "metric", "vocab", "num_tasks"}
        self.task_kind = resolve_task(task)  # loss, scaling, outputs (graphnorm.tasks)
        self.tc = train_config
        # per-target vectors [T] (a float from older callers/checkpoints means one target)
        self.register_buffer("target_mean", torch.tensor(target_mean, dtype=torch.float32).reshape(-1))
        self.register_buffer("target_std", torch.tensor(target_std, dtype=torch.float32).reshape(-1))
        self.steps_per_epoch = steps_per_epoch
        self.train_domain = train_domain or {}  # e.g. {"max_atoms": 38}: prediction warns beyond
        self.featurizer = featurizer  # FeaturizerConfig dict of the data: the checkpoint keeps it
        self._val_outputs: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, list]] = []
        # the last validation's (predictions as `predict` writes them [N, T], labels [N, T],
        # SMILES): what `ValidationTrace` records (graphnorm/train/val_trace.py)
        self.last_validation: Optional[tuple[torch.Tensor, torch.Tensor, list]] = None

    # ---- forward and loss -------------------------------------------------------------
    def forward(self, batch) -> torch.Tensor:
        """Predictions in original units (regression) or logits (binary): [B, T]."""
        return self.task_kind.in_units(self.model(batch), self.target_mean, self.target_std,
                                       self.task.get("target_transforms"))

    def _loss(self, raw: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.task_kind.loss(raw, y, self.target_mean, self.target_std, self.tc.get("loss"),
                                   self.task.get("target_transforms"))

    def training_step(self, batch, batch_idx: int) -> torch.Tensor:
        weight = self.tc.get("uniformity_weight", 0.0)
        if weight > 0:
            raw, emb = self.model(batch, return_embeddings=True)
        else:
            raw = self.model(batch)
        loss = self._loss(raw, batch.y)
        self.log("train/loss", loss, batch_size=batch.num_graphs, prog_bar=True, sync_dist=True)
        if weight > 0:
            from graphnorm.nn import uniformity_loss

            unif = uniformity_loss(emb.vnode)
            if self.tc.get("uniformity_on_tokens"):
                unif = unif + uniformity_loss(emb.tokens[emb.node_mask])
            self.log("train/uniformity", unif, batch_size=batch.num_graphs)
            loss = loss + weight * unif
        return loss

    def on_train_start(self) -> None:
        # Lightning seeds every rank alike; after DDP has broadcast rank 0's weights, give
        # each rank its own random stream so that ranks draw different dropout masks.
        if self.trainer.world_size > 1:
            torch.manual_seed(int(self.tc.get("seed", 0)) * 1009 + self.trainer.global_rank)

    # ---- evaluation -------------------------------------------------------------------
    def validation_step(self, batch, batch_idx: int) -> None:
        raw = self.model(batch).detach()
        pred = self.task_kind.in_units(raw, self.target_mean, self.target_std,
                                       self.task.get("target_transforms"))
        smiles = list(batch.smiles or [None] * batch.y.shape[0])
        self._val_outputs.append((pred, batch.y.detach(), raw, smiles))

    def on_validation_epoch_end(self) -> None:
        if not self._val_outputs:
            return
        pred = torch.cat([p for p, *_ in self._val_outputs])
        y = torch.cat([t for _, t, *_ in self._val_outputs])
        if self.trainer.world_size == 1:
            raw = torch.cat([r for *_, r, _ in self._val_outputs])
            self.last_validation = (
                self.task_kind.predictions(raw.float().cpu(), self.target_mean.cpu(),
                                           self.target_std.cpu(), self.task.get("target_transforms")),
                y.float().cpu(), [s for *_, smiles in self._val_outputs for s in smiles])
        self._val_outputs.clear()
        if self.trainer.world_size > 1:  # every rank scores the full validation set
            pred = self.all_gather(pred).flatten(0, 1)
            y = self.all_gather(y).flatten(0, 1)
        value = compute_metric(self.task["metric"], pred, y)
        if math.isnan(value):  # keep checkpointing well-defined on degenerate slices
            value = metric_named(self.task["metric"]).worst
        self.log(f"val/{self.task['metric']}", value, prog_bar=True, sync_dist=False)

    # ---- optimisation -----------------------------------------------------------------
    def configure_optimizers(self) -> dict[str, Any]:
        tc = self.tc
        groups = [{"params": p, "weight_decay": wd, "lr": tc["lr"] * scale}
                  for p, wd, scale in param_groups(self.model, tc["weight_decay"],
                                                   backbone_lr_of(tc)) if p]
        opt = torch.optim.AdamW(groups, lr=tc["lr"], fused=True)
        if tc.get("max_time"):  # a time budget: the schedule follows the elapsed fraction
            sched = warmup_linear_decay(opt, 0, 0, tc["lr"], tc["end_lr"],
                                        warmup_fraction=tc["warmup_fraction"],
                                        progress=self._time_progress)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
        total = tc.get("total_steps") or self._optimizer_steps()
        warmup = tc.get("warmup_steps") or max(1, int(tc["warmup_fraction"] * total))
        sched = warmup_linear_decay(opt, warmup, total, tc["lr"], tc["end_lr"])
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def _time_progress(self) -> float:
        """Fraction of the training time budget spent, from Lightning's ``Timer`` (whose
        elapsed time is saved in checkpoints, so a resumed run continues the schedule)."""
        from lightning.pytorch.callbacks import Timer

        trainer = self._trainer
        timers = [c for c in (trainer.callbacks if trainer else []) if isinstance(c, Timer)]
        if not timers or not timers[0]._duration:
            return 0.0
        return min(1.0, timers[0].time_elapsed("train") / timers[0]._duration)

    def _optimizer_steps(self) -> int:
        """Optimizer steps of the whole run, for the LR schedule: epochs x batches per epoch
        per rank (with DDP each rank steps once per global batch of ``world`` batches).
        Counted here, not by ``trainer.estimated_stepping_batches``: that builds the training
        loader before a checkpoint is restored, and Lightning then never hands the loader
        its saved state, which breaks exact ``--resume`` (graphnorm/train/resumable_loader.py)."""
        trainer = self._trainer
        if trainer is None:  # used standalone
            return (self.tc.get("max_epochs") or 200) * self.steps_per_epoch
        epochs = trainer.max_epochs if trainer.max_epochs > 0 else self.tc.get("max_epochs") or 200
        return epochs * -(-self.steps_per_epoch // trainer.world_size)

    # ---- self-describing checkpoints (format: graphnorm.checkpoints) -----------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        from graphnorm.checkpoints import graphnorm_block
        from graphnorm.chem import FeaturizerConfig

        checkpoint["graphnorm"] = graphnorm_block(
            self.hparams.model_config, self.task, self.tc, self.target_mean, self.target_std,
            FeaturizerConfig.from_dict(self.featurizer), self.train_domain)

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        """A resumed run's checkpoint (``--resume``) in the current format and key layout."""
        from graphnorm.checkpoints import upgrade_checkpoint

        upgrade_checkpoint(checkpoint, self.model)


def backbone_lr_of(tc: dict) -> float:
    """The copied weights' share of the learning rate: ``backbone_lr`` in a fine-tuning run,
    1 otherwise; a share outside [0, 1], or one set for a run from scratch, is refused."""
    share = float(tc.get("backbone_lr", 1.0))
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"backbone_lr must lie in [0, 1] (0: frozen), got {share}")
    if share != 1.0 and not tc.get("init_from"):
        raise ValueError(f"backbone_lr {share} applies to a fine-tuning run, and this one trains "
                         "from scratch (no --init-from, or the recipe's backbone stepped aside)")
    return share


def param_groups(model: torch.nn.Module, weight_decay: float,
                 backbone_lr: float = 1.0) -> list[tuple[list, float, float]]:
    """(parameters, weight decay, learning-rate share) groups: `decay_groups` split into the
    head side (`init_from.HEAD_SIDE`, full rate) and the rest at ``backbone_lr`` -- the
    discriminative rates of fine-tuning (Howard & Ruder 2018, https://arxiv.org/abs/1801.06146);
    one group each when the share is 1. A frozen share (0) takes no step and no decay."""
    from .init_from import HEAD_SIDE

    decay, no_decay = decay_groups(model)
    if backbone_lr == 1.0:
        return [(decay, weight_decay, 1.0), (no_decay, 0.0, 1.0)]
    head = {id(p) for name, p in model.named_parameters() if name.startswith(HEAD_SIDE)}
    return [([p for p in ps if (id(p) in head) == at_head], wd, 1.0 if at_head else backbone_lr)
            for at_head in (True, False) for ps, wd in ((decay, weight_decay), (no_decay, 0.0))]


def decay_groups(model: torch.nn.Module) -> tuple[list, list]:
    """(weight-decayed, not decayed) parameters: only the weight matrices of ``nn.Linear``
    layers are decayed (minGPT's rule); biases, norms, embeddings, the [VNode], hop matrices
    and the virtual distance are not -- pulling a learned token or a bias table towards 0 is
    a prior nobody asked for."""
    linear = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Linear)}
    decay, no_decay = [], []
    for p in model.parameters():
        (decay if id(p) in linear else no_decay).append(p)
    return decay, no_decay
