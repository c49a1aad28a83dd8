"""An auxiliary table of measured labels for the small TDC ADMET tasks: the large tasks'
labels (and MolHIV's) on molecules that no evaluated task holds (`graphnorm.data.tdc_aux`
says what keeps it clean). Read by ``graphnorm train --data`` (a multitask backbone) and by
``experiments/make_admet_boosters.py`` (the shipped boosters).

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/make_aux_table.py \\
        --out data/derived/tdc_aux.csv
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from graphnorm.data.tdc import TDC_ADMET_TASKS, admet_group_dir
from graphnorm.data.tdc_aux import AUX_TASKS, EVAL_TASKS, aux_table, read_hiv, task_frame

__all__ = ["AUX_TASKS", "EVAL_TASKS", "task_frame"]  # what other experiments import from here


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--no-hiv", action="store_true", help="leave MolHIV's labels out")
    args = p.parse_args(argv)
    group = admet_group_dir()
    hiv = None if args.no_hiv else read_hiv()
    if hiv is None and not args.no_hiv:
        raise SystemExit("no MolHIV file in $GRAPHNORM_RAW_DIR (molhiv/HIV.csv.gz); "
                         "give --no-hiv to build the table without it")
    table, report = aux_table({t: task_frame(t, group) for t in TDC_ADMET_TASKS}, hiv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    report["sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
