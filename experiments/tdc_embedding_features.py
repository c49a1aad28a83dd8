"""Do extra features (a pre-trained Graphormer's embedding, or another model's predictions)
help the boosted trees on the TDC ADMET group?

The MapLight + GNN entries of the leaderboard append a pre-trained GIN's graph embedding to
MapLight's fingerprints and descriptors. This asks the same of graphnorm's shipped backbone
(``--init-from zinc250k``): LightGBM (`graphnorm.baselines.boosted`, the ``gbm`` kind's
settings) on the "maplight" features alone, and on them plus the backbone's final-norm
[VNode] and mean atom token (`graphnorm.inference.embed`), seed by seed on the official
splits (PyTDC seed = seed + 1, scaffold train/valid of ``train_val``). The choice is made on
the validation columns; test is shown beside, never used to choose.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/tdc_embedding_features.py \
        --tasks dili,herg --seeds 5 --out experiments/results/tdc_admet/embedding_features

``--extra NAME=SOURCE`` names the extra columns (default: ``zinc250k`` = the shipped
backbone): SOURCE a checkpoint or run folder (its embedding, as above) or a CSV of numeric
columns keyed by the tasks' ``Drug`` strings (``experiments/make_admet_boosters.py``);
``{task}`` in SOURCE becomes each task's name (``experiments/make_loto_features.py``'s files).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from graphnorm.baselines.boosted import fit_boosted, predict_boosted
from graphnorm.data.feature_cache import table_features
from graphnorm.data.tdc import (SET_COLUMN, TDC_ADMET_TASKS, admet_group_dir, parse_tasks,
                                task_kind, task_table, tdc_scaffold, tdc_scaffold_split)
from graphnorm.inference.embed import embed_smiles
from graphnorm.run_folder import METRICS_FILE, predictions_file
from graphnorm.tasks import HIGHER_IS_BETTER, compute_metric, resolve_task, target_transforms

BACKBONE = Path(__file__).resolve().parents[1] / "graphnorm" / "pretrained" / "zinc250k.ckpt"


def extra_columns(source: Path, smiles: list[str]) -> tuple[np.ndarray, list[str]]:
    """[rows, k] extra features of ``smiles`` from ``source``, and the rows that failed."""
    if source.suffix == ".csv":
        table = pd.read_csv(source).drop_duplicates("Drug").set_index("Drug")
        missing = [s for s in smiles if s not in table.index]
        if missing:
            raise SystemExit(f"{source}: no row for {len(missing)} molecules, e.g. {missing[0]!r}")
        return table.loc[smiles].to_numpy(dtype=np.float32), []
    return embed_smiles(source, smiles, atom_mean=True)


def maplight_or_nan(smiles: list[str], name: str, sha: str) -> np.ndarray:
    """MapLight features of ``smiles``; NaN rows where RDKit cannot read one (solubility_aqsoldb
    holds one): LightGBM takes them as missing values, the same in every variant compared."""
    from rdkit import Chem, rdBase

    with rdBase.BlockLogs():
        ok = np.array([Chem.MolFromSmiles(s) is not None for s in smiles])
    x = table_features("maplight", [s for s, k in zip(smiles, ok) if k], name, sha)
    out = np.full((len(smiles), x.shape[1]), np.nan, dtype=np.float32)
    out[ok] = x
    return out


def task_inputs(task: str, group: Path, source: Path) -> dict:
    """The task's table, its MapLight features and the extra columns, row by row."""
    path = task_table(task, group)
    frame = pd.read_csv(path)
    smiles = frame["Drug"].astype(str).tolist()
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    cpu = time.process_time()
    x = maplight_or_nan(smiles, path.name, sha)
    cpu_features = time.process_time() - cpu
    cpu = time.process_time()
    emb, errors = extra_columns(source, smiles)
    cpu_embed = time.process_time() - cpu
    return {"frame": frame, "smiles": smiles, "x": x, "emb": emb, "sha256": sha,
            "embed_failed": sum(bool(e) for e in errors), "cpu_features": cpu_features,
            "cpu_embed": cpu_embed}


def scaffold_folds(smiles: list[str], k: int, seed: int) -> np.ndarray:
    """Fold 0..k-1 of each molecule: whole scaffold groups dealt at random to the folds."""
    keys = [tdc_scaffold(s) or s for s in smiles]
    groups = sorted(set(keys))
    order = np.random.default_rng(seed).permutation(len(groups))
    fold_of = {groups[g]: i % k for i, g in enumerate(order)}
    return np.array([fold_of[key] for key in keys])


def out_of_fold(kind: str, x: np.ndarray, y: np.ndarray, folds: np.ndarray, seed: int,
                transforms) -> np.ndarray:
    """Predictions of each row by the booster fitted on the other folds."""
    pred = np.full(y.shape, np.nan)
    for f in np.unique(folds):
        held = folds == f
        models = fit_boosted(kind, x[~held], y[~held], seed, 1, transforms=transforms)
        pred[held] = predict_boosted(kind, models, x[held], transforms)
    return pred


def write_run(run: Path, record: dict, smiles: list[str], y: np.ndarray, preds: dict) -> None:
    """A finished run's folder in the suite's layout (``metrics.json``, the val/test
    prediction files), so ``tdc_members.py --bench`` averages it with the suite's members."""
    run.mkdir(parents=True, exist_ok=True)
    for split, (rows, pred) in preds.items():
        pd.DataFrame({"smiles": [smiles[i] for i in rows], "y:Y": y[rows, 0],
                      "pred:Y": pred[:, 0]}).to_csv(run / predictions_file(split), index=False)
    (run / METRICS_FILE).write_text(json.dumps(record, indent=2))


def seed_rows(task: str, inputs: dict, seed: int, name: str, cv: int = 0,
              runs: Path | None = None) -> list[dict]:
    """gbm and gbm+extra on one seed: "val" scores the official valid split, or with ``cv``
    the out-of-fold predictions of all train_val rows over ``cv`` scaffold folds (several
    times the molecules, so a smaller difference is visible); test from the model fitted on
    the official train split either way."""
    frame, metric, kind = inputs["frame"], TDC_ADMET_TASKS[task], task_kind(task)
    is_test = frame[SET_COLUMN].astype(str).str.lower().eq("test").to_numpy()
    pool = np.flatnonzero(~is_test)
    parts = tdc_scaffold_split([inputs["smiles"][i] for i in pool], seed + 1)
    rows = {"train": pool[parts["train"]], "val": pool[parts["val"]], "test": np.flatnonzero(is_test)}
    y = frame["Y"].to_numpy(dtype=float).reshape(-1, 1)
    transforms = target_transforms(resolve_task(kind), y[rows["train"]])
    folds = scaffold_folds([inputs["smiles"][i] for i in pool], cv, seed) if cv else None
    out = []
    for variant, x in (("gbm", inputs["x"]), (f"gbm+{name}", np.hstack([inputs["x"], inputs["emb"]]))):
        cpu = time.process_time()
        models = fit_boosted(kind, x[rows["train"]], y[rows["train"]], seed, 1, transforms=transforms)
        fit_cpu = time.process_time() - cpu
        scores, preds = {}, {}
        if cv:
            pred = out_of_fold(kind, x[pool], y[pool], folds, seed, transforms)
            scores["val"] = compute_metric(metric, torch.from_numpy(pred), torch.from_numpy(y[pool]))
        for split in ("val", "test")[1 if cv else 0:]:
            pred = predict_boosted(kind, models, x[rows[split]], transforms)
            preds[split] = (rows[split], pred)
            scores[split] = compute_metric(metric, torch.from_numpy(pred), torch.from_numpy(y[rows[split]]))
        out.append({"task": task, "metric": metric, "seed": seed, "variant": variant,
                    "val": scores["val"], "test": scores["test"], "fit_cpu_s": round(fit_cpu, 1)})
        if runs is not None and not cv:
            write_run(runs / task / "runs" / variant.replace("+", "_") / f"seed{seed}",
                      {"metric": metric, "seed": seed, "model": "gbm", "val_" + metric: scores["val"],
                       "test_" + metric: scores["test"], "cpu_time_s": round(fit_cpu, 1)},
                      inputs["smiles"], y, preds)
    return out


def paired_lines(table: pd.DataFrame, extra: str) -> list[str]:
    """Task-seeds where the extra features win, and a two-sided sign test of that count."""
    from scipy.stats import binomtest

    wide = table.pivot_table(index=["task", "metric", "seed"], columns="variant",
                             values=["val", "test"]).reset_index()
    sign = np.array([1 if HIGHER_IS_BETTER[m] else -1 for m in wide["metric"]])
    out = []
    for split in ("val", "test"):
        delta = sign * (wide[(split, extra)] - wide[(split, "gbm")]).to_numpy()
        won, lost = int((delta > 0).sum()), int((delta < 0).sum())
        p = binomtest(won, won + lost).pvalue if won + lost else 1.0
        out.append(f"- {split}: {extra} better on {won} task-seeds, worse on {lost} (sign test "
                   f"p = {p:.3f}); mean relative change {np.mean(delta / np.abs(wide[(split, 'gbm')])):+.2%}")
    return out


def summary_markdown(table: pd.DataFrame, name: str) -> str:
    extra = f"gbm+{name}"
    lines = [f"| task | metric | seeds | gbm val | +{name} val | gbm test | +{name} test | "
             "val says | test agrees |", "|---|---|---|---|---|---|---|---|---|"]
    wins = agree = 0
    for (task, metric), part in table.groupby(["task", "metric"], sort=False):
        mean = part.groupby("variant")[["val", "test"]].mean()
        sign = 1 if HIGHER_IS_BETTER[metric] else -1
        better_val = sign * (mean.loc[extra, "val"] - mean.loc["gbm", "val"]) > 0
        better_test = sign * (mean.loc[extra, "test"] - mean.loc["gbm", "test"]) > 0
        wins += better_val
        agree += better_val == better_test
        lines.append(f"| {task} | {metric} | {part['seed'].nunique()} | {mean.loc['gbm', 'val']:.3f} | "
                     f"{mean.loc[extra, 'val']:.3f} | {mean.loc['gbm', 'test']:.3f} | "
                     f"{mean.loc[extra, 'test']:.3f} | "
                     f"{name if better_val else 'gbm'} | {'yes' if better_val == better_test else 'no'} |")
    n = table["task"].nunique()
    lines += ["", f"Validation prefers +{name} on {wins} of {n} tasks; test agrees with "
              f"validation's choice on {agree} of {n}.", ""] + paired_lines(table, extra)
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", help="comma list (default: all 22)")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--out", required=True)
    p.add_argument("--cv", type=int, default=0,
                   help="K: validation = out-of-fold over K scaffold folds of train_val")
    p.add_argument("--write-runs", action="store_true",
                   help="also write OUT/<task>/runs/<variant>/seed<k>/ with the prediction files "
                   "(for tdc_members.py --bench OUT)")
    p.add_argument("--extra", default=f"zinc250k={BACKBONE}",
                   help="NAME=SOURCE: a checkpoint / run folder (embedding) or a CSV keyed by Drug")
    args = p.parse_args(argv)
    name, _, source = args.extra.partition("=")
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "rows.csv"
    done = pd.read_csv(rows_file) if rows_file.is_file() else pd.DataFrame()
    group = admet_group_dir()
    costs = json.loads((out / "costs.json").read_text()) if (out / "costs.json").is_file() else {}
    for task in parse_tasks(args.tasks):
        seeds = [s for s in range(args.seeds)
                 if done.empty or not ((done["task"] == task) & (done["seed"] == s)).any()]
        if not seeds:
            continue
        inputs = task_inputs(task, group, Path(source.replace("{task}", task)))
        costs[task] = {"rows": len(inputs["smiles"]), "sha256": inputs["sha256"],
                       "embed_failed": inputs["embed_failed"],
                       "features_cpu_s": round(inputs["cpu_features"], 1),
                       "embed_cpu_s": round(inputs["cpu_embed"], 1)}
        for seed in seeds:
            new = pd.DataFrame(seed_rows(task, inputs, seed, name, args.cv,
                                         out if args.write_runs else None))
            done = pd.concat([done, new], ignore_index=True)
            done.to_csv(rows_file, index=False)  # after every seed: an interrupted run resumes
            print(new.to_string(index=False, header=False), flush=True)
        (out / "costs.json").write_text(json.dumps(costs, indent=2))
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    (out / "summary.md").write_text(
        f"# gbm with and without {name}\n\ngit {sha}; "
        f"command: `{' '.join(['python', 'experiments/tdc_embedding_features.py'] + (argv or sys.argv[1:]))}`"
        f"\n\n{summary_markdown(done, name)}\n")
    print(summary_markdown(done, name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
