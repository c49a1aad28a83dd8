"""Leave-own-task-out ADMET boosters: the ``maplight+admet`` features made fair on the 8 large
TDC ADMET tasks whose labels the shipped boosters learned.

For a large task T, the other columns of the boosters' table (`graphnorm.data.tdc_aux`: the
other 7 large tasks and MolHIV) are fitted again, each on its rows minus every molecule of T
(train_val and test, as RDKit canonical SMILES). No booster then saw T's label or molecule,
so T's features are out of sample on every row, as the shipped ones are on the 14 small
tasks. Measured on the official validation splits (``experiments/results/tdc_admet/
loto_features/``): gbm with them better on 7 of 8 tasks and 30 of 40 task-seeds.

The file has the shipped file's format (`graphnorm.baselines.admet_boosters`), one column
fewer, and is cached: ``<cache>/admet_loto/<task>-<key>.json.xz``, the key a hash of the
TDC tables, MolHIV's file, the LightGBM version and the code that builds it (the chemistry,
the aux table, this module, the booster fit: `_code`). ~4 CPU-minutes per task on one thread.
"""
from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

LOTO_FORMAT = 1  # bump when what goes into a file changes: old cached files are not reused


def _code() -> str:
    """The code a file's boosters come from: a cache keyed by inputs alone once kept a file
    that the current code no longer builds (docs/results/tdc_admet.md, session 27)."""
    from graphnorm.chem.code import chem_code_sha
    from graphnorm.data import tdc_aux
    from graphnorm.provenance import source_sha

    from . import boosted

    return chem_code_sha() + source_sha(Path(__file__), Path(tdc_aux.__file__),
                                        Path(boosted.__file__))


def _key(task: str, group: Path, hiv_file) -> str:
    import lightgbm

    from graphnorm.data.tdc import TDC_ADMET_TASKS

    h = hashlib.sha256(f"{LOTO_FORMAT} {task} lightgbm {lightgbm.__version__} "
                       f"code {_code()}".encode())
    for t in TDC_ADMET_TASKS:
        for part in ("train_val.csv", "test.csv"):
            h.update((Path(group) / t / part).read_bytes())
    if hiv_file is not None:
        h.update(Path(hiv_file).read_bytes())
    return h.hexdigest()[:16]


def loto_boosters(task: str, group: Path, cache=None, threads: int = 1, progress: bool = False,
                  raw_dir=None) -> Path:
    """The boosters file of large task ``task`` (built once, then read from the cache)."""
    from graphnorm.chem.tabular import signature
    from graphnorm.data.build import stage
    from graphnorm.data.cache import cache_root
    from graphnorm.data.feature_cache import table_features
    from graphnorm.data.tdc import TDC_ADMET_TASKS, TDCError
    from graphnorm.data.tdc_aux import (AUX_TASKS, EVAL_TASKS, aux_table, booster_name,
                                        hiv_file, read_hiv, table_sha256, task_frame)

    from graphnorm.tasks import CLASSIFICATION, REGRESSION

    from .admet_boosters import save_admet_boosters
    from .boosted import fit_boosted

    if task not in AUX_TASKS:
        raise ValueError(f"{task}: not one of the tasks the ADMET boosters learned "
                         f"({', '.join(AUX_TASKS)}); its shipped features are already fair")
    hiv_path = hiv_file(raw_dir)
    missing = [f"{t}/{part}" for t in TDC_ADMET_TASKS for part in ("train_val.csv", "test.csv")
               if not (Path(group) / t / part).is_file()]
    if missing:  # the table keeps every task's molecules out, so it reads all 22
        raise TDCError(f"the leave-own-task-out boosters of {task} read all 22 TDC ADMET tasks; "
                       f"{Path(group) / missing[0]} is missing ({len(missing)} files in all)")
    path = cache_root(cache) / "admet_loto" / f"{task}-{_key(task, group, hiv_path)}.json.xz"
    if path.is_file():
        return path
    stage(progress, f"{task}: the shipped ADMET boosters learned this task; fitting the other "
          f"columns again without its molecules (once, cached in {path.parent})")
    started = time.process_time()
    frames = {t: task_frame(t, group, cache) for t in TDC_ADMET_TASKS}
    table, report = aux_table(frames, read_hiv(raw_dir) if hiv_path else None)
    if hiv_path is None:
        stage(progress, f"{task}: no MolHIV file in the raw data directory; the boosters "
              "leave its column out")
    sha = table_sha256(table)
    x = table_features("maplight", table["smiles"].tolist(), "tdc_aux.csv", sha, cache, progress)
    keep = ~table["smiles"].isin(set(frames[task]["canon"].dropna())).to_numpy()
    columns = []
    for column in table.columns.drop(["smiles", task]):
        y = table[[column]].to_numpy(dtype=float)
        rows = keep & ~np.isnan(y[:, 0])
        kind = CLASSIFICATION if set(np.unique(y[rows, 0])) <= {0.0, 1.0} else REGRESSION
        cpu = time.process_time()
        booster = fit_boosted(kind.name, x[rows], y[rows], 0, threads)[0]
        columns.append({"name": booster_name(column), "kind": kind.stored,
                        "rows": int(rows.sum()), "fit_cpu_s": round(time.process_time() - cpu, 1),
                        "booster": booster})
        stage(progress, f"{task}: booster {len(columns)}/{len(table.columns) - 2} "
              f"({column}, {rows.sum():,} molecules)")
    data = {"table_sha256": sha, "rows": int(keep.sum()), "left_out_task": task,
            "excluded": "every molecule of the evaluated TDC tasks, of every TDC test set, "
                        f"and of {task}",
            "evaluated_tasks": list(EVAL_TASKS) + [task], "aux_report": report,
            "build_cpu_s": round(time.process_time() - started, 1)}
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_admet_boosters(path, columns, signature("maplight"), data,
                               table.loc[keep, "smiles"].tolist())
