"""``graphnorm analyze``: [VNode]/token embedding analysis of one checkpoint (or two, compared)
on a benchmark split or own molecules, or of every finished run of a benchmark
(graphnorm/analysis/).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from graphnorm.cli.common import show_defaults
from graphnorm.data.info import DATASET_INFO, SPLITS  # torch-free registries


def add_parser(sub) -> argparse.ArgumentParser:
    a = sub.add_parser("analyze", help="[VNode]/token embedding analysis of a checkpoint")
    a.add_argument("--checkpoint", help="a run's best.ckpt (or any checkpoint)")
    a.add_argument("--bench", help="instead: a `graphnorm benchmark --out` folder; every "
                   "finished run, mean ± std per variant and paired against ln")
    a.add_argument("--dataset", choices=list(DATASET_INFO),
                   help="benchmark whose --split is analyzed (default: the one the checkpoint "
                   "was trained on; or --data)")
    a.add_argument("--data", help="own molecules instead: every row of a .csv/.smi/.sdf/... file")
    a.add_argument("--smiles-column", dest="smiles_column", help="--data's SMILES column")
    a.add_argument("--out", required=True)
    a.add_argument("--compare", help="second checkpoint drawn in the same figures")
    a.add_argument("--raw-dir", dest="raw_dir",
                   help="offline raw data folder holding zinc/ and molhiv/ (default: "
                   "$GRAPHNORM_RAW_DIR, else the official download)")
    a.add_argument("--split", default="test", choices=list(SPLITS))
    a.add_argument("--limit", type=int, help="use the first N graphs of the split")
    a.set_defaults(func=run)
    show_defaults(a, train=False)
    return a


def run(args: argparse.Namespace) -> int:
    from graphnorm.analysis.analyze import analyze

    if args.dataset is not None and args.data is not None:
        raise ValueError("give --dataset NAME (a benchmark split) or --data FILE (own "
                         "molecules), not both")
    if (args.checkpoint is None) == (args.bench is None):
        raise ValueError("give --checkpoint FILE (one run, or two with --compare) or --bench "
                         "DIR (every finished run of a benchmark), one of them")
    if args.bench is not None:
        from graphnorm.analysis.seeds import analyze_benchmark

        if args.data is not None or args.compare is not None:
            raise ValueError("--bench analyzes its runs on a benchmark split: no --data, "
                             "no --compare")
        analyze_benchmark(Path(args.bench), Path(args.out), args.dataset, raw_dir=args.raw_dir,
                          split=args.split, limit=args.limit)
        return 0
    analyze(args.checkpoint, args.dataset, Path(args.out), compare=args.compare,
            raw_dir=args.raw_dir, split=args.split, limit=args.limit, data_file=args.data,
            smiles_column=args.smiles_column)
    return 0
