"""The corpus's training batches as a LightningDataModule, resumable exactly.

An epoch's order is `PretrainRun.permutation(epoch)` (a permutation, or square-root task
balanced draws), cut into batches of ``batch_size`` in that order. A run resumed from
``last.ckpt`` goes on at the batch after the last one it trained, with the random state it
had then (graphnorm/train/resumable_loader.py, the same mechanism as ``train --resume``):
the model equals that of a run never stopped (tests/pretrain/test_run.py).
"""
from __future__ import annotations

from typing import Iterator

import lightning as L
import numpy as np


class EpochOrderBatches:
    """Batch sampler over ``order_of(epoch)`` (positions into the training set), counting
    its epochs itself, one per iteration, from ``epoch``; ``skip``: the next iteration leaves
    out its first ``skip`` batches (trained before a resume). ``len`` is a whole epoch's, as
    Lightning counts the skipped batches as done."""

    def __init__(self, order_of, n: int, batch_size: int, seed: int):
        self.order_of, self.n, self.batch_size, self.seed = order_of, n, batch_size, seed
        self.epoch, self.skip = 0, 0

    def __len__(self) -> int:
        return -(-self.n // self.batch_size)

    def __iter__(self) -> Iterator[list[int]]:
        order, B = np.asarray(self.order_of(self.epoch)), self.batch_size
        starts = range(self.skip * B, len(order), B)
        self.epoch, self.skip = self.epoch + 1, 0
        for s in starts:
            yield order[s:s + B].tolist()


class CorpusDataModule(L.LightningDataModule):
    """Training batches (graphs, labels [B, T]) of a `PretrainRun`, made in ``workers``
    forked processes (they share the featurized corpus) or in this one."""

    def __init__(self, run, workers: int = 0):
        from graphnorm.graph.collate import collate_graphs
        from graphnorm.graph.structural import RandomWalkCollate

        super().__init__()
        self.run, self.workers = run, workers
        self._batches, self._resume = None, None
        # the model's random-walk PE per molecule, in the loader processes, as train's loaders
        # compute it: done by the model per padded batch it was ~11 % of a pre-training step.
        # Kept for every training molecule (~2 kB each, ~0.6 GB for the corpus): with train's
        # 50,000 most of the corpus was computed again every epoch (17 of a batch's 30 ms of
        # collation; 9 % of a build's samples by py-spy)
        steps = int(run.model_config.get("rwpe_steps") or 0)
        self._collate_graphs = RandomWalkCollate(steps, max_graphs=len(run.train_set)) \
            if steps else collate_graphs

    def state_dict(self) -> dict:
        """The random state and the run's shape, saved in every checkpoint."""
        from graphnorm.train.resumable_loader import rng_state

        return {} if self._batches is None else rng_state(self._batches, self.run.spec.seed)

    def load_state_dict(self, state: dict) -> None:
        self._resume = state or None

    def collate(self, items) -> tuple:
        batch = self._collate_graphs(items)
        return batch, self.run.labels_of(batch.y)

    def train_dataloader(self):
        from graphnorm.train.resumable_loader import ResumableLoader

        run = self.run
        sampler = EpochOrderBatches(run.permutation, len(run.train_set), run.spec.batch_size,
                                    run.spec.seed)
        # Lightning restores global_step before it asks for the loader
        sampler.epoch, sampler.skip = divmod(self.trainer.global_step, len(sampler))
        self._batches = len(sampler)
        resume, self._resume = self._resume, None
        extra = ({"num_workers": self.workers, "multiprocessing_context": "fork",
                  "prefetch_factor": 4, "persistent_workers": False} if self.workers else {})
        return ResumableLoader(run.train_set, batch_sampler=sampler, collate_fn=self.collate,
                               resume=resume, **extra)
