"""Re-score the best checkpoint of every finished run under a ``graphnorm benchmark`` folder
and write the ``predictions_{val,test}.csv.gz`` that runs made before those files existed.

Each re-score is checked against the run's ``metrics.json`` (same data, same checkpoint: the
numbers must agree), then the summary is rebuilt, now with the ensemble of seeds.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/rescore_runs.py \\
        --bench experiments/results/ogbg-molhiv/fast
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from graphnorm.bench.summary import summarize
from graphnorm.train.config import TrainConfig
from graphnorm.train.datamodule import GraphDataModule
from graphnorm.train.evaluate import evaluate_checkpoint


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, required=True, help="graphnorm benchmark --out folder")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    runs = sorted(p.parent for p in args.bench.glob("runs/*/seed*/metrics.json"))
    if not runs:
        raise SystemExit(f"no runs/*/seed*/metrics.json under {args.bench}")
    bad = []
    for run in runs:
        if (run / "predictions_test.csv.gz").is_file():
            print(f"{run}: has predictions, skipped")
            continue
        saved = json.loads((run / "metrics.json").read_text())
        dm = GraphDataModule.from_config(TrainConfig.from_dict(saved["config"]), progress=False,
                                         num_workers=0)
        dm.setup()
        scores = evaluate_checkpoint(run / "best.ckpt", dm, out=run)
        m = saved["metric"]
        gaps = [abs(scores[s] - saved[f"{s}_{m}"]) for s in ("val", "test")]
        print(f"{run}: test {m} {scores['test']:.5f} (metrics.json {saved[f'test_{m}']:.5f}), "
              f"val {scores['val']:.5f} ({saved[f'val_{m}']:.5f})", flush=True)
        if max(gaps) > args.tolerance:
            bad.append(str(run))
    summarize(args.bench)
    if bad:
        raise SystemExit(f"re-scores differ from metrics.json by > {args.tolerance}: {', '.join(bad)}")


if __name__ == "__main__":
    main()
