"""What each member adds on the TDC ADMET group: every finished variant of a suite run
(``graphnorm benchmark --suite tdc-admet --models graphormer,gbm,rf``) alone and every
equal-weight average of two or three of them, from the runs' own prediction files, seed by
seed (the variants of a seed share its split). The choice of a default is made on the
validation columns; test is shown beside, never used to choose.

    python experiments/tdc_members.py --bench experiments/results/tdc_admet/bench \
        --out experiments/results/tdc_admet/members

Any other table: name each member's run folder with ``{seed}`` in it, e.g. the Graphormer
member inside a small-table default ensemble and a gbm benchmark on the same splits:

    python experiments/tdc_members.py --table molhiv_3k --metric rocauc --seeds 5 \
        --member graphormer=experiments/results/small_tables/molhiv_3k/default/runs/sep-bn-bn/seed{seed}/model_0 \
        --member gbm=experiments/results/small_tables/molhiv_3k/gbm/runs/gbm/seed{seed} \
        --out experiments/results/small_tables/molhiv_3k/members
"""
from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from graphnorm.data.tdc import TDC_ADMET_TASKS
from graphnorm.run_folder import METRICS_FILE, predictions_file, read_metrics
from graphnorm.tasks import HIGHER_IS_BETTER, compute_metric


def _frames(run: Path) -> dict:
    return {s: pd.read_csv(run / predictions_file(s)) for s in ("val", "test")}


def suite_runs(benches: list[str]) -> dict:
    """{(task, metric): {seed: {variant: run folder}}} of the suites' finished runs (several
    folders: their variants side by side, seed by seed; a variant in two: the first wins;
    ``FOLDER=TAG`` names that folder's variants ``<variant>-TAG``)."""
    out = {}
    for task, metric in TDC_ADMET_TASKS.items():
        runs = {}
        for spec in benches:
            bench, _, tag = spec.partition("=")
            for f in (Path(bench) / task).glob(f"runs/*/seed*/{METRICS_FILE}"):
                variant = f.parent.parent.name + (f"-{tag}" if tag else "")
                runs.setdefault(f.parent.name, {}).setdefault(variant, f.parent)
        if runs:
            out[(task, metric)] = runs
    return out


def board_table(table: pd.DataFrame, combos: list[str], leaderboard: Path | None,
                reference: str | None) -> str:
    """The leaderboard form (`graphnorm.bench.tdc_board`) of the chosen member combinations,
    each on the seeds where it was scored, with a count of tasks where each beats ``reference``
    (e.g. gbm alone) on test, over the seeds both have."""
    from graphnorm.bench.tdc_board import board_markdown, board_row, read_leaderboard

    lb = read_leaderboard(leaderboard)
    rows = [board_row(task, part["metric"].iloc[0], combo, part["test"], part["val"],
                      part["cpu_s"].tolist(), lb)
            for combo in combos for task, part in table[table["members"] == combo].groupby("task")]
    frame = pd.DataFrame(rows)
    text = board_markdown(frame)
    if reference and not frame.empty:
        text += (f"\nTasks where each beats {reference} on test (means over the seeds both "
                 "have, at the leaderboard's 3 decimals):\n\n")
        ref = table[table["members"] == reference]
        for combo in combos:
            wins = tasks = 0
            for task, part in table[table["members"] == combo].groupby("task"):
                a = part.set_index("seed")["test"]
                b = ref[ref["task"] == task].set_index("seed")["test"]
                seeds = a.index.intersection(b.index)
                if len(seeds):
                    ma, mb = round(a[seeds].mean(), 3), round(b[seeds].mean(), 3)
                    tasks += 1
                    wins += (ma > mb) if HIGHER_IS_BETTER[part["metric"].iloc[0]] else (ma < mb)
            text += f"- {combo}: {wins} of {tasks}\n"
    return text


def named_runs(table: str, metric: str, seeds: int, members: list[str]) -> dict:
    runs = {}
    for seed in range(seeds):
        for spec in members:
            name, _, pattern = spec.partition("=")
            run = Path(pattern.format(seed=seed))
            if (run / predictions_file("val")).is_file():
                runs.setdefault(f"seed{seed}", {})[name] = run
    return {(table, metric): runs}


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` indexed by (SMILES, its occurrence): duplicate molecules stay apart."""
    return frame.set_index([frame["smiles"], frame.groupby("smiles").cumcount()])


def _arrays(frames: dict, combo: tuple, split: str):
    """Predictions [M, N] of ``combo``'s members and the labels [N] on ``split``, on the first
    member's rows in its order; every other member must predict those rows (in any order,
    and may predict more: an experiment's run keeps a molecule the suite skipped)."""
    first = _keyed(frames[combo[0]][split])
    target = next(c[2:] for c in first.columns if c.startswith("y:"))
    preds = [first[f"pred:{target}"].to_numpy()]
    for v in combo[1:]:
        other = _keyed(frames[v][split])
        if not first.index.isin(other.index).all():
            raise ValueError(f"members of one seed predict different rows ({v} on {split})")
        preds.append(other.loc[first.index, f"pred:{target}"].to_numpy())
    return np.stack(preds), first[f"y:{target}"].to_numpy()


def _scored(metric: str, preds, y, weights) -> float:
    pred = np.average(preds, axis=0, weights=weights)
    return compute_metric(metric, torch.tensor(pred).reshape(-1, 1), torch.tensor(y).reshape(-1, 1))


def weight_rules(metric: str, combo: tuple, stack: str | None, grid: tuple, priors: tuple) -> list:
    """(label suffix, rule) pairs for ``combo``: a rule maps validation predictions [M, N] and
    labels [N] to member weights (None: the plain mean). Equal always; with ``stack`` in the
    combination, its weight fitted on validation (`fit_tree_weight`, what `train` applies),
    fitted under the one-SE rule toward each prior, and fixed at each weight of ``grid``."""
    from graphnorm.train.member_weights import fit_tree_weight

    rules = [("", lambda preds, y: None)]
    if stack not in combo or len(combo) < 2:
        return rules
    tree = [v == stack for v in combo]

    def fitted(prior):
        def rule(preds, y):
            return fit_tree_weight(metric, torch.tensor(preds).unsqueeze(-1),
                                   torch.tensor(y).reshape(-1, 1), tree, prior).tolist()
        return rule

    rules.append((f" (w_{stack} on val)", fitted(None)))
    rules += [(f" (w_{stack} val:{p})", fitted(p)) for p in priors]
    rules += [(f" (w_{stack}={w:g})", lambda preds, y, w=w: [w if t else (1 - w) / (len(combo) - 1)
                                                              for t in tree]) for w in grid]
    return rules


def cross_fitted(metric: str, preds, y, rule, repeats: int = 3) -> float:
    """The rule judged without test: validation split in random halves, the rule's weights
    chosen on one half and scored on the other, both ways, ``repeats`` halvings; the mean.
    A rule that overfits the validation rows scores worse here than on the rows it saw."""
    out = []
    for r in range(repeats):
        order = np.random.default_rng(r).permutation(len(y))
        halves = (order[: len(y) // 2], order[len(y) // 2:])
        for fit, held in (halves, halves[::-1]):
            value = _scored(metric, preds[:, held], y[held], rule(preds[:, fit], y[fit]))
            if not np.isnan(value):
                out.append(value)
    return float(np.mean(out)) if out else float("nan")


def member_table(found: dict, stack: str | None = None, grid: tuple = (),
                 priors: tuple = ()) -> pd.DataFrame:
    """Every member alone and every average (equal, and the weight rules of `weight_rules`),
    per seed: validation, the cross-fitted validation (`cross_fitted`) and test."""
    rows = []
    for (task, metric), runs in found.items():
        for seed, variants in sorted(runs.items()):
            names = sorted(variants)
            frames = {v: _frames(variants[v]) for v in names}
            cpu = {v: read_metrics(variants[v]).get("cpu_time_s") or 0.0 for v in names}
            for k in range(1, len(names) + 1):
                for combo in itertools.combinations(names, k):
                    val_p, val_y = _arrays(frames, combo, "val")
                    test_p, test_y = _arrays(frames, combo, "test")
                    for suffix, rule in weight_rules(metric, combo, stack, grid, priors):
                        weights = rule(val_p, val_y)
                        rows.append({"task": task, "metric": metric, "seed": seed,
                                     "members": "+".join(combo) + suffix,
                                     "val": _scored(metric, val_p, val_y, weights),
                                     "val_cv": cross_fitted(metric, val_p, val_y, rule),
                                     "test": _scored(metric, test_p, test_y, weights),
                                     "cpu_s": sum(cpu[v] for v in combo),
                                     **({"w": weights[combo.index(stack)]} if weights and stack in combo else {})})
    return pd.DataFrame(rows)


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per (task, members), with the rank of its validation mean in its task;
    only seeds where every member finished count."""
    full = table.groupby(["task", "seed"])["members"].transform("count")
    table = table[full == full.groupby(table["task"]).transform("max")]
    out = table.groupby(["task", "metric", "members"]).agg(
        seeds=("seed", "count"), val=("val", "mean"), val_cv=("val_cv", "mean"), test=("test", "mean"),
        test_std=("test", "std"), cpu_s=("cpu_s", "mean"),
        **({"w_mean": ("w", "mean")} if "w" in table else {})).reset_index()
    lower = ~out["metric"].map(HIGHER_IS_BETTER)
    for col, rank in (("val", "val_rank"), ("val_cv", "cv_rank")):
        out[rank] = out.groupby("task")[col].rank(ascending=False)
        out.loc[lower, rank] = out[lower].groupby("task")[col].rank(ascending=True)
    return out


def markdown(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(frame.columns) + " |\n|" + "---|" * len(frame.columns) + "\n"
    return head + "\n".join("| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v)
                                                for v in r) + " |" for r in frame.itertuples(index=False))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="append", default=[],
                    help="a `benchmark --suite tdc-admet` folder (repeat: variants side by side); "
                    "FOLDER=TAG names its variants <variant>-TAG")
    ap.add_argument("--board", default="", help="member combinations to show in the "
                    "leaderboard's form, comma-separated, e.g. 'gbm,sep-bn-bn,gbm+sep-bn-bn (w_gbm=0.7)'")
    ap.add_argument("--by-seed", help="members_by_seed.csv of an earlier run: summarize it again")
    ap.add_argument("--leaderboard", help="leaderboard.csv (default: beside the TDC archive)")
    ap.add_argument("--member", action="append", default=[], help="NAME=RUN_FOLDER with {seed}")
    ap.add_argument("--table", default="table")
    ap.add_argument("--metric")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--stack", help="also: this member's weight fitted on validation")
    ap.add_argument("--rule", default="", help="priors W of --stack's weight fitted under the "
                    "one-standard-error rule (--tree-weight val:W), e.g. 0.7")
    ap.add_argument("--grid", default="", help="fixed weights of --stack to try, e.g. 0.5,0.7,0.9")
    ap.add_argument("--tasks", help="comma list: score these tasks only (default: every task found)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    found = (suite_runs(args.bench) if args.bench else
             named_runs(args.table, args.metric, args.seeds, args.member))
    if args.tasks:
        found = {k: v for k, v in found.items() if k[0] in args.tasks.split(",")}
    if args.by_seed:  # a previous run's per-seed scores: re-summarize without rescoring
        table = pd.read_csv(args.by_seed)
    else:
        table = member_table(found, args.stack, tuple(float(w) for w in args.grid.split(",") if w),
                             tuple(w if w == "equal" else float(w) for w in args.rule.split(",") if w))
        table.to_csv(out / "members_by_seed.csv", index=False)
    summary = summarize(table)
    if args.board:
        from graphnorm.bench.tdc_suite import default_leaderboard

        combos = [c.strip() for c in args.board.split(",") if c.strip()]
        (out / "board.md").write_text(
            f"# The TDC ADMET board of member combinations\n\ncommand: python experiments/"
            f"tdc_members.py {' '.join(sys.argv[1:])}\n\n" + board_table(
                table, combos, Path(args.leaderboard) if args.leaderboard else
                default_leaderboard(None), combos[0]))
    summary.to_csv(out / "members.csv", index=False)
    overall = summary.groupby("members").agg(tasks=("task", "count"), mean_val_rank=("val_rank", "mean"),
                                             mean_cv_rank=("cv_rank", "mean"),
                                             cpu_s=("cpu_s", "mean")).reset_index().sort_values("mean_val_rank")
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    (out / "members.md").write_text(
        f"# Members alone and averaged (TDC ADMET, validation decides)\n\ngit {sha}; "
        f"command: python experiments/tdc_members.py {' '.join(sys.argv[1:])}\n\n"
        + markdown(summary) + "\n\n## Mean validation rank over tasks (1 = best)\n\n"
        + markdown(overall) + "\n")
    print(markdown(overall))


if __name__ == "__main__":
    main()
