"""Would the admet default's two members predict better averaged in the units they were
fitted in? Measured on stored validation predictions: nothing is trained or refitted.

Per task and seed of a board folder (``<task>/runs/<variant>/seed<k>/``, the default's runs:
``model_0`` the Graphormer, ``gbm`` the tree member, ``ensemble.json`` their weights):

- ``mean``: the weighted mean in the user's units, as the default averages today; it must
  reproduce the run's stored ensemble predictions (else the check stops: the check would
  not be measuring the default);
- ``fitted:log10``: on targets the gbm member fitted in log10 (its ``metrics.json``
  ``transforms``), the weighted mean of log10 predictions, mapped back (a weighted geometric
  mean);
- ``fitted:logodds``: on classification, the weighted mean of the log-odds, mapped back.

Writes a ``by_seed.csv`` in ``tdc_compare.py``'s form; the rule that judges it is in
``experiments/results/tdc_admet/combine32/RULE.md``.

    python experiments/tdc_combine_check.py --runs experiments/results/tdc_admet/seeds10/blocks3 \\
        --out experiments/results/tdc_admet/combine32/by_seed.csv
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from graphnorm.tasks import compute_metric
from graphnorm.tasks.averaging import LOGODDS, MEAN, average_members

CLASSIFICATION = {"rocauc", "auprc"}


def _read(run: Path, member: str, split: str) -> pd.DataFrame:
    return pd.read_csv(run / member / f"predictions_{split}.csv.gz")


def combine(preds: np.ndarray, weights: np.ndarray, space: str) -> np.ndarray:
    """Weighted mean over members [M, N] in ``space`` (mean, log10, logodds), in user units:
    the package's `average_members` (log10 only here: it lost, RULE.md)."""
    if space == "log10":
        return 10 ** average_members(np.log10(preds), weights, MEAN)
    return average_members(preds, weights, LOGODDS if space == "logodds" else MEAN)


def _score(metric: str, pred: np.ndarray, y: np.ndarray) -> float:
    return float(compute_metric(metric, torch.tensor(pred[:, None]), torch.tensor(y[:, None])))


def check_seed(run: Path, task: str) -> list[dict]:
    report = json.loads((run / "ensemble.json").read_text())
    metric, members = report["metric"], [Path(f).parts[0] for f in report["member_files"]]
    weights = np.array(report.get("member_weights") or [1 / len(members)] * len(members))
    logged = json.loads((run / "gbm" / "metrics.json").read_text()).get("transforms") == ["log10"]
    space = "logodds" if metric in CLASSIFICATION else "log10" if logged else None
    scores: dict[str, dict] = {}
    for split in ("val", "test"):
        frames = [_read(run, m, split) for m in members]
        if not all(f["smiles"].equals(frames[0]["smiles"]) for f in frames):
            raise SystemExit(f"{run}: the members' {split} rows differ")
        preds = np.stack([f["pred:Y"].to_numpy(float) for f in frames])[..., None]  # [M, N, 1]
        y = frames[0]["y:Y"].to_numpy(float)
        mean = combine(preds, weights, "mean")[:, 0]
        stored = pd.read_csv(run / f"predictions_{split}.csv.gz")["pred:Y"].to_numpy(float)
        drift = float(np.abs(mean - stored).max())
        if drift > 1e-4 * max(1.0, float(np.abs(stored).max())):
            raise SystemExit(f"{run}: the raw-unit mean differs from the stored ensemble "
                             f"{split} predictions by {drift:.3g}")
        scores.setdefault("mean", {})[split] = _score(metric, mean, y)
        if space and (space != "log10" or (preds > 0).all()):
            scores.setdefault(f"fitted:{space}", {})[split] = _score(metric, combine(preds, weights, space)[:, 0], y)
    return [dict(task=task, metric=metric, seed=run.name, members=arm, val=s["val"], val_cv=s["val"],
                 test=s["test"], cpu_s=np.nan, w=float(weights[members.index("gbm")]))
            for arm, s in scores.items()]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=Path, required=True, help="a board folder of the default's runs")
    p.add_argument("--variant", default="sep-bn-bn")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    rows = []
    for task in sorted(d for d in args.runs.iterdir() if (d / "runs" / args.variant).is_dir()):
        for run in sorted((task / "runs" / args.variant).glob("seed*")):
            if (run / "ensemble.json").is_file():
                rows += check_seed(run, task.name)
    if not rows:
        raise SystemExit(f"no finished runs of {args.variant} under {args.runs}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(args.out, index=False)
    print(f"{len(rows)} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
