"""What pre-training may read, and how it holds out molecules and tasks.

- **Benchmark molecules.** The corpus ships without any TDC ADMET test molecule (its README).
  Because TDC's validation splits are drawn from ``train_val`` (a new scaffold split per
  seed, so over five seeds nearly every ``train_val`` molecule is validation once), a model
  whose fine-tuning choices are made on those splits must not have read them either:
  `benchmark_keys` collects the loose keys (`corpus.loose_key`) of every TDC ``train_val``
  *and* ``test`` molecule, and `without_molecules` drops every corpus molecule with such a
  key. The pre-trained model then never saw a TDC molecule at all. `leaked` re-checks it.
- **Held-out molecules**: whole Murcko-scaffold groups, chosen by a hash of the scaffold
  (stable under adding or removing other molecules, unlike a sorted scaffold split), so
  validation molecules share no scaffold with training ones.
- **Held-out tasks**: one task per corpus with several tasks (at least `HELD_TASK_MIN`
  labels), chosen by a hash of its name; their labels are never trained on. A linear probe on
  the frozen embedding scores them (`probe.py`): how well the embedding transfers to an
  endpoint pre-training never fitted.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from graphnorm.data.scaffold import scaffold_bucket

from .corpus import Corpus, loose_key

HELD_TASK_MIN = 500  # labels a held-out task needs for a stable probe score
VAL_PERCENT = 5  # of scaffold groups held out for validation


def is_benchmark(key: Optional[str], smiles: str, excluded: set[str]) -> bool:
    """Whether a molecule (its loose key; its SMILES when RDKit cannot key it) is excluded."""
    return (key if key is not None else smiles) in excluded


def scaffold_holdout(scaffolds: Sequence[Optional[str]], smiles: Sequence[str],
                     percent: int = VAL_PERCENT) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, validation rows): a molecule is held out when its scaffold's hash bucket
    (of 100) is below ``percent``; a molecule without a scaffold (acyclic or unparsable) is
    its own group, keyed by its SMILES."""
    held = np.array([scaffold_bucket(scaf, s) < percent for scaf, s in zip(scaffolds, smiles)],
                    dtype=bool)
    return np.flatnonzero(~held), np.flatnonzero(held)


def held_out_tasks(corpus: Corpus, min_labels: int = HELD_TASK_MIN) -> list[int]:
    """One task per corpus of two or more tasks: among those with ``min_labels`` labels, the
    one whose name hashes lowest. Sorted task ids."""
    counts = corpus.labels_per_task()
    by_corpus: dict[str, list[int]] = {}
    for t in range(corpus.num_tasks):
        by_corpus.setdefault(corpus.corpus_of(t), []).append(t)
    held = []
    for tasks in by_corpus.values():
        big = [t for t in tasks if counts[t] >= min_labels]
        if len(tasks) >= 2 and big:
            held.append(min(big, key=lambda t: hashlib.sha256(
                corpus.task_names[t].encode()).hexdigest()))
    return sorted(held)


def benchmark_keys(tdc_dir: Optional[str | Path] = None, cache=None,
                   tasks: Optional[Iterable[str]] = None) -> set[str]:
    """Loose keys of every molecule of the TDC ADMET group (train_val and test, all tasks),
    cached in ``<cache>/pretrain/tdc_keys-<sha16>.json`` by the files' sha256 (computing
    them is ~2 CPU-min)."""
    import json

    import pandas as pd

    from graphnorm.data.cache import cache_root
    from graphnorm.data.files import atomic_write
    from graphnorm.data.tdc import TDC_ADMET_TASKS, admet_group_dir

    group = admet_group_dir(tdc_dir, cache)
    files = [group / task / part for task in (tasks or TDC_ADMET_TASKS)
             for part in ("train_val.csv", "test.csv")]
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
    path = cache_root(cache) / "pretrain" / f"tdc_keys-{digest[:16]}.json"
    if path.is_file():
        try:
            return set(json.loads(path.read_text()))
        except ValueError:  # a corrupt cache is recomputed
            pass
    keys: set[str] = set()
    for f in files:
        for s in pd.read_csv(f)["Drug"].astype(str):
            k = loose_key(s)
            keys.add(k if k is not None else s)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda p: p.write_text(json.dumps(sorted(keys))))
    return keys


def corpus_keys(corpus: Corpus) -> list[Optional[str]]:
    return [loose_key(s) for s in corpus.smiles]


def without_molecules(corpus: Corpus, keys: list[Optional[str]], excluded: set[str]
                      ) -> tuple[Corpus, int]:
    """(the corpus less every molecule whose loose key is in ``excluded``, how many went)."""
    keep = [i for i, (k, s) in enumerate(zip(keys, corpus.smiles))
            if not is_benchmark(k, s, excluded)]
    return corpus.subset(keep), len(corpus) - len(keep)


def leaked(keys: Iterable[Optional[str]], excluded: set[str]) -> int:
    """How many of ``keys`` are benchmark molecules: 0 for a clean corpus."""
    return sum(1 for k in keys if k is not None and k in excluded)
