"""The shipped ADMET boosters (`graphnorm.baselines.admet_boosters`): one LightGBM booster per
column of a table of measured labels, on MapLight features.

``table`` writes that table: the large TDC tasks' labels (and MolHIV's) on molecules that no
evaluated task holds (`graphnorm.data.tdc_aux` says what keeps it clean; also read by
``graphnorm train --data`` as a multitask table). ``boosters`` fits them.

Each booster (the ``gbm`` kind's settings, seed 0) is fitted on all labelled rows of its
column; 0/1 columns are binary (they predict a probability). ``--features-csv`` also writes
the boosters' predictions for every molecule of the evaluated TDC tasks, keyed by the tasks'
own ``Drug`` strings: the features the 14 small tasks were judged with (the script that
appended them to gbm's input, ``tdc_embedding_features.py``, is at commit ff74c75). No
evaluated molecule is in the table, so those are out-of-sample.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/make_admet_boosters.py table \\
        --out data/derived/tdc_aux.csv
    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/make_admet_boosters.py boosters \\
        --aux data/derived/tdc_aux.csv --out graphnorm.baselines.admet_boosters.json.xz \\
        --features-csv data/derived/tdc_aux_gbm_features.csv
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from graphnorm.baselines.boosted import fit_boosted
from graphnorm.chem.tabular import signature
from graphnorm.data.feature_cache import table_features
from graphnorm.data.tdc import TDC_ADMET_TASKS, admet_group_dir, task_table
from graphnorm.data.tdc_aux import aux_table, booster_name, read_hiv, task_frame
from graphnorm.baselines.admet_boosters import admet_columns, admet_features, save_admet_boosters

FEATURES = "maplight"


def eval_smiles(tasks: list[str]) -> list[str]:
    group = admet_group_dir()
    seen: dict[str, None] = {}
    for task in tasks:
        for s in pd.read_csv(task_table(task, group))["Drug"].astype(str):
            seen.setdefault(s)
    return list(seen)


def write_table(out: Path, hiv: bool) -> None:
    """The table of measured labels (CSV) and its report (``.json``: rows, sha256, ...)."""
    group = admet_group_dir()
    molhiv = read_hiv() if hiv else None
    if molhiv is None and hiv:
        raise SystemExit("no MolHIV file in $GRAPHNORM_RAW_DIR (molhiv/HIV.csv.gz); "
                         "give --no-hiv to build the table without it")
    table, report = aux_table({t: task_frame(t, group) for t in TDC_ADMET_TASKS}, molhiv)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    report["sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="step", required=True)
    t = sub.add_parser("table", help="the table of measured labels")
    t.add_argument("--out", required=True)
    t.add_argument("--no-hiv", action="store_true", help="leave MolHIV's labels out")
    b = sub.add_parser("boosters", help="one booster per column of the table")
    b.add_argument("--aux", required=True, help="the `table` step's CSV")
    b.add_argument("--out", required=True, help="the boosters' file (.json.xz)")
    b.add_argument("--features-csv", help="also: predictions for the evaluated tasks' molecules")
    b.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.step == "table":
        write_table(Path(args.out), not args.no_hiv)
        return 0
    aux_path = Path(args.aux)
    aux = pd.read_csv(aux_path)
    report = json.loads(aux_path.with_suffix(".json").read_text())
    cpu = time.process_time()
    x = table_features(FEATURES, aux["smiles"].tolist(), aux_path.name,
                       hashlib.sha256(aux_path.read_bytes()).hexdigest(), progress=True)
    features_cpu = time.process_time() - cpu
    columns = []
    for name in aux.columns.drop("smiles"):
        y = aux[[name]].to_numpy(dtype=float)
        have = ~np.isnan(y[:, 0])
        binary = set(np.unique(y[have, 0])) <= {0.0, 1.0}
        cpu = time.process_time()
        booster = fit_boosted("classification" if binary else "regression", x[have], y[have], 0,
                              args.threads)[0]
        columns.append({"name": booster_name(name),
                        "kind": "binary" if binary else "regression", "rows": int(have.sum()),
                        "fit_cpu_s": round(time.process_time() - cpu, 1), "booster": booster})
        print(name, {k: v for k, v in columns[-1].items() if k != "booster"}, flush=True)
    data = {"table_sha256": report["sha256"], "rows": report["rows"],
            "excluded": "every molecule of the evaluated TDC tasks and of every TDC test set",
            "evaluated_tasks": report["eval_tasks"], "features_cpu_s": round(features_cpu, 1)}
    out = save_admet_boosters(Path(args.out), columns, signature(FEATURES), data,
                              aux["smiles"].tolist())
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB", flush=True)
    if args.features_csv:
        smiles = eval_smiles(report["eval_tasks"])
        x_eval = table_features(FEATURES, smiles, "tdc_eval_molecules",
                                hashlib.sha256("\n".join(smiles).encode()).hexdigest())
        frame = pd.DataFrame(admet_features(x_eval, out), columns=admet_columns(out))
        frame.insert(0, "Drug", smiles)
        frame.to_csv(args.features_csv, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
