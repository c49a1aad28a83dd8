"""A pre-training run's specification (`PretrainSpec`) and everything built from it once
(`PretrainRun`): the corpus less the benchmark molecules, its featurized cache, the splits,
the task scaling and the model.

The model is the Graphormer of ``--recipe admet`` (`graphnorm.train.recipes`: the ``fast``
preset, GINE branch, random-walk PE, [VNode] + sum readout), built by the same code that
builds a training run's model, by default without RDKit descriptors: a fine-tuning run
(``train --init-from``) adds them at its head, as it does for the ``zinc250k`` backbone.
The run chooses the norm, the depth and the width (the SepNorm comparison and the size
curve), and whether the head reads descriptors (``--descriptors``: RULE.md H); the head has
one output per corpus task.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import torch

from .corpus import load_corpus
from .data import MAX_ATOMS
from .spec import PretrainSpec


def model_config(spec: PretrainSpec, num_tasks: int, featurizer) -> dict:
    """The admet recipe's Graphormer config with the spec's norm, size and descriptors."""
    from graphnorm.train.model_config import model_config_for
    from graphnorm.train.resolve import resolve_config

    # the size as flag values: resolved once, never edited after (train/plan.py)
    cfg = resolve_config({"recipe": "admet"}, {
        "featurizer": {"descriptors": spec.descriptors}, "norm": spec.norm,
        "model": {"num_layers": spec.num_layers, "hidden": spec.hidden,
                  "ffn_hidden": spec.ffn_hidden}})
    return model_config_for(cfg, {"num_tasks": num_tasks}, featurizer)


TASK_FLOOR = 300  # tasks below this many labels are drawn as if they had it: the median
# task has 249, 204 have under 100, and a 1-label task would put its molecule ~70 times into
# every epoch; at 300 no task gets more than ~4.2 passes per epoch (the largest, 33.8k: 0.4)


def task_balanced_weights(corpus, rows: np.ndarray, trained: np.ndarray,
                          floor: int = TASK_FLOOR) -> np.ndarray:
    """Square-root task balancing: molecule m is drawn with weight

        w_m = max_{t in T_m} max(n_t, floor)^(-1/2)

    where T_m are the trained tasks m is labelled for and n_t the training molecules labelled
    for t (w_m = 0 for a molecule with none). Under uniform draws a task's molecules are seen in
    proportion to n_t; here in proportion to ~sqrt(n_t) (a 1,000-label endpoint gets 10x more
    passes than a 100,000-label one, as temperature sampling with T = 2 in multilingual
    training, Arivazhagan et al. 2019, https://arxiv.org/abs/1907.05019). The max lets a
    molecule shared by a small and a large task count for the small one."""
    sub = corpus.subset(rows)
    owner = np.repeat(np.arange(len(rows)), np.diff(sub.indptr))
    ok = trained[sub.task]
    n_t = np.bincount(sub.task[ok], minlength=len(trained)).astype(np.float64)
    per_label = np.zeros(len(sub.task))
    per_label[ok] = np.maximum(n_t[sub.task[ok]], floor) ** -0.5
    w = np.zeros(len(rows))
    np.maximum.at(w, owner, per_label)
    return w


class PretrainRun:
    """The data, splits, scaling and model of one spec (built once, then only executed)."""

    def __init__(self, spec: PretrainSpec, raw_dir=None, cache=None, workers: int = 1,
                 progress: bool = True, tdc_dir=None, quantity_map: dict | None = None):
        """``quantity_map``: a resumed run's map of endpoints to quantities as its data.json
        recorded it (`recorded_quantity_map`); None: today's map (a new run)."""
        from graphnorm.data.build import stage
        from graphnorm.data.table_dataset import table_featurizer
        from graphnorm.models import build_model

        from .data import corpus_dataset, featurized_corpus, labels_of
        from .objective import TaskScaling
        from . import splits

        self.spec = spec
        torch.manual_seed(spec.seed)
        if spec.tdc_tables:
            from graphnorm.data.tdc import admet_group_dir

            corpus = load_corpus(raw_dir, spec.corpora, admet_group_dir(tdc_dir, cache))
        else:
            corpus = load_corpus(raw_dir, spec.corpora)
        self.featurizer = table_featurizer()
        if spec.descriptors:
            self.featurizer = dataclasses.replace(self.featurizer, descriptors=spec.descriptors)
        payload = featurized_corpus(corpus, self.featurizer, cache, workers, progress)
        if spec.leave_out:  # after featurizing: the cache is keyed by the corpus files
            corpus = corpus.without_tasks(spec.leave_out)
        # converted after featurizing: the cache is keyed by the corpus files, not the units
        self.quantity_of, self.groups = None, None
        if spec.targets == "quantities":
            from graphnorm.quantities import sources_recorded, to_quantity_units

            from .quantity_head import groups_of

            converted = to_quantity_units(corpus, sources_recorded(quantity_map))
            corpus, self.quantity_of = converted.corpus, converted.quantity_of
            self.groups = groups_of(self.quantity_of)
        keep = np.arange(len(payload["rows"]))
        self.excluded = 0
        if spec.exclude_tdc:
            excluded = splits.benchmark_keys(tdc_dir, cache)
            keys = payload["keys"]
            smiles_all = payload["graphs"]["smiles"]
            keep = np.array([i for i in keep
                             if not splits.is_benchmark(keys[i], smiles_all[i], excluded)],
                            dtype=np.int64)
            self.excluded = len(payload["rows"]) - len(keep)
            assert splits.leaked((keys[i] for i in keep), excluded) == 0
        if spec.leave_out:  # molecules only the left-out sources measured: nothing to learn
            labelled = np.diff(corpus.indptr) > 0
            keep = keep[labelled[np.asarray(payload["rows"], dtype=np.int64)[keep]]]
        tdc = (f"{self.excluded:,} TDC molecules, " if spec.exclude_tdc
               else "TDC molecules kept (--keep-tdc); ")  # "0 TDC molecules" read as none kept
        stage(progress, f"admet_corpus: {len(keep):,} molecules kept ({tdc}"
                        f"{len(payload['failed']):,} unparsable, "
                        f"{payload['too_large']:,} too large left out)")
        scaffolds = [payload["scaffolds"][i] for i in keep]
        smiles = [payload["graphs"]["smiles"][i] for i in keep]
        train_pos, val_pos = splits.scaffold_holdout(scaffolds, smiles, spec.val_percent)
        # --val-percent 0 trains on every row (a refit once the choices are made): nothing held out
        if (spec.val_percent and not len(val_pos)) or not len(train_pos):
            raise ValueError(f"{len(keep)} molecules: too few to hold out {spec.val_percent} % of "
                             "the scaffolds and train on the rest")
        rows = np.asarray(payload["rows"], dtype=np.int64)
        self._payload = payload
        self.corpus = corpus
        self.held_tasks = (splits.held_out_tasks(corpus, splits.HELD_TASK_MIN)
                           if spec.held_out_tasks else [])
        self.scaling = TaskScaling.fit(corpus, rows[keep[train_pos]], self.held_tasks,
                                       self.groups)
        rng = np.random.default_rng(spec.seed)
        # every held-out molecule and every training one (payload positions): the panel
        # (panel.py) reads them; the loss curve reads a fixed draw of val_max held-out ones
        self.held_out_positions, self.train_positions = keep[val_pos], keep[train_pos]
        val_pos = np.sort(rng.choice(val_pos, min(spec.val_max, len(val_pos)), replace=False))
        self.train_set = corpus_dataset(payload, keep[train_pos], "train")
        self.val_set = corpus_dataset(payload, keep[val_pos], "val")
        probe_pos = self._probe_positions(rows[keep], rng)
        self.probe_set = corpus_dataset(payload, keep[probe_pos], "probe")
        from .evaluate import PROBE_FOLDS

        # a molecule without a scaffold is keyed by its SMILES, as the run's first folds were
        self.probe_folds = np.array([splits.scaffold_bucket(scaffolds[p] or smiles[p], smiles[p],
                                                            PROBE_FOLDS) for p in probe_pos])
        self.sizes = {"train": len(train_pos), "val": len(val_pos), "probe": len(probe_pos),
                      "excluded_tdc": self.excluded, "failed": len(payload["failed"]),
                      "too_large": payload["too_large"]}
        self.labels_of = lambda batch_rows: labels_of(corpus, batch_rows)
        self.model_config = model_config(spec, corpus.num_tasks, self.featurizer)
        self.model = build_model(self.model_config)
        encoder = getattr(self.model, "descriptors", None)
        if encoder is not None:  # standardized with the training molecules' statistics
            encoder.fit_scaling(self._train_descriptors(payload, keep[train_pos]))
        self.warm_start = warm_start(self, spec.init_from) if spec.init_from else None
        if self.groups is not None:
            from .quantity_head import QuantityHead

            self.model.head = QuantityHead.from_linear(self.model.head, self.groups)

    @staticmethod
    def _train_descriptors(payload: dict, positions: np.ndarray) -> torch.Tensor:
        values = payload["graphs"].get("descriptors")
        if values is None:
            raise ValueError("the spec asks for descriptors but the featurized corpus has none")
        return torch.as_tensor(np.asarray(values))[torch.as_tensor(positions)]

    def _probe_positions(self, kept_rows: np.ndarray, rng) -> np.ndarray:
        """Positions (into the kept molecules) of up to `PROBE_MAX` labelled molecules of
        each held-out task, drawn once."""
        from .evaluate import PROBE_MAX

        sub = self.corpus.subset(kept_rows)
        chosen = set()
        for t in self.held_tasks:
            mols = np.repeat(np.arange(len(sub)), np.diff(sub.indptr))[sub.task == t]
            if len(mols) > PROBE_MAX:
                mols = rng.choice(mols, PROBE_MAX, replace=False)
            chosen.update(mols.tolist())
        return np.array(sorted(chosen), dtype=np.int64)

    def permutation(self, epoch: int) -> np.ndarray:
        """The training order of ``epoch`` (positions into the training set): the same on
        every resume (drawn once per epoch). ``uniform``: a permutation; ``task``: as many
        draws with replacement, by `task_balanced_weights`."""
        if getattr(self, "_order", (None,))[0] != epoch:
            rng = np.random.default_rng([self.spec.seed, epoch])
            n = len(self.train_set)
            if self.spec.sampling == "task":
                if getattr(self, "_weights", None) is None:
                    w = task_balanced_weights(self.corpus, self.corpus_rows(self.train_positions),
                                              self.scaling.trained.numpy())
                    self._weights = w / w.sum()
                order = rng.choice(n, n, replace=True, p=self._weights)
            else:
                order = rng.permutation(n)
            self._order = (epoch, order)
        return self._order[1]

    def batch(self, idx):
        from graphnorm.graph.collate import collate_graphs

        return collate_graphs([self.train_set[int(i)] for i in idx])

    def batch_and_labels(self, idx):
        """(collated batch, its labels [B, T]) of training positions ``idx``: one unit of
        work, so that loader processes can make both."""
        batch = self.batch(idx)
        return batch, self.labels_of(batch.y)

    def _loader(self, dataset):
        from torch.utils.data import DataLoader

        from graphnorm.graph.collate import collate_graphs

        return DataLoader(dataset, batch_size=256, shuffle=False, collate_fn=collate_graphs)

    def val_loader(self):
        return self._loader(self.val_set)

    def loader(self, dataset):
        """Batches of 256 in order (evaluation)."""
        return self._loader(dataset)

    def subset(self, positions, split: str):
        """A dataset of the kept molecules at these payload positions."""
        from .data import corpus_dataset

        return corpus_dataset(self._payload, positions, split)

    def corpus_rows(self, positions) -> np.ndarray:
        """The corpus rows (`Corpus` indices) of these payload positions."""
        return np.asarray(self._payload["rows"], dtype=np.int64)[positions]

    def payload_positions(self, corpus_rows) -> np.ndarray:
        """The payload positions of featurized corpus rows (KeyError naming one that is not)."""
        rows = np.asarray(self._payload["rows"], dtype=np.int64)
        order = np.argsort(rows)
        wanted = np.asarray(corpus_rows, dtype=np.int64)
        at = np.clip(np.searchsorted(rows, wanted, sorter=order), 0, len(rows) - 1)
        found = rows[order[at]] == wanted
        if not found.all():
            raise KeyError(f"corpus row {int(wanted[~found][0])} was not featurized")
        return order[at]

    def descriptors_at(self, positions) -> np.ndarray:
        """float32 [N, D]: the featurizer's descriptors of these payload positions."""
        return self._train_descriptors(self._payload, np.asarray(positions)).numpy()

    def probe_loader(self):
        return self._loader(self.probe_set)

    def write_records(self, out) -> None:
        """``pretrain.json`` (the spec) and ``data.json`` (corpus checksum and sources, split
        sizes, held-out tasks, parameters, model config) of a new run folder."""
        import json
        from pathlib import Path

        from .folder import DATA_FILE, SPEC_FILE

        out = Path(out)
        (out / SPEC_FILE).write_text(json.dumps(self.spec.to_dict(), indent=2) + "\n")
        data = {"corpus_sha256": self.corpus.checksum(), "sources": self.corpus.sources,
                "sizes": self.sizes, "tasks": self.corpus.num_tasks,
                "held_out_tasks": [self.corpus.task_names[t] for t in self.held_tasks],
                "parameters": sum(p.numel() for p in self.model.parameters()),
                "model_config": self.model_config}
        if self.warm_start:
            data["init_from"] = self.warm_start
        if self.quantity_of is not None:
            data["quantities"] = self._quantity_map()
        (out / DATA_FILE).write_text(json.dumps(data, indent=2) + "\n")

    def graphnorm_checkpoint(self, step: int) -> dict:
        """The model as a graphnorm checkpoint (what `load_checkpoint` and ``--init-from``
        read). Its task block names every corpus task and kind: the outputs of binary tasks
        are logits, those of regression tasks standardized values (``target_mean``/``_std``)."""
        from graphnorm.checkpoints.format import graphnorm_block
        from graphnorm.tasks import REGRESSION

        from .quantity_head import exported_state

        names = self.corpus.task_names
        task = {"task_type": REGRESSION.stored, "name": "admet-corpus-multitask", "targets": names,
                "kinds": list(self.corpus.task_kinds)}
        if self.quantity_of is not None:  # these endpoints' outputs are in their quantity's unit
            task["quantities"] = self._quantity_map()
        block = graphnorm_block(self.model_config, task, {"pretrain": self.spec.to_dict()},
                                self.scaling.mean, self.scaling.std, self.featurizer,
                                {"corpus": self.corpus.checksum(), **self.sizes,
                                 "max_atoms": MAX_ATOMS})  # what `admet` flags beyond
        state = {f"model.{k}": v for k, v in exported_state(self.model).items()}
        return {"state_dict": state, "graphnorm": block, "epoch": step}

    def _quantity_map(self) -> dict:
        """endpoint -> quantity of every mapped endpoint (`graphnorm.quantities`)."""
        return {n: q for n, q in zip(self.corpus.task_names, self.quantity_of) if q}


def recorded_quantity_map(folder) -> dict | None:
    """The map of endpoints to quantities a run folder's data.json recorded (None: none): a
    run resumed reads the map it started with, whatever the map has become since."""
    import json
    from pathlib import Path

    from .folder import DATA_FILE

    path = Path(folder) / DATA_FILE
    return json.loads(path.read_text()).get("quantities") if path.is_file() else None


def warm_start(run: PretrainRun, path: str) -> dict:
    """Start ``run``'s model from checkpoint ``path``: every weight but the head by
    `train.init_from` (same model and featurizer, or refused by name), and the head's row of
    each endpoint the checkpoint also predicts (the others start fresh). A run that leaves TDC molecules out
    refuses a start that may have seen one. Returns what was loaded, for ``data.json``."""
    from graphnorm.bench.tdc_clean import refusal_of
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.pretrained import resolve_init_from
    from graphnorm.train.init_from import init_from_checkpoint

    loaded = load_checkpoint(resolve_init_from(path))  # read once: refusal, weights, head rows
    if run.spec.exclude_tdc:
        refusal = refusal_of(loaded, path)
        if refusal:
            raise ValueError(f"--init-from {refusal}: a run that leaves every TDC molecule out "
                             "cannot start from it")
    record = init_from_checkpoint(run.model, run.model_config, run.featurizer, path, loaded)
    before = {n: t for t, n in enumerate(loaded.task.get("targets") or [])}
    shared = [(t, before[n]) for t, n in enumerate(run.corpus.task_names) if n in before]
    if shared:  # the rows of the endpoints both predict (a product build adds TDC's)
        new, old = (torch.as_tensor(x) for x in zip(*shared))
        with torch.no_grad():
            run.model.head.weight[new] = loaded.model.head.weight[old]
            run.model.head.bias[new] = loaded.model.head.bias[old]
    record["head_rows"] = len(shared)
    return record
