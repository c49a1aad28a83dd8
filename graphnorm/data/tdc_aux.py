"""The table of measured labels behind the ADMET boosters (`graphnorm.baselines.admet_boosters`):
the large TDC ADMET tasks' labels (and MolHIV's) on molecules that no evaluated task holds.

One wide frame: ``smiles`` (RDKit canonical) and one column per auxiliary task, NaN where a
molecule has no label. What keeps it clean (molecules compared as canonical SMILES):

- no molecule of any *evaluated* task (its train_val and its test rows): the features of
  every row of an evaluated task come from boosters that never saw it;
- no molecule of any of the 22 tasks' *test* sets;
- an auxiliary task's own labels come from its ``train_val.csv`` only (MolHIV: all rows);
- duplicate molecules in one auxiliary task: the mean label (binary: rounded).

``experiments/make_admet_boosters.py table`` writes it as a CSV (the shipped boosters' data);
`graphnorm.baselines.admet_loto` rebuilds it in memory to refit the boosters without one
large task's molecules.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Optional

import pandas as pd

from graphnorm.tasks import task_scored_by

from .tdc import SET_COLUMN, TDC_ADMET_TASKS, task_table

# the tasks with 2,500+ train_val molecules: labels to learn from, not evaluated with them
AUX_TASKS = ("lipophilicity_astrazeneca", "solubility_aqsoldb", "ppbr_az", "cyp2c9_veith",
             "cyp2d6_veith", "cyp3a4_veith", "ld50_zhu", "ames")
EVAL_TASKS = tuple(t for t in TDC_ADMET_TASKS if t not in AUX_TASKS)
HIV = "hiv"


def canonical(smiles: str) -> Optional[str]:
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    return Chem.MolToSmiles(mol) if mol is not None else None


def booster_name(column: str) -> str:
    """The boosters' name of an aux column (its feature is ``admet_<name>``)."""
    for suffix in ("_astrazeneca", "_aqsoldb", "_az", "_zhu"):
        column = column.removesuffix(suffix)
    return column


def task_frame(task: str, group: Path, cache=None) -> pd.DataFrame:
    """One task's rows (train_val then test, ``tdc_set``) with a ``canon`` column."""
    from rdkit import rdBase

    frame = pd.read_csv(task_table(task, group, cache))
    with rdBase.BlockLogs():
        frame["canon"] = [canonical(s) for s in frame["Drug"].astype(str)]
    return frame


def _labels(frame: pd.DataFrame, column: str, binary: bool) -> pd.Series:
    """canonical SMILES -> one label (duplicates averaged; binary rounded)."""
    have = frame.dropna(subset=["canon", column])
    mean = have.groupby("canon")[column].mean()
    return (mean >= 0.5).astype(float) if binary else mean


def aux_table(frames: dict[str, pd.DataFrame], hiv: Optional[pd.DataFrame] = None
              ) -> tuple[pd.DataFrame, dict]:
    """The table and a report, from every task's `task_frame` (all 22) and MolHIV's rows
    (``smiles``, ``HIV_active``; None: no HIV column)."""
    from rdkit import rdBase

    missing = [t for t in TDC_ADMET_TASKS if t not in frames]
    if missing:
        raise ValueError(f"the aux table reads all 22 TDC tasks; missing: {', '.join(missing)}")
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
        series = _labels(pool, "Y", task_scored_by(TDC_ADMET_TASKS[task]).binary)
        columns[task] = series[~series.index.isin(banned)]
        report[task] = {"train_val_molecules": int(series.size), "kept": int(columns[task].size)}
    if hiv is not None:
        with rdBase.BlockLogs():
            hiv = hiv.assign(canon=[canonical(s) for s in hiv["smiles"].astype(str)])
        series = _labels(hiv, "HIV_active", True)
        columns[HIV] = series[~series.index.isin(banned)]
        report[HIV] = {"molecules": int(series.size), "kept": int(columns[HIV].size)}
    table = pd.DataFrame(columns)
    table.index.name = "smiles"
    table = table.sort_index().reset_index()
    report.update({"rows": len(table), "banned_molecules": len(banned),
                   "eval_tasks": list(EVAL_TASKS)})
    return table, report


def table_sha256(table: pd.DataFrame) -> str:
    """sha256 of the table as its CSV file holds it (``to_csv(index=False)``)."""
    return hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()


def hiv_file(raw_dir=None) -> Optional[Path]:
    """MolHIV's file in the raw data directory ($GRAPHNORM_RAW_DIR), or None without one."""
    from .raw import RawDataError, default_raw_dir, find_raw_files

    raw_dir = raw_dir or default_raw_dir()
    if raw_dir is None:
        return None
    try:
        return find_raw_files("ogbg-molhiv", raw_dir)["csv"]
    except RawDataError:
        return None


def read_hiv(raw_dir=None) -> Optional[pd.DataFrame]:
    """MolHIV's rows (``smiles``, ``HIV_active``), or None where there is no MolHIV file."""
    from .raw import read_molhiv

    path = hiv_file(raw_dir)
    if path is None:
        return None
    smiles, y = read_molhiv(path)
    return pd.DataFrame({"smiles": smiles, "HIV_active": y})
