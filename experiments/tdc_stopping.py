"""When to stop the default's Graphormer member: early stopping judged without choosing on test.

The admet default trains its Graphormer a fixed budget (max(150 steps, 15 epochs)), validates
every ~25 steps and keeps the best validation checkpoint. Stopping after P validations without
a better score (``--patience P``) saves the steps after the stop; it changes the result only
where a later checkpoint would have scored better on validation. Judged on the same
validation split, stopping could only look worse (a best-of-fewer checkpoint), so each rule is
cross-fitted: the validation rows are cut into two folds (stratified by label on binary tasks,
seeded by the run's seed); the rule stops and picks its checkpoint on one fold's Graphormer
scores, and the default (that checkpoint's predictions averaged with gbm at the run's weight)
is scored on the other fold; the two folds' scores are averaged. Test is reported beside,
not used.

    # 1. train every member of a finished benchmark again, keeping each validation's
    #    checkpoint, and predict val/test with each (same config, seed and split)
    python experiments/tdc_stopping.py train experiments/results/tdc_admet/board27 --out /tmp/stopping
    # 2. the rules, per task and over all task-seeds
    python experiments/tdc_stopping.py analyze experiments/results/tdc_admet/board27 --out /tmp/stopping \
        --md experiments/results/tdc_admet/stopping/stopping.md
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd

PATIENCES = (1, 2, 3, 4)
# patience as a share of the run's validations (rounded, at least 1): a run of a large table
# validates more often over a longer schedule
SHARES = (0.25, 0.3, 0.4)


def member_runs(board: Path, tasks=None) -> list[Path]:
    """The benchmark's Graphormer members (``<task>/runs/<variant>/seed<k>/model_0``)."""
    runs = sorted(board.glob("*/runs/*/seed*/model_0/metrics.json"))
    return [r.parent for r in runs if not tasks or r.parents[4].name in tasks]


def scratch_dir(out: Path, member: Path) -> Path:
    return out / member.parents[3].name / member.parent.name


def train_one(member: Path, out: Path) -> None:
    """``member``'s config trained again with every validation's checkpoint kept, then each
    checkpoint's val/test predictions in ``<scratch>/steps/<step>/``."""
    import torch

    from graphnorm.train.config import TrainConfig
    from graphnorm.train.datamodule import GraphDataModule
    from graphnorm.train.evaluate import evaluate_checkpoint
    from graphnorm.train.run import train

    scratch = scratch_dir(out, member)
    if (scratch / "done").is_file():
        return
    shutil.rmtree(scratch, ignore_errors=True)
    config = json.loads((member / "metrics.json").read_text())["config"]
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    cfg = TrainConfig(**{k: v for k, v in config.items() if k in fields})
    # the whole budget, whatever the member's own rule was: the rules are simulated after
    cfg = dataclasses.replace(cfg, out=str(scratch / "model"), keep_checkpoints=True, patience=None,
                              progress=False, resume=False, threads=1)
    started = time.time()
    result = train(cfg)
    dm = GraphDataModule.from_config(cfg)
    dm.setup()
    torch.set_num_threads(1)
    for ckpt in sorted((scratch / "model" / "checkpoints").glob("step=*.ckpt")):
        step_dir = scratch / "steps" / ckpt.stem.split("=")[1]
        step_dir.mkdir(parents=True, exist_ok=True)
        evaluate_checkpoint(ckpt, dm, step_dir)
    shutil.rmtree(scratch / "model" / "checkpoints")
    (scratch / "done").write_text(json.dumps({"val": result[f"val_{result['metric']}"],
                                              "steps": result["steps"],
                                              "seconds": round(time.time() - started, 1)}))
    print(f"{member} -> {scratch}: {result['steps']} steps", flush=True)


def _read(folder: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """A run's predictions and labels of ``split`` (its ``predictions_<split>.csv.gz``)."""
    frame = pd.read_csv(folder / f"predictions_{split}.csv.gz")
    return frame.filter(like="pred:").to_numpy()[:, 0], frame.filter(like="y:").to_numpy()[:, 0]


def _score(metric: str, pred: np.ndarray, y: np.ndarray) -> float:
    import torch

    from graphnorm.tasks import compute_metric

    return compute_metric(metric, torch.tensor(pred).reshape(-1, 1), torch.tensor(y).reshape(-1, 1))


def folds(y: np.ndarray, binary: bool, seed: int) -> list[np.ndarray]:
    """Two halves of the validation rows (stratified by label when ``binary``)."""
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(y == v) for v in (0, 1)] if binary else [np.arange(len(y))]
    halves = [[], []]
    for g in groups:
        g = rng.permutation(g)
        halves[0] += list(g[: len(g) // 2])
        halves[1] += list(g[len(g) // 2:])
    return [np.sort(np.array(h, dtype=int)) for h in halves]


def stop_index(scores: list[float], higher: bool, patience) -> tuple[int, int]:
    """(index of the validation the run stops at, index of the best one up to it)."""
    best, wait = 0, 0
    for i in range(1, len(scores)):
        better = scores[i] > scores[best] if higher else scores[i] < scores[best]
        if better:
            best, wait = i, 0
        else:
            wait += 1
        if patience is not None and wait >= patience:
            return i, best
    return len(scores) - 1, best


def analyze_run(member: Path, scratch: Path) -> list[dict]:
    """One row per rule: cross-fitted val, test and the share of steps trained."""
    from graphnorm.run_folder import read_member_weights
    from graphnorm.tasks import HIGHER_IS_BETTER

    metrics = json.loads((member / "metrics.json").read_text())
    metric, seed, total = metrics["metric"], metrics["seed"], metrics["steps"]
    higher = HIGHER_IS_BETTER[metric]
    run = member.parent
    w_graph = read_member_weights(run, 2)[0]  # [graphormer, gbm]
    gbm, y = {}, {}
    for s in ("val", "test"):
        gbm[s], y[s] = _read(run / "gbm", s)
    steps = sorted(int(p.name) for p in (scratch / "steps").iterdir())
    graph = {s: np.stack([_read(scratch / "steps" / str(k), s)[0] for k in steps]) for s in ("val", "test")}
    binary = metric in ("rocauc", "auprc")
    halves = folds(y["val"], binary, seed)
    rows = []
    rules = [(None, "full")] + [(p, f"patience {p}") for p in PATIENCES] + [
        (max(1, round(share * len(steps))), f"share {share}") for share in SHARES]
    for patience, rule in rules:
        cross, used = [], []
        for pick, judge in (halves, halves[::-1]):
            curve = [_score(metric, g[pick], y["val"][pick]) for g in graph["val"]]
            stop, best = stop_index(curve, higher, patience)
            mix = w_graph * graph["val"][best] + (1 - w_graph) * gbm["val"]
            cross.append(_score(metric, mix[judge], y["val"][judge]))
            used.append(steps[stop] / total)
        full_curve = [_score(metric, g, y["val"]) for g in graph["val"]]
        stop, best = stop_index(full_curve, higher, patience)
        mix = w_graph * graph["test"][best] + (1 - w_graph) * gbm["test"]
        rows.append(dict(task=member.parents[3].name, seed=seed, metric=metric,
                         rule=rule, patience=patience,
                         val_cross=float(np.mean(cross)), test=_score(metric, mix, y["test"]),
                         steps_used=steps[stop] / total, best_step=steps[best], total_steps=total))
    return rows


def write_summary(rows: pd.DataFrame, md: Path, command: str) -> None:
    from scipy.stats import binomtest

    from graphnorm.tasks import HIGHER_IS_BETTER

    sign = rows["metric"].map(lambda m: 1 if HIGHER_IS_BETTER[m] else -1)
    rows = rows.assign(v=rows["val_cross"] * sign, t=rows["test"] * sign)
    full = rows[rows.rule == "full"].set_index(["task", "seed"])
    lines = [f"# Early stopping of the default's Graphormer member, cross-fitted on validation\n",
             f"command: `{command}`\n",
             "Per rule, over all task-seeds against training the whole budget (`full`): the "
             "cross-fitted validation score of the default (better / worse / equal task-seeds, "
             "two-sided sign test, mean relative change), the Graphormer's steps trained (mean "
             "share of the budget) and test beside (mean relative change; not used to choose).\n",
             "| rule | val better | worse | equal | p | val change | steps trained | test change |",
             "|---|---|---|---|---|---|---|---|"]
    for rule, g in rows.groupby("rule", sort=False):
        g = g.set_index(["task", "seed"])
        d = g["v"] - full["v"]
        better, worse = int((d > 1e-12).sum()), int((d < -1e-12).sum())
        p = binomtest(better, better + worse).pvalue if better + worse else 1.0
        rel = (d / full["v"].abs()).mean() * 100
        trel = ((g["t"] - full["t"]) / full["t"].abs()).mean() * 100
        lines.append(f"| {rule} | {better} | {worse} | {len(d) - better - worse} | {p:.2f} | "
                     f"{rel:+.2f} % | {g['steps_used'].mean():.0%} | {trel:+.2f} % |")
    lines += ["", "Per task (mean over seeds): cross-fitted validation / steps trained\n",
              "| task | metric | " + " | ".join(rows.rule.unique()) + " |",
              "|---|---|" + "---|" * rows.rule.nunique()]
    for task, g in rows.groupby("task"):
        cells = [f"{r['val_cross'].mean():.4f} / {r['steps_used'].mean():.0%}"
                 for _, r in g.groupby("rule", sort=False)]
        lines.append(f"| {task} | {g.metric.iloc[0]} | " + " | ".join(cells) + " |")
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    import sys

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=["train", "analyze"])
    ap.add_argument("board", type=Path, help="a finished `benchmark --suite tdc-admet --recipe admet` folder")
    ap.add_argument("--out", type=Path, required=True, help="scratch folder of the retrained members")
    ap.add_argument("--tasks", help="comma list (default: all in BOARD)")
    ap.add_argument("--md", type=Path, help="analyze: the summary's markdown file")
    args = ap.parse_args()
    tasks = set(args.tasks.split(",")) if args.tasks else None
    members = member_runs(args.board, tasks)
    if args.stage == "train":
        for member in members:
            train_one(member, args.out)
        return
    rows = [r for m in members if (scratch_dir(args.out, m) / "done").is_file()
            for r in analyze_run(m, scratch_dir(args.out, m))]
    frame = pd.DataFrame(rows)
    if args.md:
        frame.to_csv(args.md.with_suffix(".csv"), index=False)
        write_summary(frame, args.md, "python experiments/tdc_stopping.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
