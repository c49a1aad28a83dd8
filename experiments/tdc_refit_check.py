"""Would the admet default's boosted-tree member predict better fitted on train + validation?
Measured on the validation rows only, by cross-fitting over two scaffold halves.

The gbm member has no early stopping (500 trees, `graphnorm.baselines.boosted`), so nothing is
chosen on validation that a refit would spoil; the leaderboard's MapLight entries fit on all of
``train_val``. To see the gain without reading test, each validation split is cut into two
halves A and B by scaffold (whole Bemis-Murcko groups, so a half holds scaffolds the other
does not, as test holds scaffolds neither does), and per task and seed:

- ``base``: the member as the default fits it, on train; scored on A and on B;
- ``refit``: fitted on train + B, scored on A, and on train + A, scored on B;

each alone (``:gbm``) and averaged with the run's own Graphormer member at the run's own weights
(``ensemble.json``: gbm 0.7 on the small tables, fitted on validation on the large ones; the
Graphormer's validation predictions, which early stopping saw, in both arms alike). A score is
the mean of the two halves'. A half adds ~6 % to the training rows where the refit adds 12.5 %,
so the check sees about half the gain. ``test``: base = the run's own test score; refit = the
member fitted on all of train + validation, averaged with the run's Graphormer at its weights:
what the default with ``--tree-refit`` scores, its Graphormer being deterministic (beside, not
chosen on). The gbm reads the run's own boosters file (the leave-own-task-out ones on the large
tasks).

Writes a ``by_seed.csv`` in ``tdc_compare.py``'s form (labels base, refit, base:gbm,
refit:gbm); ``base``'s train-only fit is checked against the run's stored predictions
(``drift``). ``--no-halves`` rescores a board instead: the refit's test scores beside the runs'
own, validation as the command reports it (the train-only fit's).

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/tdc_refit_check.py \\
        --runs experiments/results/tdc_admet/seeds10/blocks3 --seeds 10 \\
        --out experiments/results/tdc_admet/refit31/by_seed.csv
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from graphnorm.baselines.tree_features import feature_matrix, width
from graphnorm.data.table_dataset import canonical_and_scaffold
from graphnorm.data.table_split import file_split
from graphnorm.models import tree_kind
from graphnorm.run_folder import read_metrics
from graphnorm.tasks import compute_metric, task_scored_by
from member_cost_profile import suite_table  # experiments/

def scaffold_halves(smiles: list[str], seed: int) -> tuple[np.ndarray, bool]:
    """bool [N] (True = half A) and whether a scaffold was split. Whole scaffold groups in a
    seeded order, each to the smaller half; where one group holds more than half of the rows
    (a few validation splits are one scaffold, e.g. dili seed 0: 54 benzenes), its rows are
    dealt at random to even the halves, which flatters the refit there (``mixed``)."""
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(smiles):
        groups.setdefault(canonical_and_scaffold(s)[1], []).append(i)
    rng = np.random.default_rng(seed)
    keys = list(groups)
    largest = max(keys, key=lambda k: len(groups[k]))
    mixed = 2 * len(groups[largest]) > len(smiles)
    a = np.zeros(len(smiles), bool)
    sizes = [0, 0]
    for k in rng.permutation(len(keys)):
        if mixed and keys[k] == largest:
            continue
        rows = groups[keys[k]]
        half = 0 if sizes[0] <= sizes[1] else 1
        sizes[half] += len(rows)
        a[rows] = half == 0
    if mixed:
        rows = rng.permutation(groups[largest])
        to_a = max(0, (len(smiles) + 1) // 2 - sizes[0])
        a[rows[:to_a]] = True
    return a, mixed


def _split(run: Path, table: pd.DataFrame) -> dict[str, list[int]]:
    """The run's rows by split, read by the table layer's own reader of splits.json (which
    refuses a table of another checksum; a CSV row's label is its line, header = line 1)."""
    labels = [f"line {i + 2}" for i in range(len(table))]
    return file_split(run / "splits.json", labels, table.attrs["sha256"])


def _score(metric: str, pred: np.ndarray, y: np.ndarray) -> float:
    return compute_metric(metric, torch.from_numpy(pred.reshape(-1, 1)), torch.from_numpy(y.reshape(-1, 1)))


def check_seed(run: Path, x: np.ndarray, table: pd.DataFrame, halves: bool = True,
               weights: tuple = ()) -> list[dict]:
    """The four rows of one task-seed (``run``: the seed's ensemble folder)."""
    gbm = read_metrics(run / "gbm")
    metric, seed = gbm["metric"], gbm["config"]["seed"]
    task = task_scored_by(metric)
    trees = tree_kind("gbm").implementation()
    idx = _split(run, table)
    y = table["Y"].to_numpy(np.float32).astype(float)  # as the run's dataset holds labels
    stored = pd.read_csv(run / "gbm" / "predictions_val.csv.gz")
    graph = pd.read_csv(run / "model_0" / "predictions_val.csv.gz")["pred:Y"].to_numpy()

    def fit_predict(train_rows, predict_rows):
        models, _, transforms = trees.fit(task, x[train_rows], y[train_rows, None], seed, 1)
        return trees.predict(task, models, x[predict_rows], transforms)[:, 0]

    val = np.array(idx["val"])
    base = fit_predict(idx["train"], val)
    drift = float(np.max(np.abs(base - stored["pred:Y"].to_numpy())))
    test_refit = fit_predict(idx["train"] + idx["val"], idx["test"])
    test_graph = pd.read_csv(run / "model_0" / "predictions_test.csv.gz")["pred:Y"].to_numpy()
    ens = read_metrics(run)
    w = json.loads((run / "ensemble.json").read_text())["member_weights"][-1]  # gbm's, last
    yv, yt = y[val], y[idx["test"]]
    tests = {"base": ens[f"test_{metric}"], "refit": _score(metric, w * test_refit + (1 - w) * test_graph, yt),
             "base:gbm": gbm[f"test_{metric}"], "refit:gbm": _score(metric, test_refit, yt)}
    if halves:
        a, mixed = scaffold_halves([table["Drug"][i] for i in val], seed)
        refit = np.empty_like(base)
        for half in (a, ~a):
            refit[half] = fit_predict(idx["train"] + list(val[~half]), val[half])
        vals = {}
        for label, pred in (("base", base), ("refit", refit)):
            for alone in (False, True):
                p = pred if alone else w * pred + (1 - w) * graph
                vals[label + (":gbm" if alone else "")] = float(np.mean(
                    [_score(metric, p[h], yv[h]) for h in (a, ~a)]))
        for other in weights:  # the refitted member at other fixed weights (--weights)
            p = other * refit + (1 - other) * graph
            vals[f"refit w={other}"] = float(np.mean([_score(metric, p[h], yv[h]) for h in (a, ~a)]))
            tests[f"refit w={other}"] = _score(metric, other * test_refit + (1 - other) * test_graph, yt)
        shape = dict(halves=f"{int(a.sum())}/{int((~a).sum())}", mixed=mixed)
    else:  # what the command reports: validation from the train-only fit in both arms
        vals = {"base": ens[f"val_{metric}"], "refit": ens[f"val_{metric}"],
                "base:gbm": gbm[f"val_{metric}"], "refit:gbm": gbm[f"val_{metric}"]}
        shape = dict(halves="", mixed=None)
    return [dict(task=run.parts[-4], metric=metric, seed=run.name, members=label, val=vals[label],
                 val_cv=vals[label], test=float(tests[label]), cpu_s=np.nan, w="", **shape,
                 drift=drift) for label in tests]


def check_task(folder: Path, seeds: int, halves: bool = True, weights: tuple = ()) -> list[dict]:
    runs = sorted((folder / "runs").glob("*/seed*"), key=lambda p: int(p.name[4:]))[:seeds]
    split = json.loads((runs[0] / "splits.json").read_text())
    table_file = suite_table(split["file"])
    checksum = hashlib.sha256(table_file.read_bytes()).hexdigest()
    table = pd.read_csv(table_file)
    started = time.process_time()
    boosters = read_metrics(runs[0] / "gbm")["config"]["admet_boosters"]
    # the rows the runs used: a row RDKit cannot read was skipped by the run (skipped_rows.csv)
    table.attrs["sha256"] = checksum
    used = sorted({r for run in runs for rows in _split(run, table).values() for r in rows})
    x = np.full((len(table), width("maplight+admet", boosters)), np.nan, np.float32)
    x[used] = feature_matrix("maplight+admet", table["Drug"][used].tolist(), boosters)
    rows = [r for run in runs for r in check_seed(run, x, table, halves, weights)]
    print(f"{folder.name}: {len(runs)} seeds, {time.process_time() - started:.0f} CPU-s, "
          f"largest drift from the stored base predictions "
          f"{max(r['drift'] for r in rows):.2g}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, required=True, help="a board of the default (TASK/runs/...)")
    ap.add_argument("--tasks", help="comma-separated (default: every task folder)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--weights", default="", help="comma-separated gbm weights: rows "
                    "'refit w=W', the refitted member averaged at W instead of the run's weight")
    ap.add_argument("--no-halves", dest="halves", action="store_false",
                    help="skip the validation halves: rows carry the runs' own validation "
                    "scores and the refit's test score (rescoring a board)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    weights = tuple(float(w) for w in args.weights.split(",") if w)
    tasks = args.tasks.split(",") if args.tasks else sorted(
        p.name for p in args.runs.iterdir() if (p / "runs").is_dir())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for done in pool.map(check_task, [args.runs / t for t in tasks], [args.seeds] * len(tasks),
                             [args.halves] * len(tasks), [weights] * len(tasks)):
            rows += done
            pd.DataFrame(rows).to_csv(args.out, index=False)  # task by task: nothing lost
    print(f"wrote {args.out} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
