"""Leave-own-task-out ADMET features for the 8 large TDC tasks: what the shipped boosters
give the 14 small tasks, made fair for the tasks whose labels they learned.

The shipped boosters (`experiments/make_admet_boosters.py`) learned the 8 large tasks'
train_val labels, so `benchmark --suite tdc-admet` refuses their features there. For one
large task T this fits the other 8 columns of ``make_aux_table.py``'s table again, on the
table's rows minus every molecule of T (train_val and test, as RDKit canonical SMILES), and
writes their predictions for T's molecules: no booster saw T's label or molecule, so every
row's features are out of sample, as the small tasks' are. One CSV per task, keyed by the
task's own ``Drug`` strings (``tdc_embedding_features.py --extra NAME=DIR/{task}.csv``).

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/make_loto_features.py \\
        --aux data/derived/tdc_aux.csv --out data/derived/admet_loto
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from make_aux_table import AUX_TASKS, task_frame  # experiments/
from tdc_embedding_features import maplight_or_nan

from graphnorm.baselines.boosted import fit_boosted, predict_boosted
from graphnorm.data.feature_cache import table_features
from graphnorm.data.tdc import admet_group_dir, parse_tasks, task_table

FEATURES = "maplight"


def loto_frame(task: str, aux: pd.DataFrame, x_aux: np.ndarray, group: Path,
               threads: int) -> tuple[pd.DataFrame, dict]:
    """The other columns' predictions for ``task``'s molecules, from boosters fitted without
    any of them, and what each booster was fitted on."""
    frame = task_frame(task, group)
    keep = ~aux["smiles"].isin(set(frame["canon"].dropna())).to_numpy()
    path = task_table(task, group)
    x_task = maplight_or_nan(frame["Drug"].astype(str).tolist(), path.name,
                             hashlib.sha256(path.read_bytes()).hexdigest())
    out, report = pd.DataFrame({"Drug": frame["Drug"].astype(str)}), {}
    for column in aux.columns.drop(["smiles", task]):
        y = aux[[column]].to_numpy(dtype=float)
        rows = keep & ~np.isnan(y[:, 0])
        kind = "classification" if set(np.unique(y[rows, 0])) <= {0.0, 1.0} else "regression"
        cpu = time.process_time()
        models = fit_boosted(kind, x_aux[rows], y[rows], 0, threads)
        out[column] = predict_boosted(kind, models, x_task, None)[:, 0]
        report[column] = {"rows": int(rows.sum()), "dropped_as_task_molecules":
                          int((~keep & ~np.isnan(y[:, 0])).sum()),
                          "fit_cpu_s": round(time.process_time() - cpu, 1)}
        print(task, column, report[column], flush=True)
    return out.drop_duplicates("Drug"), report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--aux", required=True, help="make_aux_table.py's CSV")
    p.add_argument("--out", required=True, help="folder: one <task>.csv per task")
    p.add_argument("--tasks", default=",".join(AUX_TASKS), help="comma list of the large tasks")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    aux_path, out = Path(args.aux), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    aux = pd.read_csv(aux_path)
    aux_sha = hashlib.sha256(aux_path.read_bytes()).hexdigest()
    x_aux = table_features(FEATURES, aux["smiles"].tolist(), aux_path.name, aux_sha, progress=True)
    group = admet_group_dir()
    report_file = out / "report.json"
    report = json.loads(report_file.read_text()) if report_file.is_file() else {}
    for task in parse_tasks(args.tasks):
        if task not in AUX_TASKS:
            raise SystemExit(f"{task}: not one of the table's tasks ({', '.join(AUX_TASKS)})")
        if (out / f"{task}.csv").is_file():
            continue  # resumable: one file per task
        frame, report[task] = loto_frame(task, aux, x_aux, group, args.threads)
        frame.to_csv(out / f"{task}.csv", index=False)
        report_file.write_text(json.dumps(dict(report, aux_sha256=aux_sha), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
