"""LightningDataModule: cached splits → padded GraphBatches.

Training batches are grouped by graph size (``LengthBucketSampler``), which cuts padding
waste, on one device and on several: with DDP every rank takes its share of the same
size-sorted global batch. The module does its own distributed sampling (the Trainer runs with
``use_distributed_sampler=False``): evaluation splits go through ``DistributedSampler``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import lightning as L
import torch
from torch.utils.data import DataLoader, DistributedSampler, Subset

from graphnorm.data import DATASET_INFO, load_dataset
from graphnorm.data.cache import GraphDataset
from graphnorm.graph import LengthBucketSampler, collate_graphs
from graphnorm.graph.structural import RandomWalkCollate
from graphnorm.train.resumable_loader import ResumableLoader, rng_state


class GraphDataModule(L.LightningDataModule):
    @classmethod
    def from_config(cls, cfg, **overrides) -> "GraphDataModule":
        """The data of a TrainConfig, featurized by ``cfg.featurizer_config`` (the one
        FeaturizerConfig of a run: the model is sized from ``dm.featurizer``)."""
        from graphnorm.data.table_dataset import VOCAB, spec_from_config

        table = spec_from_config(cfg)
        vocab = VOCAB if table is not None else DATASET_INFO.get(cfg.dataset, {}).get("vocab", VOCAB)
        kw = dict(batch_size=cfg.batch_size, raw_dir=cfg.raw_dir, cache_root=cfg.cache_root,
                  featurizer=cfg.featurizer_config(vocab), num_workers=cfg.loader_workers(),
                  limit_train=cfg.limit_train, limit_eval=cfg.limit_eval,
                  bucket_by_size=cfg.bucket_by_size, seed=cfg.seed, progress=cfg.progress,
                  bucket_pool=cfg.bucket_pool, table=table, rwpe_steps=cfg.rwpe_steps or 0)
        return cls(cfg.dataset, **dict(kw, **overrides))

    def __init__(self, dataset: str, batch_size: int = 256, raw_dir: Optional[str] = None,
                 cache_root: Optional[str] = None, featurizer=None, num_workers: int = 0,
                 limit_train: Optional[int] = None, limit_eval: Optional[int] = None,
                 bucket_by_size: bool = True, seed: int = 0, progress: bool = True,
                 bucket_pool: int = 4, table=None, rwpe_steps: int = 0):
        super().__init__()
        # the model's random-walk PE, computed once per molecule by the loaders
        self.collate = RandomWalkCollate(rwpe_steps) if rwpe_steps else collate_graphs
        self.table = table  # a TableSpec (own data, graphnorm/data/table_dataset.py) or None
        if table is not None:  # info (targets, num_tasks) is complete after setup()
            from graphnorm.data.info import TABLE_TASKS
            from graphnorm.data.table_dataset import table_info
            from graphnorm.tasks import REGRESSION

            self.name = Path(table.path).name
            # --task auto is decided from the labels in setup(); until then: regression
            task = table.task if table.task in TABLE_TASKS else REGRESSION.name
            self.info = table_info(task, list(table.target_columns or []), self.name)
        elif dataset not in DATASET_INFO:
            raise ValueError(f"unknown dataset {dataset!r}; choose from {sorted(DATASET_INFO)}")
        else:
            self.name, self.info = dataset, DATASET_INFO[dataset]
        self.batch_size, self.num_workers = batch_size, num_workers
        self.raw_dir, self.cache_root = raw_dir, cache_root
        if featurizer is None:  # the defaults of the data's vocabulary
            from graphnorm.chem import FeaturizerConfig

            featurizer = FeaturizerConfig(vocab=self.info["vocab"])
        self.featurizer = featurizer  # a graphnorm.chem.FeaturizerConfig: keys the cache
        self.limit_train, self.limit_eval = limit_train, limit_eval
        self.bucket_by_size, self.seed, self.progress = bucket_by_size, seed, progress
        self.bucket_pool = bucket_pool
        self.splits: Optional[dict] = None
        self._train_batches, self._resume = None, None  # exact --resume, see state_dict
        self.resumes: list[dict] = []  # {"step", "exact"} per --resume of this run so far

    def state_dict(self) -> dict:
        """Saved in every checkpoint and restored by Lightning at every --resume: the random
        state and the run's shape (graphnorm/train/resumable_loader.py)."""
        if self._train_batches is None:  # no training loader yet: nothing to continue
            return {}
        return dict(rng_state(self._train_batches, self.seed), resumes=self.resumes)

    def load_state_dict(self, state: dict) -> None:
        self._resume = state or None

    def setup(self, stage: Optional[str] = None) -> None:
        if self.splits is not None:
            return
        if self.table is not None:
            from graphnorm.data.table_dataset import load_table_dataset

            splits = load_table_dataset(self.table, root=self.cache_root,
                                        featurizer=self.featurizer, progress=self.progress)
            self.info, self.table_splits = splits.info, splits
        else:
            splits = load_dataset(self.name, raw_dir=self.raw_dir, root=self.cache_root,
                                  featurizer=self.featurizer, progress=self.progress)
        self.checksum = splits.checksum
        limits = {"train": self.limit_train, "val": self.limit_eval, "test": self.limit_eval}
        self.splits = {k: _head(splits[k], limits[k]) for k in ("train", "val", "test")}

    def target_stats(self, transforms=None) -> tuple[list[float], list[float]]:
        """Per-target mean and std of the training labels (regression scaling; missing
        labels ignored; of log10(y) where ``transforms`` says so), one entry per target."""
        from graphnorm.tasks import resolve_task

        self.setup()
        return resolve_task(self.info).scaling(_targets(self.splits["train"]), transforms)

    def target_transforms(self) -> Optional[list]:
        """Per target "log10" or None, decided from the training labels
        (`graphnorm.tasks.target_transforms`); None when no target is transformed."""
        from graphnorm.tasks import resolve_task, target_transforms

        self.setup()
        return target_transforms(resolve_task(self.info), _targets(self.splits["train"]).numpy())

    def train_descriptors(self) -> torch.Tensor:
        """RDKit descriptors [N, D] of the training molecules (featurized with them), which
        standardize every split's descriptors in the model (DescriptorEncoder.fit_scaling)."""
        self.setup()
        base, pick = _storage(self.splits["train"])
        if base is None:
            return torch.cat([d.descriptors.reshape(1, -1).float() for d in _iter(self.splits["train"])])
        values = base.molecule_rows("descriptors").float()
        return values if pick is None else values[pick]

    def write_data_files(self, out) -> None:
        """Own data: splits.json, skipped_rows.csv and data_report.json into the run folder."""
        if self.table is not None:
            from graphnorm.data.table_dataset import write_run_files

            write_run_files(out, self.table_splits)

    def train_domain(self) -> dict:
        """What the training molecules span, kept in checkpoints so prediction can flag
        molecules outside it."""
        self.setup()
        sizes = graph_sizes(self.splits["train"])
        return {"max_atoms": int(sizes.max()), "mean_atoms": round(float(sizes.float().mean()), 2)}

    def loader(self, split: str, train: bool, distributed: bool = False) -> DataLoader:
        """Batches of a split; ``distributed``: only this rank's share (Lightning's hooks),
        otherwise all of it (e.g. scoring a checkpoint on rank 0 after training)."""
        ds = self.splits[split]
        kw = dict(collate_fn=self.collate, num_workers=self.num_workers,
                  persistent_workers=self.num_workers > 0)
        world, rank = 1, 0
        if distributed and self.trainer is not None:
            world, rank = self.trainer.world_size, self.trainer.global_rank
        if train and self.bucket_by_size:
            sampler = LengthBucketSampler(graph_sizes(ds).tolist(), self.batch_size, shuffle=True,
                                          seed=self.seed, num_replicas=world, rank=rank,
                                          pool_batches=self.bucket_pool)
            if distributed and self.trainer is not None:  # Lightning's training loader
                return self._resumable(ds, sampler, kw, exact=world == 1)
            return DataLoader(ds, batch_sampler=sampler, **kw)
        if train and distributed and self.trainer is not None:
            self._note_resume(self._resume, exact=False)  # random order: no exact resume
        if world > 1:
            sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=train,
                                         seed=self.seed)
            return DataLoader(ds, batch_size=self.batch_size, sampler=sampler, **kw)
        return DataLoader(ds, batch_size=self.batch_size, shuffle=train, **kw)

    def _resumable(self, ds, sampler: LengthBucketSampler, kw: dict, exact: bool) -> DataLoader:
        """The training loader from where a --resume left off: Lightning restores
        ``global_step`` before it asks for the loader; the sampler counts its epochs itself
        (one per iteration) from this one, leaving out the batches already trained."""
        sampler.epoch, sampler.skip = divmod(self.trainer.global_step, len(sampler))
        self._train_batches = len(sampler)
        resume, self._resume = self._resume, None
        self._note_resume(resume, exact=exact and resume is not None)
        return ResumableLoader(ds, batch_sampler=sampler, resume=resume, **kw)

    def _note_resume(self, resume: Optional[dict], exact: bool) -> None:
        """metrics.json names every resume of the run and whether it continued exactly (not
        from a checkpoint older than exact resumes, random batches or DDP)."""
        if self.trainer.global_step:
            self.resumes = [*(resume or {}).get("resumes", []),
                            {"step": self.trainer.global_step, "exact": exact}]

    def random_batches(self, count: int, seed: int = 0):
        """``count`` batches of uniformly drawn training graphs (no size bucketing)."""
        ds = self.splits["train"]
        gen = torch.Generator().manual_seed(seed)
        order = torch.randperm(len(ds), generator=gen)[: count * self.batch_size].tolist()
        for s in range(0, len(order), self.batch_size):
            yield self.collate([ds[i] for i in order[s : s + self.batch_size]])

    def steps_per_epoch(self) -> int:
        """Batches per epoch on one device."""
        self.setup()
        n = len(self.splits["train"])
        return max(1, -(-n // self.batch_size))

    def train_dataloader(self) -> DataLoader:
        return self.loader("train", True, distributed=True)

    def val_dataloader(self) -> DataLoader:
        return self.loader("val", False, distributed=True)

    def test_dataloader(self) -> DataLoader:
        return self.loader("test", False, distributed=True)


def _head(ds, n: Optional[int]):
    return ds if n is None or n >= len(ds) else Subset(ds, range(n))


def _iter(ds):
    return (ds[i] for i in range(len(ds)))


def _storage(ds):
    """(GraphDataset, selected positions or None) behind ``ds``, or (None, None)."""
    if isinstance(ds, Subset) and isinstance(ds.dataset, GraphDataset):
        return ds.dataset, torch.as_tensor(list(ds.indices))
    return (ds, None) if isinstance(ds, GraphDataset) else (None, None)


def graph_sizes(ds) -> torch.Tensor:
    """Atoms per graph; from storage offsets when possible (molhiv: 7 s -> ms)."""
    base, pick = _storage(ds)
    if base is None:
        return torch.tensor([int(d.num_nodes) for d in _iter(ds)])
    sizes = base.graph_sizes()
    return sizes if pick is None else sizes[pick]


def _targets(ds) -> torch.Tensor:
    base, pick = _storage(ds)
    if base is None:
        return torch.cat([d.y.reshape(1, -1).float() for d in _iter(ds)])
    ys = base.targets()
    return ys if pick is None else ys[pick]
