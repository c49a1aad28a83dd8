"""Chemprop's defaults on the small-table benchmark's own splits, for a paired comparison.

For each repeat k of a finished small-table benchmark (``--bench``: its runs'
``splits.json``), Chemprop 2 trains one model with its default settings (``chemprop train``
with only data, task, columns and that split given) and is scored on the same test molecules
with graphnorm's metric. Chemprop runs from its own environment (``--chemprop``: the CLI of a
venv where ``pip install chemprop`` was done; it is not a graphnorm dependency). Writes
``OUT/seed<k>/metrics.json`` (test metric, CPU seconds of the Chemprop process, versions, the
command) and ``OUT/summary.json`` with the pairing against the benchmark's variants.

    python experiments/chemprop_small_tables.py --bench experiments/results/small_tables/freesolv/default \
        --data ../shared/datasets/small/freesolv.csv --target expt --chemprop /tmp/cpv/bin/chemprop
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from graphnorm.bench.summary import paired_difference
from graphnorm.run_folder import write_metrics
from graphnorm.tasks import compute_metric


def chemprop_splits(splits: dict) -> list[dict]:
    """graphnorm's splits.json ('line N', header = line 1) -> Chemprop's 0-based row indices."""
    def rows(names):
        if any(not n.startswith("line ") for n in names):
            raise ValueError("only CSV tables (rows named 'line N') are converted")
        return [int(n.split()[1]) - 2 for n in names]
    return [{s: rows(splits[s]) for s in ("train", "val", "test")}]


def run_seed(args, seed: int, out: Path) -> dict:
    bench_run = next((args.bench / "runs").glob(f"*/seed{seed}/splits.json"))
    splits = json.loads(bench_run.read_text())
    out.mkdir(parents=True, exist_ok=True)
    (out / "splits.json").write_text(json.dumps(chemprop_splits(splits)))
    task = "classification" if args.classification else "regression"
    cmd = [args.chemprop, "train", "--data-path", str(args.data), "--task-type", task,
           "--smiles-columns", "smiles", "--target-columns", args.target,
           "--splits-file", str(out / "splits.json"), "--pytorch-seed", str(seed),
           "--output-dir", str(out / "chemprop"), "--num-workers", "0", *args.extra.split()]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    subprocess.run(cmd, check=True, stdout=open(out / "chemprop.log", "w"), stderr=subprocess.STDOUT,
                   env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # one file per model, or the ensemble's mean above its members' (--ensemble-size): the
    # shallowest files, averaged when they are the members'
    files = sorted((out / "chemprop").rglob("test_predictions.csv"), key=lambda p: len(p.parts))
    if not files:
        raise FileNotFoundError(f"{out}: no test_predictions.csv")
    files = [f for f in files if len(f.parts) == len(files[0].parts)]
    data = pd.read_csv(args.data)
    test = data.iloc[chemprop_splits(splits)[0]["test"]]
    frames = [pd.read_csv(f) for f in files]
    for f, frame in zip(files, frames):
        if not (frame["smiles"].values == test["smiles"].values).all():
            raise ValueError(f"{f}: rows differ from the split's test molecules")
    pred = frames[0].assign(**{args.target: np.mean([f[args.target] for f in frames], axis=0)})
    metric = "rocauc" if args.classification else "rmse"
    score = compute_metric(metric, torch.tensor(pred[args.target].to_numpy()).reshape(-1, 1),
                           torch.tensor(test[args.target].to_numpy(float)).reshape(-1, 1))
    result = {"seed": seed, "metric": metric, f"test_{metric}": score,
              "cpu_time_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
              "wall_time_s": round(time.time() - started, 1), "threads": args.threads,
              "prediction_files": [str(f.relative_to(out)) for f in files],
              "split_from": str(bench_run), "command": " ".join(cmd),
              "chemprop": subprocess.run(
                  [str(Path(args.chemprop).parent / "python"), "-c",
                   "import chemprop, torch; print(chemprop.__version__, 'torch', torch.__version__)"],
                  capture_output=True, text=True).stdout.strip()}
    write_metrics(out, result)  # graphnorm's record (strict JSON, checked; no validation score)
    return result


def pair(ours: list[float], theirs: list[float], higher: bool) -> dict:
    """`graphnorm.bench.summary.paired_difference`, signed so that > 0 means graphnorm better."""
    d = paired_difference(pd.Series(ours), pd.Series(theirs), higher)
    sign = 1.0 if higher else -1.0
    low, high = sorted((sign * d["paired_ci95_low"], sign * d["paired_ci95_high"]))
    return {"graphnorm_better_by": sign * d["paired_diff_mean"], "ci95": [low, high],
            "better_on": f"{d['paired_wins']}/{d['paired_seeds']}"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", type=Path, required=True)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--classification", action="store_true")
    p.add_argument("--chemprop", required=True, help="the chemprop CLI of its own venv")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path)
    p.add_argument("--extra", default="", help="more chemprop train flags, e.g. '--ensemble-size 3'")
    args = p.parse_args()
    out = args.out or args.bench.parent / "chemprop_defaults"
    results = []
    for seed in range(args.repeats):
        done = out / f"seed{seed}" / "metrics.json"
        results.append(json.loads(done.read_text()) if done.is_file() else run_seed(args, seed, out / f"seed{seed}"))
        print(f"seed {seed}: {results[-1]}", flush=True)
    metric = results[0]["metric"]
    scores = [r[f"test_{metric}"] for r in results]
    summary = {"metric": metric, "chemprop_test": scores, "mean": float(np.mean(scores)),
               "std": float(np.std(scores)), "cpu_time_s_mean": float(np.mean([r["cpu_time_s"] for r in results])),
               "vs": {}}
    for variant in sorted((args.bench / "runs").iterdir()):
        ours = [json.loads((variant / f"seed{s}" / "metrics.json").read_text())[f"test_{metric}"]
                for s in range(args.repeats)]
        summary["vs"][variant.name] = dict(pair(ours, scores, metric == "rocauc"),
                                           mean=float(np.mean(ours)))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
