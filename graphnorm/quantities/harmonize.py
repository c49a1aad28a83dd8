"""A corpus read through the map: one task per quantity, in its unit, each label keeping the
source it came from (for a per-source offset), every other endpoint as it was.

A molecule measured by two sources of one quantity gets one label, the mean of the two
converted values, credited to the source listed first in the map; how many were merged is
reported per quantity, so a reader sees how much the sources overlap.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphnorm.tasks import REGRESSION

from .registry import QUANTITIES, SOURCES, QuantityError, check_registry
from .units import conversion

PREFIX = "quantity/"  # task name of a quantity in a harmonized corpus: quantity/<name>


@dataclass
class Harmonized:
    # the input's type (graphnorm.pretrain.corpus.Corpus, built without importing it: this
    # layer sits below pretrain): quantities first, then the unmapped endpoints
    corpus: object
    label_source: np.ndarray  # int32 [nnz]: each label's source, an index into `source_names`
    source_names: list[str]  # endpoint of each source index
    merged: dict[str, int] = field(default_factory=dict)  # quantity -> labels merged

    def sources_of_task(self, task: int) -> list[str]:
        """The endpoints whose labels task ``task`` holds."""
        ids = np.unique(self.label_source[self.corpus.task == task])
        return [self.source_names[i] for i in ids]


@dataclass
class InQuantityUnits:
    corpus: object  # the input's type, every mapped endpoint's values in its quantity's unit
    quantity_of: list  # per task: its quantity's name, or None when not mapped


def to_quantity_units(corpus, sources=SOURCES, quantities=QUANTITIES) -> InQuantityUnits:
    """``corpus`` with every mapped endpoint's values converted into its quantity's unit,
    tasks and labels otherwise as they were (one column per source: what a per-source offset
    needs); a mapped endpoint that is not a regression task, or a value its conversion
    cannot take (a clearance of 0 to log), is refused with the endpoint named."""
    check_registry(quantities, sources)
    mapped = {s.endpoint: s for s in sources if s.endpoint in corpus.task_names}
    value = corpus.value.astype(np.float64)
    for t, name in enumerate(corpus.task_names):
        s = mapped.get(name)
        if s is None:
            continue
        if corpus.task_kinds[t] != quantities[s.quantity].kind:
            raise QuantityError(f"{name} is a {corpus.task_kinds[t]} task; the map's "
                                f"{s.quantity} is a {quantities[s.quantity].kind} quantity")
        at = corpus.task == t
        with np.errstate(divide="ignore", invalid="ignore"):
            value[at] = conversion(s.convert, s.stated).apply(value[at])
        bad = int((~np.isfinite(value[at])).sum())
        if bad:
            raise QuantityError(f"{name}: {bad} values its conversion {s.convert!r} cannot take "
                                f"({s.stated} -> {quantities[s.quantity].unit})")
    out = type(corpus)(list(corpus.smiles), list(corpus.task_names), list(corpus.task_kinds),
                       corpus.indptr.copy(), corpus.task.copy(), value.astype(np.float32),
                       dict(corpus.sources))
    return InQuantityUnits(out, [mapped[n].quantity if n in mapped else None
                                 for n in corpus.task_names])


def harmonize(corpus, sources=SOURCES, quantities=QUANTITIES) -> Harmonized:
    """``corpus`` (`graphnorm.pretrain.corpus.Corpus`) with every mapped endpoint converted into
    its quantity's task (`to_quantity_units`, which refuses what it cannot convert). Binary
    quantities are left as their sources: a mean of two calls at two thresholds is no call."""
    sources = tuple(s for s in sources if quantities[s.quantity].kind == REGRESSION.stored)
    converted = to_quantity_units(corpus, sources, quantities)
    corpus, quantity_of = converted.corpus, converted.quantity_of
    mapped = {s.endpoint: s for s in sources if s.endpoint in corpus.task_names}
    used = [q for q in quantities if q in quantity_of]
    kept = [t for t, q in enumerate(quantity_of) if q is None]
    names = [PREFIX + q for q in used] + [corpus.task_names[t] for t in kept]
    kinds = [REGRESSION.stored] * len(used) + [corpus.task_kinds[t] for t in kept]
    # sources in map order first (the one credited on a merge), then the unmapped endpoints
    source_names = [s.endpoint for s in sources if s.endpoint in mapped] + \
        [corpus.task_names[t] for t in kept]
    source_index = {name: i for i, name in enumerate(source_names)}
    position = {name: k for k, name in enumerate(names)}
    new_task = np.array([position[PREFIX + q] if q else position[name]
                         for name, q in zip(corpus.task_names, quantity_of)], dtype=np.int64)
    row = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    value = corpus.value.astype(np.float64)
    task = new_task[corpus.task]
    src = np.array([source_index[n] for n in corpus.task_names], dtype=np.int64)[corpus.task]
    key = row * len(names) + task
    unique, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    mean = np.bincount(inverse, weights=value) / counts
    first = np.full(len(unique), np.iinfo(np.int64).max)
    np.minimum.at(first, inverse, src)
    rows_out, task_out = unique // len(names), unique % len(names)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows_out, minlength=len(corpus)))])
    merged = {q: int((counts[task_out == k] - 1).sum()) for k, q in enumerate(used)}
    out = type(corpus)(list(corpus.smiles), names, kinds, indptr.astype(np.int64),
                 task_out.astype(np.int32), mean.astype(np.float32), dict(corpus.sources))
    return Harmonized(out, first.astype(np.int32), source_names, merged)
