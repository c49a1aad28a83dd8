"""The TDC ADMET benchmark group (Huang et al. 2021, https://tdcommons.ai/benchmark/admet_group/):
22 measured ADMET endpoints, each with a fixed scaffold test set.

Layout as PyTDC downloads it (``admet_group(path=...)``) and as the offline archive holds it::

    <dir>/admet_group/<task>/train_val.csv   Drug_ID,Drug,Y  (Drug: SMILES)
    <dir>/admet_group/<task>/test.csv

`admet_group_dir` finds that folder (or extracts ``admet_group.zip`` once into the cache);
`task_table` writes one table per task -- train_val rows in their file order, then (``final``
only) the test rows, and a ``tdc_set`` column saying which -- that ``train --data`` reads with
``--split tdc:tdc_set``: test rows are the fixed test set, the others are split into train and
valid by `tdc_scaffold_split`, PyTDC's ``get_train_valid_split(seed, name)`` reproduced
(benchmark seed k is PyTDC seed k + 1, the leaderboard's seeds 1..5). Without ``final`` the
table never holds a test row: a run on it selects on validation and cannot score test.
"""
from __future__ import annotations

import os
import zipfile
from pathlib import Path
from random import Random
from typing import Optional, Sequence

from graphnorm.tasks import task_scored_by

# task -> the leaderboard's metric (our metric names); mae/spearman/rocauc/auprc
TDC_ADMET_TASKS = {
    "caco2_wang": "mae", "hia_hou": "rocauc", "pgp_broccatelli": "rocauc",
    "bioavailability_ma": "rocauc", "lipophilicity_astrazeneca": "mae",
    "solubility_aqsoldb": "mae", "bbb_martins": "rocauc", "ppbr_az": "mae",
    "vdss_lombardo": "spearman", "cyp2d6_veith": "auprc", "cyp3a4_veith": "auprc",
    "cyp2c9_veith": "auprc", "cyp2d6_substrate_carbonmangels": "auprc",
    "cyp3a4_substrate_carbonmangels": "rocauc", "cyp2c9_substrate_carbonmangels": "auprc",
    "half_life_obach": "spearman", "clearance_microsome_az": "spearman",
    "clearance_hepatocyte_az": "spearman", "herg": "rocauc", "ames": "rocauc",
    "dili": "rocauc", "ld50_zhu": "mae",
}
SET_COLUMN = "tdc_set"
TDC_TRAIN_FRACTION = 0.875  # PyTDC's get_train_valid_split: [0.875, 0.125, 0.0]
ENV_TDC = "GRAPHNORM_TDC_DIR"


class TDCError(FileNotFoundError):
    pass


def task_kind(task: str) -> str:
    """The table recipe's --task of a TDC task: the kind its metric scores."""
    return task_scored_by(TDC_ADMET_TASKS[task]).name


def parse_tasks(names: Optional[str | Sequence[str]]) -> list[str]:
    """"caco2_wang,herg" (or None: all 22) -> task names, with a clear error on a typo."""
    if not names:
        return list(TDC_ADMET_TASKS)
    parts = names.split(",") if isinstance(names, str) else list(names)
    tasks = [p.strip() for p in parts if p.strip()]
    unknown = [t for t in tasks if t not in TDC_ADMET_TASKS]
    if unknown:
        raise ValueError(f"unknown TDC ADMET task {unknown[0]!r}; the 22 tasks: "
                         f"{', '.join(TDC_ADMET_TASKS)}")
    return tasks


def admet_group_dir(path: Optional[str | os.PathLike] = None, cache=None) -> Path:
    """The folder holding ``<task>/train_val.csv``: ``path`` (or $GRAPHNORM_TDC_DIR), else
    ``$GRAPHNORM_RAW_DIR/tdc_admet_group``; each may be the ``admet_group`` folder itself, a
    folder above it (PyTDC's download path) or hold ``admet_group.zip``, which is extracted
    once into the cache."""
    from .cache import cache_root

    tried = []
    bases = [path or os.environ.get(ENV_TDC)]
    if os.environ.get("GRAPHNORM_RAW_DIR"):
        bases.append(Path(os.environ["GRAPHNORM_RAW_DIR"]) / "tdc_admet_group")
    for base in (Path(b).expanduser() for b in bases if b):
        for folder in (base, base / "admet_group"):
            tried.append(str(folder))
            if (folder / "caco2_wang" / "train_val.csv").is_file():
                return folder
        archive = base / "admet_group.zip" if base.is_dir() else base
        if archive.suffix == ".zip" and archive.is_file():
            target = cache_root(cache) / "tdc"
            if not (target / "admet_group" / "caco2_wang" / "test.csv").is_file():
                with zipfile.ZipFile(archive) as z:
                    z.extractall(target)
            return target / "admet_group"
    raise TDCError("TDC ADMET group not found (looked in " + (", ".join(tried) or "nothing")
                   + "): pass --tdc-dir DIR (a PyTDC download or the folder holding "
                   "admet_group.zip), set GRAPHNORM_TDC_DIR or GRAPHNORM_RAW_DIR, or download "
                   "it with PyTDC: `from tdc.benchmark_group import admet_group; "
                   "admet_group(path=DIR)`")


def task_table(task: str, group_dir: Path, cache=None, final: bool = True) -> Path:
    """``<cache>/tdc/tables/<task>.csv``: train_val then test rows, ``tdc_set`` = train_val |
    test; written once (rewritten when the source files are newer). ``final=False``:
    ``<task>.train_val.csv``, the train_val rows alone -- test.csv is not opened, so that a
    selection run (`benchmark --suite tdc-admet` without ``--final``) cannot see a test molecule."""
    import pandas as pd

    from .cache import cache_root

    parse_tasks([task])
    src = Path(group_dir) / task
    parts = ("train_val", "test") if final else ("train_val",)
    name = f"{task}.csv" if final else f"{task}.train_val.csv"
    out = cache_root(cache) / "tdc" / "tables" / name
    sources = [src / f"{part}.csv" for part in parts]
    missing = [str(p) for p in sources if not p.is_file()]
    if missing:
        raise TDCError(f"TDC task {task}: {missing[0]} is missing")
    if out.is_file() and out.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
        return out
    frames = []
    for part, p in zip(parts, sources):
        frame = pd.read_csv(p)
        if not {"Drug", "Y"} <= set(frame.columns):
            raise TDCError(f"{p}: expected the columns Drug_ID,Drug,Y, found {list(frame.columns)}")
        frames.append(frame.assign(**{SET_COLUMN: part}))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    pd.concat(frames, ignore_index=True).to_csv(tmp, index=False)
    tmp.replace(out)
    return out


def tdc_scaffold(smiles: str) -> Optional[str]:
    """PyTDC's scaffold key: Murcko scaffold without chirality; None where RDKit fails
    (PyTDC then leaves the row out of both train and valid)."""
    from rdkit import Chem, RDLogger
    from rdkit.Chem.Scaffolds import MurckoScaffold

    RDLogger.DisableLog("rdApp.*")
    try:
        return MurckoScaffold.MurckoScaffoldSmiles(mol=Chem.MolFromSmiles(smiles),
                                                   includeChirality=False)
    except Exception:
        return None


def tdc_scaffold_split(smiles: Sequence[str], seed: int) -> dict[str, list[int]]:
    """PyTDC's ``create_scaffold_split(train_val, seed, [0.875, 0.125, 0.0], "Drug")``:
    scaffold groups in order of first appearance, the groups larger than half the val (or
    test) size shuffled by Python's ``random.Random(seed)``, then the others; each group
    goes to train while it fits, else to valid. With no test share every group counts as
    large, so the order is one seeded shuffle. Returns {"train", "val", "omitted"} row
    positions (omitted: RDKit could not make a scaffold)."""
    groups: dict[str, list[int]] = {}
    omitted = []
    for i, s in enumerate(smiles):
        key = tdc_scaffold(s)
        if key is None:
            omitted.append(i)
        else:
            groups.setdefault(key, []).append(i)
    n = len(smiles) - len(omitted)
    train_size = int(n * TDC_TRAIN_FRACTION)
    val_size = int(n * (1 - TDC_TRAIN_FRACTION))
    test_size = n - train_size - val_size
    sets = list(groups.values())
    big = [g for g in sets if len(g) > val_size / 2 or len(g) > test_size / 2]
    small = [g for g in sets if not (len(g) > val_size / 2 or len(g) > test_size / 2)]
    rng = Random(seed)
    rng.shuffle(big)
    rng.shuffle(small)
    out: dict[str, list[int]] = {"train": [], "val": [], "omitted": omitted}
    for g in big + small:
        out["train" if len(out["train"]) + len(g) <= train_size else "val"] += g
    return {k: sorted(v) for k, v in out.items()}
