"""An auxiliary table of measured labels for the small TDC ADMET tasks: the large tasks'
labels (and MolHIV's) on molecules that no evaluated task holds.

Issue 35 asks for "a backbone that learned something the descriptors do not hold", as the
leaderboard's MapLight + GNN did with a GIN pre-trained on measured assays. This writes the
data for that lever from what we have offline: one wide CSV (``smiles`` + one column per
auxiliary task, empty where a molecule has no label), read by ``graphnorm train --data``
(a multitask backbone) and by ``experiments/make_admet_boosters.py`` (boosters whose
predictions become features).

What keeps it clean (molecules compared as RDKit canonical SMILES):

- no molecule of any *evaluated* task (its train_val and its test rows) is in the table, so
  the features of every row of an evaluated task come from a model that never saw it;
- no molecule of any of the 22 tasks' *test* sets is in it either;
- an auxiliary task's own labels come from its ``train_val.csv`` only (MolHIV: all rows);
- duplicate molecules in one auxiliary task: the mean label (binary: rounded).

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/make_aux_table.py \\
        --out data/derived/tdc_aux.csv
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
from make_pretrain_table import canonical  # experiments/
from rdkit import rdBase

from graphnorm.data.raw import default_raw_dir, find_raw_files, read_molhiv
from graphnorm.data.tdc import SET_COLUMN, TDC_ADMET_TASKS, admet_group_dir, task_kind, task_table

# the tasks with 2,500+ train_val molecules: labels to learn from, not evaluated with them
AUX_TASKS = ("lipophilicity_astrazeneca", "solubility_aqsoldb", "ppbr_az", "cyp2c9_veith",
             "cyp2d6_veith", "cyp3a4_veith", "ld50_zhu", "ames")
EVAL_TASKS = tuple(t for t in TDC_ADMET_TASKS if t not in AUX_TASKS)


def task_frame(task: str, group: Path) -> pd.DataFrame:
    frame = pd.read_csv(task_table(task, group))
    with rdBase.BlockLogs():
        frame["canon"] = [canonical(s) for s in frame["Drug"].astype(str)]
    return frame


def labels(frame: pd.DataFrame, column: str, binary: bool) -> pd.Series:
    """canonical SMILES -> one label (duplicates averaged; binary rounded)."""
    have = frame.dropna(subset=["canon", column])
    mean = have.groupby("canon")[column].mean()
    return (mean >= 0.5).astype(float) if binary else mean


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--no-hiv", action="store_true", help="leave MolHIV's labels out")
    args = p.parse_args(argv)
    group = admet_group_dir()
    frames = {t: task_frame(t, group) for t in TDC_ADMET_TASKS}
    banned = set()
    for task, frame in frames.items():
        is_test = frame[SET_COLUMN].astype(str).str.lower().eq("test")
        banned |= set(frame.loc[is_test, "canon"].dropna())
        if task in EVAL_TASKS:
            banned |= set(frame["canon"].dropna())
    columns, report = {}, {}
    for task in AUX_TASKS:
        frame = frames[task]
        pool = frame[~frame[SET_COLUMN].astype(str).str.lower().eq("test")]
        series = labels(pool, "Y", task_kind(task) == "classification")
        kept = series[~series.index.isin(banned)]
        columns[task] = kept
        report[task] = {"train_val_molecules": int(series.size), "kept": int(kept.size)}
    if not args.no_hiv:
        path = find_raw_files("ogbg-molhiv", default_raw_dir())["csv"]
        smiles, y = read_molhiv(path)
        with rdBase.BlockLogs():
            hiv = pd.DataFrame({"canon": [canonical(s) for s in smiles], "HIV_active": y})
        series = labels(hiv, "HIV_active", True)
        columns["hiv"] = series[~series.index.isin(banned)]
        report["hiv"] = {"molecules": int(series.size), "kept": int(columns["hiv"].size)}
    table = pd.DataFrame(columns)
    table.index.name = "smiles"
    table = table.sort_index().reset_index()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    report.update({"rows": len(table), "banned_molecules": len(banned),
                   "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
                   "eval_tasks": list(EVAL_TASKS)})
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
