"""Leave-own-task-out ADMET features for the 8 large TDC tasks, as a CSV per task for
``tdc_embedding_features.py --extra NAME=DIR/{task}.csv`` (keyed by the task's own ``Drug``
strings): the predictions of `graphnorm.baselines.admet_loto`'s boosters -- the other columns
of the boosters' table fitted again without any molecule of the task -- for its molecules.
``benchmark --suite tdc-admet --tree-features maplight+admet`` builds and reads the same
boosters itself; this writes their features for the experiment scripts.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/make_loto_features.py \\
        --out data/derived/admet_loto
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from pathlib import Path

import pandas as pd
from tdc_embedding_features import maplight_or_nan  # experiments/

from graphnorm.baselines.admet_boosters import admet_features
from graphnorm.baselines.admet_loto import loto_boosters
from graphnorm.data.tdc import admet_group_dir, parse_tasks, task_table
from graphnorm.data.tdc_aux import AUX_TASKS


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="folder: one <task>.csv per task")
    p.add_argument("--tasks", default=",".join(AUX_TASKS), help="comma list of the large tasks")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    group = admet_group_dir()
    report = {}
    for task in parse_tasks(args.tasks):
        boosters = loto_boosters(task, group, threads=args.threads, progress=True)
        with gzip.open(boosters, "rt") as f:
            meta = json.load(f)
        path = task_table(task, group)
        drugs = pd.read_csv(path)["Drug"].astype(str).tolist()
        x = maplight_or_nan(drugs, path.name, hashlib.sha256(path.read_bytes()).hexdigest())
        frame = pd.DataFrame(admet_features(x, boosters), columns=[c["name"] for c in meta["columns"]])
        frame.insert(0, "Drug", drugs)
        frame.drop_duplicates("Drug").to_csv(out / f"{task}.csv", index=False)
        report[task] = {"boosters": str(boosters), **{k: meta["data"][k] for k in
                                                      ("table_sha256", "rows", "build_cpu_s")},
                        "columns": [{k: c[k] for k in ("name", "rows", "fit_cpu_s")}
                                    for c in meta["columns"]]}
        (out / "report.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
