"""Checks that graphnorm's TDC train/valid split (graphnorm/data/tdc.py) is PyTDC's: for
every task and seed 1..5, the valid rows of PyTDC's own ``create_scaffold_split`` (the
function ``admet_group.get_train_valid_split`` calls, read from an unpacked PyTDC source
tree: its package pulls many dependencies, so it is not installed) against ours.

    pip download --no-deps PyTDC==1.1.15 && tar xzf pytdc-1.1.15.tar.gz
    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/tdc_split_check.py \
        --pytdc pytdc-1.1.15 --out experiments/results/tdc_admet/split_check.json
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import types
from pathlib import Path

import pandas as pd


def pytdc_split_function(source: Path):
    """tdc/utils/split.py of a PyTDC source tree, with its one relative import stubbed."""
    package = types.ModuleType("tdc_utils_stub")
    package.__path__ = []
    misc = types.ModuleType("tdc_utils_stub.misc")
    misc.print_sys = lambda *a, **k: None
    sys.modules.update({"tdc_utils_stub": package, "tdc_utils_stub.misc": misc})
    spec = importlib.util.spec_from_file_location("tdc_utils_stub.split", source / "tdc/utils/split.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.create_scaffold_split


def _rows(frame: pd.DataFrame) -> list[str]:
    """A split's rows as sorted text (ids may be numbers or text, SMILES repeat in ppbr)."""
    return sorted(f"{i}|{d}|{y}" for i, d, y in zip(frame["Drug_ID"], frame["Drug"], frame["Y"]))


def main() -> None:
    from graphnorm.data.tdc import TDC_ADMET_TASKS, TDC_TRAIN_FRACTION, admet_group_dir, tdc_scaffold_split

    ap = argparse.ArgumentParser()
    ap.add_argument("--pytdc", required=True, help="an unpacked PyTDC source tree")
    ap.add_argument("--out")
    args = ap.parse_args()
    theirs = pytdc_split_function(Path(args.pytdc))
    group = admet_group_dir()
    report = {"pytdc_source": str(args.pytdc), "tasks": {}}
    for task in TDC_ADMET_TASKS:
        train_val = pd.read_csv(group / task / "train_val.csv")
        per_seed = {}
        for seed in range(1, 6):
            ref = theirs(train_val, seed, [TDC_TRAIN_FRACTION, 1 - TDC_TRAIN_FRACTION, 0.0], "Drug")
            ours = tdc_scaffold_split(train_val["Drug"].tolist(), seed)
            same = (_rows(ref["valid"]) == _rows(train_val.iloc[ours["val"]])
                    and len(ref["train"]) == len(ours["train"]))
            per_seed[seed] = {"identical": bool(same), "train": len(ours["train"]),
                              "valid": len(ours["val"])}
        report["tasks"][task] = per_seed
        print(task, all(v["identical"] for v in per_seed.values()), flush=True)
    report["all_identical"] = all(v["identical"] for t in report["tasks"].values() for v in t.values())
    print("all identical:", report["all_identical"])
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
