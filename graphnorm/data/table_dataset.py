"""A user's molecule table as featurized, cached, split PyG data (``train --data``).

    splits = load_table_dataset(TableSpec("mols.csv", target_columns=["logp"]))
    splits["train"][0]          # Data(x, edge_index, ..., y float [1, T], smiles)
    splits.info                 # task_type, metric, vocab, num_tasks, targets
    write_run_files(out, splits)  # splits.json, skipped_rows.csv, data_report.json

Featurization (OGB features, strict RDKit sanitization) runs once per file: the cache under
``<cache root>/tables/`` is keyed by the file's sha256, the SMILES column and the featurizer
(version, max_hops, max_dist), so other targets or splits of the same file reuse it. Rows
whose SMILES cannot be featurized, or that have no label in any target column, are skipped,
counted and listed in ``skipped_rows.csv``. Duplicate molecules (same canonical SMILES) are
kept, counted and reported.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import torch

from .cache import _atomic_write, _torch_save, cache_root, collate_split
from .table import MoleculeTable, TableError, read_table, read_targets
from .table_split import (SPLIT_NAMES, balanced_scaffold_split, check_split, column_split,
                          file_split, parse_split_sizes, random_split, split_kind)

TABLE_CACHE_FORMAT = 1
VOCAB = "ogb"  # any organic chemistry, not only ZINC's 28 atom types
CHUNK = 512
ROW_NUMBERING = ("rows are named as a user finds them: 'line N' = line number of the file "
                 "(header = line 1), 'record N' = SDF record, 'row N' = parquet data row, all from 1")


@dataclass
class TableSpec:
    path: str
    smiles_column: Optional[str] = None
    target_columns: list = field(default_factory=list)  # empty: every other column
    task: str = "regression"  # or "classification" (labels 0/1)
    split: str = "scaffold"  # scaffold | random | column:NAME | file:splits.json
    split_sizes: object = "0.8,0.1,0.1"
    split_seed: int = 0


class TableSplits(dict):
    """{"train", "val", "test"} -> GraphDataset, plus what was read and skipped."""

    def __init__(self, splits: dict, info: dict, checksum: str, split_labels: dict,
                 skipped: pd.DataFrame, report: dict, spec: TableSpec):
        super().__init__(splits)
        self.info, self.checksum, self.split_labels = info, checksum, split_labels
        self.skipped, self.report, self.spec = skipped, report, spec


def table_info(task: str, targets: list[str], name: str) -> dict:
    """The DATASET_INFO-style task dict of a table (plain types: it goes into checkpoints)."""
    binary = task == "classification"
    return {"task_type": "binary" if binary else "regression",
            "metric": "rocauc" if binary else "mae", "vocab": VOCAB, "num_tasks": len(targets),
            "targets": list(targets), "source": name}


def _work(task: tuple) -> list[tuple]:
    """Worker: [(arrays | None, canonical, scaffold, error | None)] for one chunk."""
    from rdkit import Chem, rdBase

    from graphnorm.graph import featurize

    from .scaffold import murcko_scaffold

    smiles, max_hops, max_dist = task
    datas = featurize.smiles_to_data_many(smiles, VOCAB, max_hops, max_dist, errors="none")
    out = []
    with rdBase.BlockLogs():
        for s, d in zip(smiles, datas):
            if d is None:
                try:
                    featurize.smiles_to_data(s, vocab=VOCAB, max_hops=max_hops, max_dist=max_dist)
                    err = "failed in a batch but not alone"
                except ValueError as e:
                    err = str(e) if s else "empty SMILES"
                out.append((None, "", "", err))
                continue
            arrays = {k: v.numpy() for k, v in d.items() if torch.is_tensor(v)}
            arrays["num_nodes"] = int(d.num_nodes)
            mol = Chem.MolFromSmiles(s)
            canonical = Chem.MolToSmiles(mol)
            out.append((arrays, canonical, murcko_scaffold(s, mol) or canonical, None))
    return out


def _featurize(smiles: list[str], max_hops: int, max_dist: int, progress: bool, workers: int):
    from tqdm.auto import tqdm

    from .build import _context, _init_worker, bar_enabled, stage

    tasks = [(smiles[i:i + CHUNK], max_hops, max_dist) for i in range(0, len(smiles), CHUNK)]
    workers = max(1, min(workers, len(tasks)))
    results, quarter, bar_on = [], 0, bar_enabled(progress)
    pool = _context().Pool(workers, initializer=_init_worker) if workers > 1 else None
    try:
        chunks = pool.imap(_work, tasks) if pool else map(_work, tasks)
        with tqdm(total=len(smiles), desc="featurizing", unit="mol", disable=not bar_on) as bar:
            for chunk in chunks:
                results += chunk
                bar.update(len(chunk))
                if progress and not bar_on and 4 * len(results) // len(smiles) > quarter:
                    quarter = 4 * len(results) // len(smiles)  # a line at 25/50/75/100 %
                    stage(True, f"featurized {len(results):,}/{len(smiles):,} molecules")
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return results


def _cache_key(table: MoleculeTable, max_hops: int, max_dist: int) -> dict:
    from graphnorm.graph.featurize import FEATURIZER_VERSION

    return {"format": TABLE_CACHE_FORMAT, "sha256": table.sha256,
            "smiles_column": table.smiles_column, "featurizer_version": str(FEATURIZER_VERSION),
            "vocab": VOCAB, "max_hops": int(max_hops), "max_dist": int(max_dist)}


def _load_cached(directory: Path, key: dict) -> Optional[dict]:
    from .raw import sha256_file

    try:
        manifest = json.loads((directory / "manifest.json").read_text())
        if {k: manifest.get(k) for k in key} != key:
            return None
        if sha256_file(directory / "data.pt") != manifest["data_sha256"]:
            return None
        return torch.load(directory / "data.pt", weights_only=True)
    except Exception:  # missing, stale or corrupt: featurize again
        return None


def featurized_table(table: MoleculeTable, root=None, max_hops: int = 5, max_dist: int = 20,
                     progress: bool = True, workers: int = 2) -> dict:
    """{"graphs": PyG storage of the featurized rows, "rows", "canonical", "scaffold",
    "failed": [(row, message)]}, from the cache when the file was featurized before."""
    from .build import stage
    from .raw import sha256_file

    key = _cache_key(table, max_hops, max_dist)
    directory = cache_root(root) / "tables" / f"{table.path.stem[:40]}-{table.sha256[:16]}-h{max_hops}-d{max_dist}"
    cached = _load_cached(directory, key)
    if cached is not None:
        return cached
    stage(progress, f"{table.path}: featurizing {len(table):,} rows (once; cached in {directory})")
    smiles = table.smiles
    results = _featurize(smiles, max_hops, max_dist, progress,
                         workers if len(smiles) > 4 * CHUNK else 1)
    from .build import to_data

    rows = [i for i, r in enumerate(results) if r[0] is not None]
    graphs = [to_data(results[i][0], smiles[i], []) for i in rows]
    for g in graphs:
        del g.y  # targets are attached per run: the cache serves any target columns
    payload = {"format": TABLE_CACHE_FORMAT,
               "graphs": collate_split(graphs) if graphs else None,
               "rows": rows, "canonical": [results[i][1] for i in rows],
               "scaffold": [results[i][2] for i in rows],
               "failed": [(i, r[3]) for i, r in enumerate(results) if r[0] is None]}
    directory.mkdir(parents=True, exist_ok=True)
    _atomic_write(directory / "data.pt", lambda p: _torch_save(payload, p))
    manifest = {**key, "file": str(table.path), "data_sha256": sha256_file(directory / "data.pt")}
    _atomic_write(directory / "manifest.json", lambda p: p.write_text(json.dumps(manifest, indent=2)))
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
    return file_split(arg, labels, table.sha256)


def load_table_dataset(spec: TableSpec, root=None, max_hops: int = 5, max_dist: int = 20,
                       progress: bool = True, workers: int = 2) -> TableSplits:
    """Read, check, featurize (cached) and split a table; raises TableError on bad input."""
    from .build import stage
    from .cache import GraphDataset
    from torch_geometric.data import Data

    sizes = parse_split_sizes(spec.split_sizes)
    kind, arg = split_kind(spec.split)
    table = read_table(spec.path, spec.smiles_column, strict_encoding=True)
    exclude = []
    if kind == "column":
        from .table import find_column

        exclude.append(find_column(table, arg, "--split column:NAME"))
    targets, names = read_targets(table, list(spec.target_columns or []), spec.task, exclude)
    feat = featurized_table(table, root, max_hops, max_dist, progress, workers)
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
    storage = Data.from_dict(feat["graphs"]["data"])
    storage.y = torch.from_numpy(targets[rows])
    slices = dict(feat["graphs"]["slices"], y=torch.arange(len(rows) + 1))
    base = GraphDataset(storage, slices, Path(spec.path).name, "all")
    splits = {}
    for name in SPLIT_NAMES:
        splits[name] = base[[labelled[p] for p in split[name]]]
        splits[name].split = name
    split_labels = {s: [table.labels[usable[p]] for p in split[s]] for s in SPLIT_NAMES}
    canonical = [feat["canonical"][k] for k in labelled]
    report = _report(table, names, targets, usable, canonical, split, skipped, spec)
    skipped_df = pd.DataFrame(skipped, columns=["row", "smiles", "reason"])
    stage(progress, _summary_line(table.path, report))
    return TableSplits(splits, table_info(spec.task, names, Path(spec.path).name), table.sha256,
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
        if spec.task == "classification":
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
    (out / "splits.json").write_text(json.dumps(saved, indent=1))
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
                     cfg.split_sizes, cfg.split_seed)
