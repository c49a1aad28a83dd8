"""The multi-task pre-training corpus: many measured tables as one sparse label matrix.

``$GRAPHNORM_RAW_DIR/admet_corpus/<corpus>/`` holds ``data.csv.gz`` (a ``smiles`` column and
one numeric column per task, blank = not measured) and ``tasks.csv`` (per task its kind,
``binary`` or ``regression``); see that folder's README for sources, licences and the
filtering that removed every benchmark test molecule. `load_corpus` merges the corpora by
SMILES into one `Corpus`: molecule ``i`` has labels ``value[indptr[i]:indptr[i+1]]`` of tasks
``task[indptr[i]:indptr[i+1]]`` (CSR, so 324k molecules x 802 tasks stay ~40 MB instead of a
1 GB dense matrix whose zeros would also be indistinguishable from "not measured").

Task names are ``<corpus>/<column>``: two corpora may measure "the same" endpoint under one
column name, and pre-training keeps them apart (different assays, units, thresholds).
"""
from __future__ import annotations

import csv
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from graphnorm.tasks import CLASSIFICATION, REGRESSION

CORPUS_DIR = "admet_corpus"
KINDS = (CLASSIFICATION.stored, REGRESSION.stored)  # as tasks.csv spells them


class CorpusError(ValueError):
    pass


@dataclass
class Corpus:
    smiles: list[str]  # one per molecule, as the corpus files spell it
    task_names: list[str]  # "<corpus>/<column>"
    task_kinds: list[str]  # "binary" | "regression", per task
    indptr: np.ndarray  # int64 [N + 1]
    task: np.ndarray  # int32 [nnz]: task of each label
    value: np.ndarray  # float32 [nnz]
    sources: dict = field(default_factory=dict)  # corpus -> sha256 of its data.csv.gz

    @property
    def num_tasks(self) -> int:
        return len(self.task_names)

    def __len__(self) -> int:
        return len(self.smiles)

    def labels_per_task(self) -> np.ndarray:
        return np.bincount(self.task, minlength=self.num_tasks)

    def corpus_of(self, t: int) -> str:
        return self.task_names[t].split("/", 1)[0]

    def dense(self, rows: Sequence[int]) -> np.ndarray:
        """float32 [len(rows), T] with NaN where a molecule has no label of a task."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.full((len(rows), self.num_tasks), np.nan, dtype=np.float32)
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        counts = ends - starts
        if counts.sum():
            which = np.repeat(np.arange(len(rows)), counts)
            flat = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
            out[which, self.task[flat]] = self.value[flat]
        return out

    def subset(self, rows: Sequence[int]) -> "Corpus":
        """The molecules ``rows`` (in that order) with all their labels."""
        rows = np.asarray(rows, dtype=np.int64)
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        flat = (np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
                if len(rows) else np.zeros(0, dtype=np.int64))
        indptr = np.concatenate([[0], np.cumsum(ends - starts)]).astype(np.int64)
        return Corpus([self.smiles[i] for i in rows], self.task_names, self.task_kinds, indptr,
                      self.task[flat], self.value[flat], dict(self.sources))

    def without_tasks(self, names: Iterable[str]) -> "Corpus":
        """Every molecule, less every label of the tasks ``names`` (the tasks stay, with no
        label): what a run reads that must never learn from those sources (the
        leave-source-out yardstick); CorpusError naming a task the corpus does not have."""
        index = {n: t for t, n in enumerate(self.task_names)}
        unknown = [n for n in names if n not in index]
        if unknown:
            raise CorpusError(f"no task {unknown[0]!r} in the corpus to leave out (tasks are "
                              f"<corpus>/<column>, e.g. {self.task_names[0]!r})")
        drop = np.isin(self.task, [index[n] for n in names])
        molecule = np.repeat(np.arange(len(self)), np.diff(self.indptr))
        kept = np.bincount(molecule[~drop], minlength=len(self))
        indptr = np.concatenate([[0], np.cumsum(kept)]).astype(np.int64)
        return Corpus(self.smiles, self.task_names, self.task_kinds, indptr, self.task[~drop],
                      self.value[~drop], dict(self.sources))

    def checksum(self) -> str:
        """sha256 over the source files' checksums, in corpus order: the data's identity."""
        text = "\n".join(f"{k} {v}" for k, v in sorted(self.sources.items()))
        return hashlib.sha256(text.encode()).hexdigest()


def corpus_root(raw_dir: Optional[os.PathLike | str] = None) -> Path:
    """``<raw_dir>/admet_corpus`` (default: ``$GRAPHNORM_RAW_DIR``); a clear error if absent."""
    base = raw_dir if raw_dir is not None else os.environ.get("GRAPHNORM_RAW_DIR")
    if not base:
        raise CorpusError("the pre-training corpus is read from $GRAPHNORM_RAW_DIR/"
                          f"{CORPUS_DIR} (or --raw-dir); neither is set")
    root = Path(base)
    root = root if (root / "corpora.csv").is_file() else root / CORPUS_DIR
    if not (root / "corpora.csv").is_file():
        raise CorpusError(f"{root}: no corpora.csv here; expected the {CORPUS_DIR} folder "
                          "(see ../shared/datasets/admet_corpus/README.md)")
    return root


def corpus_names(root: Path) -> list[str]:
    with open(root / "corpora.csv", newline="") as f:
        return [row["corpus"] for row in csv.DictReader(f)]


def _read_kinds(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise CorpusError(f"{path}: missing (each corpus folder needs its tasks.csv)")
    with open(path, newline="") as f:
        kinds = {row["task"]: row["kind"] for row in csv.DictReader(f)}
    bad = {t: k for t, k in kinds.items() if k not in KINDS}
    if bad:
        raise CorpusError(f"{path}: unknown task kinds {bad}; expected one of {KINDS}")
    return kinds


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_table(path: Path, kinds: dict[str, str], corpus: str):
    """(smiles, columns, matrix float32 [rows, columns] with NaN for blanks)."""
    import pandas as pd

    try:
        frame = pd.read_csv(path, compression="infer", low_memory=False)
    except Exception as err:  # pandas raises many types for a malformed file
        raise CorpusError(f"{path}: cannot read ({err})") from err
    if "smiles" not in frame.columns:
        raise CorpusError(f"{path}: no 'smiles' column (columns: {list(frame.columns)[:5]} ...)")
    columns = [c for c in frame.columns if c != "smiles"]
    missing = [c for c in columns if c not in kinds]
    if missing:
        raise CorpusError(f"{path}: columns {missing[:5]} are not in {corpus}/tasks.csv")
    try:
        matrix = frame[columns].apply(pd.to_numeric, errors="raise").to_numpy(np.float32)
    except (ValueError, TypeError) as err:
        raise CorpusError(f"{path}: a label is not a number ({err})") from err
    binary = np.array([kinds[c] == CLASSIFICATION.stored for c in columns])
    if binary.any():
        b = matrix[:, binary]
        if not np.all(np.isnan(b) | (b == 0) | (b == 1)):
            raise CorpusError(f"{path}: a binary task holds a value other than 0/1")
    return frame["smiles"].astype(str).tolist(), columns, matrix


TDC_CORPUS = "tdc"  # the corpus name the TDC ADMET tables take (tasks tdc/<task>)


def tdc_table(group_dir: os.PathLike | str):
    """The 22 TDC ADMET tables, train_val and test rows alike, as one corpus (smiles, columns,
    matrix, kinds, sha256): a molecule of several tables one row, a molecule listed twice in
    one table its mean. Only a product build reads it (`PretrainSpec.tdc_tables`): it holds
    every TDC test molecule. A molecule listed with both labels of a binary table is left
    out of that table, with a warning that counts them."""
    import pandas as pd

    from graphnorm.data.tdc import TDC_ADMET_TASKS
    from graphnorm.tasks import task_scored_by

    group = Path(group_dir)
    frames, digest = [], hashlib.sha256()
    for task in TDC_ADMET_TASKS:
        for part in ("train_val", "test"):
            path = group / task / f"{part}.csv"
            if not path.is_file():
                raise CorpusError(f"TDC table {path} is missing (a product build reads every "
                                  "TDC ADMET table, train_val and test)")
            frame = pd.read_csv(path)
            if not {"Drug", "Y"} <= set(frame.columns):
                raise CorpusError(f"{path}: expected the columns Drug and Y, found "
                                  f"{list(frame.columns)}")
            digest.update(f"{task}/{part} {_sha256(path)}\n".encode())
            frames.append(pd.DataFrame({"smiles": frame["Drug"].astype(str), "task": task,
                                        "y": pd.to_numeric(frame["Y"], errors="coerce")}))
    long = pd.concat(frames, ignore_index=True).dropna(subset=["y"])
    wide = long.pivot_table(index="smiles", columns="task", values="y", aggfunc="mean")
    columns = [t for t in TDC_ADMET_TASKS if t in wide.columns]
    kinds = {t: task_scored_by(TDC_ADMET_TASKS[t]).stored for t in columns}
    matrix = np.array(wide[columns].to_numpy(np.float32))  # writable
    conflicts = {}
    for j, t in enumerate(columns):
        col = matrix[:, j]  # a view: a conflicting label is left out in place
        torn = ~np.isnan(col) & (col != 0) & (col != 1)
        if kinds[t] == CLASSIFICATION.stored and torn.any():
            col[torn] = np.nan
            conflicts[t] = int(torn.sum())
    if conflicts:
        import warnings

        warnings.warn(f"TDC tables: molecules listed with both labels of a binary task are left "
                      f"out of it: {conflicts}", stacklevel=2)
    return wide.index.tolist(), columns, matrix, kinds, digest.hexdigest()


def load_corpus(raw_dir: Optional[os.PathLike | str] = None,
                corpora: Optional[Iterable[str]] = None,
                tdc_dir: Optional[os.PathLike | str] = None) -> Corpus:
    """All (or the named) corpora merged by SMILES into one `Corpus`. A molecule appearing
    in several corpora gets one row with the labels of each. ``tdc_dir`` (a product build
    only): the TDC ADMET tables join as the corpus `TDC_CORPUS`."""
    root = corpus_root(raw_dir)
    names = corpus_names(root)
    if corpora is not None:
        wanted = list(corpora)
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            raise CorpusError(f"unknown corpora {unknown}; {root} holds {', '.join(names)}")
        names = [n for n in names if n in wanted]

    def tables():
        for name in names:
            data = root / name / "data.csv.gz"
            kinds = _read_kinds(root / name / "tasks.csv")
            yield (name, *_read_table(data, kinds, name), kinds, _sha256(data))
        if tdc_dir is not None:
            table_smiles, columns, matrix, kinds, sha = tdc_table(tdc_dir)
            yield TDC_CORPUS, table_smiles, columns, matrix, kinds, sha

    row_of: dict[str, int] = {}
    smiles: list[str] = []
    task_names, task_kinds, sources = [], [], {}
    rows_parts, task_parts, value_parts = [], [], []
    for name, table_smiles, columns, matrix, kinds, sha in tables():
        sources[name] = sha
        rows = np.empty(len(table_smiles), dtype=np.int64)
        for i, s in enumerate(table_smiles):
            r = row_of.get(s)
            if r is None:
                r = row_of[s] = len(smiles)
                smiles.append(s)
            rows[i] = r
        base = len(task_names)
        task_names += [f"{name}/{c}" for c in columns]
        task_kinds += [kinds[c] for c in columns]
        i, j = np.nonzero(~np.isnan(matrix))
        rows_parts.append(rows[i])
        task_parts.append((base + j).astype(np.int32))
        value_parts.append(matrix[i, j])
    if not smiles:
        raise CorpusError(f"{root}: no molecules in {names or 'any corpus'}")
    row = np.concatenate(rows_parts)
    order = np.lexsort((np.concatenate(task_parts), row))  # by molecule, then task
    counts = np.bincount(row, minlength=len(smiles))
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Corpus(smiles, task_names, task_kinds, indptr, np.concatenate(task_parts)[order],
                  np.concatenate(value_parts)[order], sources)


def loose_key(smiles: str) -> Optional[str]:
    """The corpus README's matching key: RDKit's largest fragment, stereochemistry removed,
    canonical SMILES (salt forms and stereo-less copies are the same molecule). None when
    RDKit cannot parse it."""
    from rdkit import Chem, rdBase
    from rdkit.Chem.MolStandardize import rdMolStandardize

    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            return None
        mol = rdMolStandardize.LargestFragmentChooser().choose(mol)
        Chem.RemoveStereochemistry(mol)
        return Chem.MolToSmiles(mol)

