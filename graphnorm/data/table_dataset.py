"""A user's molecule table as featurized, cached, split PyG data (``train --data``).

    splits = load_table_dataset(TableSpec("mols.csv", target_columns=["logp"]))
    splits["train"][0]          # Data(x, edge_index, ..., y float [1, T], smiles)
    splits.info                 # task_type, metric, vocab, num_tasks, targets
    write_run_files(out, splits)  # splits.json, skipped_rows.csv, data_report.json

Featurization (OGB features, strict RDKit sanitization) runs once per file: the cache under
``<cache root>/tables/`` is keyed by the file's sha256, the SMILES column and the
FeaturizerConfig, so other targets or splits of the same file reuse it. Rows
whose SMILES cannot be featurized, or that have no label in any target column, are skipped,
counted and listed in ``skipped_rows.csv``. Duplicate molecules (same canonical SMILES) are
kept, counted and reported.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import torch

from graphnorm.run_folder import SPLITS_FILE
from graphnorm.tasks import CLASSIFICATION, REGRESSION, resolve_task

from .cache import CACHE_FORMAT, cache_root, load_cache, pack_split, save_cache, split_dataset
from .table import MoleculeTable, TableError, read_table, read_targets
from .table_split import (SPLIT_NAMES, balanced_scaffold_split, check_split, column_split,
                          file_split, parse_split_sizes, random_split, split_kind, tdc_split)

VOCAB = "ogb"  # any organic chemistry, not only ZINC's 28 atom types
CHUNK = 512
ROW_NUMBERING = ("rows are named as a user finds them: 'line N' = line number of the file "
                 "(header = line 1), 'record N' = SDF record, 'row N' = parquet data row, all from 1")


@dataclass
class TableSpec:
    path: str
    smiles_column: Optional[str] = None
    target_columns: list = field(default_factory=list)  # empty: every other column
    task: str = "auto"  # regression | classification (labels 0/1) | auto: by the labels
    split: str = "scaffold"  # scaffold | random | column:NAME | file:splits.json | tdc:COLUMN
    split_sizes: object = "0.8,0.1,0.1"
    split_seed: int = 0
    metric: Optional[str] = None  # None: rmse (regression) or rocauc (classification)


class TableSplits(dict):
    """{"train", "val", "test"} -> GraphDataset, plus what was read and skipped."""

    def __init__(self, splits: dict, info: dict, checksum: str, split_labels: dict,
                 skipped: pd.DataFrame, report: dict, spec: TableSpec):
        super().__init__(splits)
        self.info, self.checksum, self.split_labels = info, checksum, split_labels
        self.skipped, self.report, self.spec = skipped, report, spec


def table_info(task: str, targets: list[str], name: str, metric: Optional[str] = None) -> dict:
    """The DATASET_INFO-style task dict of a table (plain types: it goes into checkpoints)."""
    kind = resolve_task(task)
    if metric is not None:
        kind.check_metric(metric)
    return {"task_type": kind.stored,
            "metric": metric or kind.default_metric, "vocab": VOCAB, "num_tasks": len(targets),
            "targets": list(targets), "source": name}


def auto_task(table: MoleculeTable, columns: list, exclude=()) -> tuple[str, str]:
    """``--task auto``: ("classification", why) when every label of every target is 0 or 1,
    else ("regression", why)."""
    targets, names = read_targets(table, list(columns or []), REGRESSION.name, list(exclude))
    have = targets[~np.isnan(targets)]
    if have.size and np.isin(have, (0.0, 1.0)).all():
        return CLASSIFICATION.name, (f"--task auto: every label of {', '.join(names)} is 0 or 1, so "
                                  "this trains a classifier (ROC-AUC); --task regression fits "
                                  "them as numbers")
    return REGRESSION.name, f"--task auto: {', '.join(names)} hold numbers, so this fits a regression"


def canonical_and_scaffold(smiles: str) -> tuple[str, str]:
    """Worker extra of a featurized row: (canonical SMILES, Murcko scaffold or canonical)."""
    from rdkit import Chem

    from .scaffold import murcko_scaffold

    mol = Chem.MolFromSmiles(smiles)
    canonical = Chem.MolToSmiles(mol)
    return canonical, murcko_scaffold(smiles, mol) or canonical


def table_featurizer(featurizer=None):
    """The FeaturizerConfig of own tables: ``featurizer`` (its vocab must be `VOCAB`),
    else the defaults."""
    from graphnorm.chem import FeaturizerConfig

    if featurizer is None:
        return FeaturizerConfig(vocab=VOCAB)
    if featurizer.vocab != VOCAB:
        raise ValueError(f"own tables are featurized with the {VOCAB!r} vocabulary, not "
                         f"{featurizer.vocab!r}")
    return featurizer


def featurized_table(table: MoleculeTable, root=None, featurizer=None, progress: bool = True,
                     workers: int = 2) -> dict:
    """{"graphs": packed featurized rows (`cache.pack_split`) or None, "rows", "canonical",
    "scaffold", "failed": [(row, message)]}, from the cache when the file was featurized
    before with the same featurizer."""
    from .build import featurize_with_progress, stage

    featurizer = table_featurizer(featurizer)
    key = {"format": CACHE_FORMAT, "sha256": table.sha256, "smiles_column": table.smiles_column,
           "featurizer": featurizer.to_dict()}
    directory = cache_root(root) / "tables" / f"{table.path.stem[:40]}-{table.sha256[:16]}-{featurizer.tag}"
    cached = load_cache(directory, key, ("graphs", "rows", "failed"))
    if cached is not None:
        return cached[0]
    stage(progress, f"{table.path}: featurizing {len(table):,} rows (once; cached in {directory})")
    smiles = table.smiles
    result = featurize_with_progress(smiles, featurizer, "strict", canonical_and_scaffold,
                                     workers if len(smiles) > 4 * CHUNK else 1, progress,
                                     chunk_size=CHUNK)
    rows = [i for i, g in enumerate(result.graphs) if g is not None]
    payload = {"graphs": pack_split([result.graphs[i] for i in rows], [smiles[i] for i in rows])
               if rows else None,
               "rows": rows, "canonical": [result.extras[i][0] for i in rows],
               "scaffold": [result.extras[i][1] for i in rows],
               "failed": [(i, msg if smiles[i] else "empty SMILES") for i, msg in result.failures()]}
    save_cache(directory, key, payload, {"file": str(table.path)})
    return payload


def _split_rows(spec: TableSpec, table: MoleculeTable, usable: list[int], scaffolds: list[str],
                sizes) -> dict[str, list[int]]:
    """Positions into ``usable`` per split."""
    kind, arg = split_kind(spec.split)
    labels = [table.labels[i] for i in usable]
    if kind == "scaffold":
        return balanced_scaffold_split(scaffolds, sizes, spec.split_seed)
    if kind == "random":
        return random_split(len(usable), sizes, spec.split_seed)
    if kind == "column":
        from .table import find_column

        col = find_column(table, arg, "--split column:NAME")
        return column_split(table.frame[col].iloc[usable].tolist(), labels, col, table.path)
    if kind == "tdc":
        return tdc_split(table, arg, usable, spec.split_seed)
    return file_split(arg, labels, table.sha256)


def load_table_dataset(spec: TableSpec, root=None, featurizer=None, progress: bool = True,
                       workers: int = 2) -> TableSplits:
    """Read, check, featurize (cached) and split a table; raises TableError on bad input."""
    from .build import stage

    sizes = parse_split_sizes(spec.split_sizes)
    kind, arg = split_kind(spec.split)
    table = read_table(spec.path, spec.smiles_column, strict_encoding=True)
    exclude = []
    if kind in ("column", "tdc"):
        from .table import find_column

        exclude.append(find_column(table, arg, f"--split {kind}:NAME"))
    if spec.task == "auto":
        task, note = auto_task(table, spec.target_columns, exclude)
        stage(progress, note)
        spec = dataclasses.replace(spec, task=task)
    targets, names = read_targets(table, list(spec.target_columns or []), spec.task, exclude)
    feat = featurized_table(table, root, featurizer, progress, workers)
    rows = list(feat["rows"])
    skipped = [(table.labels[i], table.smiles[i], msg) for i, msg in feat["failed"]]
    labelled = [k for k, i in enumerate(rows) if not np.isnan(targets[i]).all()]
    skipped += [(table.labels[rows[k]], table.smiles[rows[k]], "no label in any target column")
                for k in sorted(set(range(len(rows))) - set(labelled))]
    if not labelled:
        raise TableError(f"{table.path}: no row has both a valid SMILES and a label "
                         f"({len(feat['failed'])} of {len(table)} SMILES failed)")
    usable = [rows[k] for k in labelled]
    split = _split_rows(spec, table, usable, [feat["scaffold"][k] for k in labelled], sizes)
    check_split(split, len(usable), sizes, spec.split)
    # one storage for every featurized row; y attached from this run's target columns
    base = split_dataset(feat["graphs"], Path(spec.path).name, "all",
                         y=torch.from_numpy(targets[rows]))
    splits = {}
    for name in SPLIT_NAMES:
        splits[name] = base[[labelled[p] for p in split[name]]]
        splits[name].split = name
    split_labels = {s: [table.labels[usable[p]] for p in split[s]] for s in SPLIT_NAMES}
    canonical = [feat["canonical"][k] for k in labelled]
    report = _report(table, names, targets, usable, canonical, split, skipped, spec)
    skipped_df = pd.DataFrame(skipped, columns=["row", "smiles", "reason"])
    stage(progress, _summary_line(table.path, report))
    return TableSplits(splits, table_info(spec.task, names, Path(spec.path).name, spec.metric),
                       table.sha256,
                       split_labels, skipped_df, report, spec)


def _report(table, names, targets, usable, canonical, split, skipped, spec) -> dict:
    counts = pd.Series(canonical).value_counts()
    repeated = counts[counts > 1]
    where = {}
    for s in SPLIT_NAMES:
        for p in split[s]:
            where.setdefault(canonical[p], set()).add(s)
    across = sum(1 for m in repeated.index if len(where[m]) > 1)
    per_target = {}
    for j, name in enumerate(names):
        col = targets[usable, j]
        have = col[~np.isnan(col)]
        entry = {"labelled": int(have.size), "missing": int(col.size - have.size)}
        if resolve_task(spec.task).binary:
            entry["positives"] = int(have.sum())
        else:
            entry.update(mean=round(float(have.mean()), 4), std=round(float(have.std()), 4))
        per_target[name] = entry
    return {"file": str(table.path), "sha256": table.sha256, "rows": len(table),
            "used": len(usable), "skipped": len(skipped),
            "split_sizes": {s: len(split[s]) for s in SPLIT_NAMES},
            "duplicates": {"rows": int(repeated.sum()), "molecules": int(len(repeated)),
                           "in_more_than_one_split": int(across),
                           "examples": repeated.index[:5].tolist()},
            "targets": per_target, "task": spec.task, "row_numbering": ROW_NUMBERING}


def _summary_line(path, report: dict) -> str:
    dup = report["duplicates"]
    s = report["split_sizes"]
    text = (f"{path}: {report['used']:,} of {report['rows']:,} rows used "
            f"(train/val/test {s['train']:,}/{s['val']:,}/{s['test']:,})")
    if report["skipped"]:
        text += f"; {report['skipped']:,} skipped (listed in skipped_rows.csv)"
    if dup["rows"]:
        across = dup["in_more_than_one_split"]
        text += (f"; {dup['rows']:,} rows repeat {dup['molecules']:,} molecules (kept"
                 + (f", {across} of them in more than one split" if across else "") + ")")
    return text


def write_run_files(out: Path, splits: TableSplits) -> None:
    """splits.json (rerun with --split file:splits.json), skipped_rows.csv, data_report.json."""
    out = Path(out)
    spec = splits.spec
    saved = {"file": str(spec.path), "sha256": splits.checksum, "split": spec.split,
             "split_sizes": list(parse_split_sizes(spec.split_sizes)), "split_seed": spec.split_seed,
             "row_numbering": ROW_NUMBERING, **splits.split_labels}
    (out / SPLITS_FILE).write_text(json.dumps(saved, indent=1))
    splits.skipped.to_csv(out / "skipped_rows.csv", index=False)
    (out / "data_report.json").write_text(json.dumps(splits.report, indent=2))


def spec_from_config(cfg) -> Optional[TableSpec]:
    """The TableSpec of a TrainConfig with ``data`` set, else None."""
    if not getattr(cfg, "data", None):
        return None
    cols = cfg.target_columns or []
    if isinstance(cols, str):  # YAML "a, b" or a single name
        cols = [c.strip() for c in cols.split(",") if c.strip()]
    return TableSpec(str(cfg.data), cfg.smiles_column, list(cols), cfg.task, cfg.split,
                     cfg.split_sizes, cfg.split_seed, cfg.metric)
