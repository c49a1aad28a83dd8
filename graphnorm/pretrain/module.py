"""The pre-training LightningModule: the corpus model under the masked multi-task loss
(`objective.multitask_loss`), AdamW with the warm-up / inverse-square-root schedule
(`graphnorm.train.schedule.warmup_inverse_sqrt`), stepped once per batch.

Batches come from `datamodule.CorpusDataModule` as (collated graphs, labels [B, T]); the
held-out scores, checkpoints and stops are `held_out.HeldOutLog`'s."""
from __future__ import annotations

import lightning as L
import torch

from .objective import TaskScaling, multitask_loss


class MultitaskModule(L.LightningModule):
    """``model``: a `PretrainRun`'s model, shared, not copied (the run exports it as a
    graphnorm checkpoint); ``scaling``: the tasks' statistics; ``spec``: the run's
    `PretrainSpec` (learning rate, warm-up, weight decay, weighting, schedule offset)."""

    def __init__(self, model: torch.nn.Module, scaling: TaskScaling, spec):
        super().__init__()
        self.model, self.spec = model, spec
        self.scaling = scaling  # moved to the model's device in `on_fit_start`

    def on_fit_start(self) -> None:
        self.scaling = self.scaling.to(self.device)

    def training_step(self, batch, batch_idx: int) -> torch.Tensor:
        graphs, y = batch
        return multitask_loss(self.model(graphs), y, self.scaling, self.spec.weighting)

    def configure_optimizers(self) -> dict:
        from graphnorm.train.schedule import warmup_inverse_sqrt

        spec = self.spec
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=spec.lr,
                                      weight_decay=spec.weight_decay)
        schedule = warmup_inverse_sqrt(optimizer, spec.lr, spec.warmup_steps, spec.schedule_offset)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}
