"""Which boosted-tree library and settings ``--model gbm`` uses, chosen on the TDC ADMET
validation splits only (never test.csv): LightGBM's defaults, graphnorm's LightGBM settings
(graphnorm/baselines/boosted.py) and CatBoost's defaults (the MapLight recipe), on the same
MapLight features (cached per table) and PyTDC splits, one thread each. Two variants of
graphnorm's settings: ``bag5`` averages five of its boosters (seeds 1000 s + k: their row and
column subsamples differ), ``slow`` grows 1,500 trees at a third of the learning rate.
A ``+mordred`` suffix (e.g. ``graphnorm+mordred``) appends the 1,613 2D Mordred descriptors
(Moriwaki et al. 2018, https://doi.org/10.1186/s13321-018-0258-y; the ``mordredcommunity``
package, not a graphnorm dependency) to the MapLight features: cached per table beside them.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/tdc_gbm_choice.py \
        --tasks caco2_wang,herg,... --seeds 2 --candidates lgbm-default,graphnorm,catboost \
        --out experiments/results/tdc_admet/gbm_choice
Each (candidate, task, seed) is one line of ``results.jsonl`` (resumable); ``summary.md``
gives the mean validation metric per task and the mean rank of each candidate.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from graphnorm.baselines.boosted import BoostedConfig
from graphnorm.tasks import log_transform_wanted
from graphnorm.data.feature_cache import table_features
from graphnorm.data.table import read_table
from graphnorm.data.table_split import tdc_split
from graphnorm.data.tdc import SET_COLUMN, TDC_ADMET_TASKS, admet_group_dir, parse_tasks, task_table
from graphnorm.tasks import HIGHER_IS_BETTER, compute_metric


LGBM_PARAMS = {"lgbm-default": {}, "graphnorm": BoostedConfig().to_dict(),
               "bag5": BoostedConfig().to_dict(),
               "slow": dict(BoostedConfig().to_dict(), n_estimators=1500, learning_rate=0.01)}


def mordred_features(smiles: list[str], name: str, sha256: str) -> np.ndarray:
    """float32 [N, 1613] 2D Mordred descriptors (NaN where one fails), cached per table by
    `table_features` beside the MapLight features."""
    from importlib.metadata import version

    import rdkit
    from mordred import Calculator, descriptors
    from rdkit import Chem

    calc = Calculator(descriptors, ignore_3D=True)

    def matrix(todo: list[str]) -> np.ndarray:
        x = np.full((len(todo), len(calc.descriptors)), np.nan, dtype=np.float32)
        for i, s in enumerate(todo):
            for j, v in enumerate(calc(Chem.MolFromSmiles(s))):
                try:
                    x[i, j] = float(v)
                except (TypeError, ValueError):  # mordred's error objects: missing
                    pass
        x[~np.isfinite(x)] = np.nan
        return np.clip(x, -1e30, 1e30)

    sig = {"set": "mordred", "width": len(calc.descriptors),
           "mordred": version("mordredcommunity"), "rdkit": rdkit.__version__}
    return table_features("mordred", smiles, name, sha256, computed_by=(sig, matrix))


def fit_predict(candidate: str, cls: bool, x, y, xv, seed: int, log: bool):
    """Validation predictions of one candidate (bag5: the mean of its five boosters), in the
    labels' units."""
    if log:
        y = np.log10(y)
    candidate = candidate.removesuffix("+mordred")  # the features were chosen by the caller
    seeds = [1000 * seed + k for k in range(5)] if candidate == "bag5" else [seed]
    p = np.mean([_fit_predict(_model(candidate, cls, s), cls, x, y, xv) for s in seeds], axis=0)
    return 10.0 ** p if log else p


def _model(candidate: str, cls: bool, seed: int):
    if candidate == "catboost":
        from catboost import CatBoostClassifier, CatBoostRegressor

        return (CatBoostClassifier if cls else CatBoostRegressor)(
            verbose=0, thread_count=1, random_seed=seed, allow_writing_files=False)
    import lightgbm as lgb

    return (lgb.LGBMClassifier if cls else lgb.LGBMRegressor)(
        **LGBM_PARAMS[candidate], random_state=seed, n_jobs=1, verbose=-1)


def _fit_predict(model, cls: bool, x, y, xv):
    model.fit(x, y.astype(int) if cls else y)
    return model.predict_proba(xv)[:, 1] if cls else model.predict(xv)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--candidates", default="lgbm-default,graphnorm,catboost")
    ap.add_argument("--out", default="experiments/results/tdc_admet/gbm_choice")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    done = set()
    lines = out / "results.jsonl"
    if lines.is_file():
        done = {(r["candidate"], r["task"], r["seed"]) for r in map(json.loads, lines.read_text().splitlines())}
    group = admet_group_dir()
    for task in parse_tasks(args.tasks):
        path = task_table(task, group)
        table = read_table(path, "Drug")
        smiles, ys = table.smiles, table.frame["Y"].to_numpy(dtype=float)
        metric = TDC_ADMET_TASKS[task]
        cls = metric in ("rocauc", "auprc")
        x_all = table_features("maplight", smiles, path.name, table.sha256)
        wanted = args.candidates.split(",")
        x_more = None
        if any(c.endswith("+mordred") for c in wanted):
            x_more = np.concatenate([x_all, mordred_features(smiles, path.name, table.sha256)], axis=1)
        for seed in range(args.seeds):
            split = tdc_split(table, SET_COLUMN, list(range(len(table))), seed)
            tr, va = split["train"], split["val"]
            log = not cls and log_transform_wanted(ys[tr])
            for cand in wanted:
                if (cand, task, seed) in done:
                    continue
                started = time.process_time()
                x = x_more if cand.endswith("+mordred") else x_all
                p = fit_predict(cand, cls, x[tr], ys[tr], x[va], seed, log)
                value = compute_metric(metric, torch.tensor(p).reshape(-1, 1),
                                       torch.tensor(ys[va]).reshape(-1, 1))
                row = {"candidate": cand, "task": task, "seed": seed, "metric": metric,
                       "val": round(value, 4), "fit_cpu_s": round(time.process_time() - started, 1),
                       "log10": log, "load": round(os.getloadavg()[0], 2)}
                print(json.dumps(row), flush=True)
                with lines.open("a") as f:
                    f.write(json.dumps(row) + "\n")
    summarize(out)


def markdown(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(map(str, frame.columns)) + " |\n|" + "---|" * len(frame.columns) + "\n"
    return head + "\n".join("| " + " | ".join(map(str, r)) + " |" for r in frame.itertuples(index=False))


def summarize(out: Path) -> None:
    rows = pd.DataFrame(map(json.loads, (out / "results.jsonl").read_text().splitlines()))
    table = rows.groupby(["task", "candidate"]).agg(val=("val", "mean"), seeds=("seed", "count"),
                                                    fit_cpu_s=("fit_cpu_s", "mean")).reset_index()
    ranks = []
    for task, part in table.groupby("task"):
        higher = HIGHER_IS_BETTER[TDC_ADMET_TASKS[task]]
        ranks.append(part.assign(rank=part["val"].rank(ascending=not higher)))
    table = pd.concat(ranks)
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    text = ("# gbm choice on TDC validation splits\n\n"
            f"git {sha}, {platform.processor() or platform.machine()}, one thread per fit; "
            "load averages per fit in results.jsonl.\n\n"
            + markdown(table.round(4)) + "\n\n## Mean rank (1 = best)\n\n"
            + table.groupby("candidate").agg(mean_rank=("rank", "mean"), tasks=("task", "count"),
                                             fit_cpu_s=("fit_cpu_s", "mean")).round(2).reset_index().pipe(markdown) + "\n")
    (out / "summary.md").write_text(text)


if __name__ == "__main__":
    main()
