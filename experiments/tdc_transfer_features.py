"""Measured labels as features: boosters fitted on the auxiliary table's tasks predict them
for every molecule of the evaluated TDC tasks.

The cheapest form of "learn from other measured labels" (issue 35): one LightGBM booster per
column of ``experiments/make_aux_table.py``'s table (the ``gbm`` kind's settings, MapLight
features), fitted on all its labelled rows; its predictions (probabilities for 0/1 columns)
for the molecules of the evaluated tasks are written as one CSV keyed by the tasks' own
``Drug`` strings, which ``experiments/tdc_embedding_features.py --extra NAME=CSV`` appends to
the boosters' input. No evaluated molecule is in the auxiliary table, so every feature is an
out-of-sample prediction.

    python experiments/tdc_transfer_features.py --aux data/derived/tdc_aux.csv \\
        --out data/derived/tdc_aux_gbm_features.csv
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from graphnorm.baselines.boosted import fit_boosted, predict_boosted
from graphnorm.data.feature_cache import table_features
from graphnorm.data.tdc import admet_group_dir, task_table

FEATURES = "maplight"


def eval_smiles(tasks: list[str]) -> list[str]:
    group = admet_group_dir()
    seen: dict[str, None] = {}
    for task in tasks:
        for s in pd.read_csv(task_table(task, group))["Drug"].astype(str):
            seen.setdefault(s)
    return list(seen)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--aux", required=True, help="make_aux_table.py's CSV")
    p.add_argument("--out", required=True)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    aux_path = Path(args.aux)
    aux = pd.read_csv(aux_path)
    report = json.loads(aux_path.with_suffix(".json").read_text())
    smiles = eval_smiles(report["eval_tasks"])
    cpu = time.process_time()
    x_aux = table_features(FEATURES, aux["smiles"].tolist(), aux_path.name,
                           hashlib.sha256(aux_path.read_bytes()).hexdigest(), progress=True)
    x_eval = table_features(FEATURES, smiles, "tdc_eval_molecules",
                            hashlib.sha256("\n".join(smiles).encode()).hexdigest(), progress=True)
    features_cpu = time.process_time() - cpu
    out = pd.DataFrame({"Drug": smiles})
    fits = {}
    for column in aux.columns.drop("smiles"):
        y = aux[[column]].to_numpy(dtype=float)
        have = ~np.isnan(y[:, 0])
        binary = set(np.unique(y[have, 0])) <= {0.0, 1.0}
        kind = "classification" if binary else "regression"
        cpu = time.process_time()
        models = fit_boosted(kind, x_aux[have], y[have], 0, args.threads)
        out[f"aux_{column}"] = predict_boosted(kind, models, x_eval)[:, 0]
        fits[column] = {"kind": kind, "rows": int(have.sum()),
                        "fit_cpu_s": round(time.process_time() - cpu, 1)}
        print(column, fits[column], flush=True)
    out.to_csv(args.out, index=False)
    Path(args.out).with_suffix(".json").write_text(json.dumps(
        {"aux_sha256": report["sha256"], "features_cpu_s": round(features_cpu, 1),
         "molecules": len(smiles), "fits": fits}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
