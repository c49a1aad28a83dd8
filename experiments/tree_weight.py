"""RULE.md O: the admet recipe's tree weight once its network is fine-tuned, judged on runs
that exist (experiments/results/pretrain/rule_o/). Nothing is trained.

    python experiments/tree_weight.py members --work W    # each member's set-aside predictions
    python experiments/tree_weight.py summary --work W --out experiments/results/pretrain/rule_o

``W`` is finetune_default.py's work folder (its corpus and ASAP runs and tables, and the TDC
benchmark folders under W/tdc). ``members`` predicts the set-aside molecules member by member
(`graphnorm.load_predictor` of each member file), checks that at the run's own weights they
combine into the run's recorded prediction, and keeps them in W/tree_weight/ (resumable).
``summary`` combines them at every candidate weight, scores TDC by the cross-fitted
validation score at that weight (`crossfit_run(..., weights=)`), chooses each suite's weight
on the other two, judges it, and appends every ASAP scoring to the ASAP ledger.
"""
from __future__ import annotations

import argparse
import datetime
import json
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from finetune_default import ASAP_TARGETS, ROOT, _safe, _score
from finetune_summary import LEDGER
from graphnorm.bench.pooled import improvements, pooled_interval, pooled_verdict

BASE = 0.7
WEIGHTS = tuple(round(0.1 * k, 1) for k in range(11))
CORPUS = (("q-d9d594cf", 1), ("admet-x", 2))  # (label, split seed)
ASAP = (("q-d9d594cf", (3, 4, 5)), ("admet-x", (6, 7, 8)))
TDC = (("admet-x", (0, 1)), ("q-d9d594cf", (3, 4)))  # (folder under W/tdc, benchmark indices)
TDC_TASKS = ("bbb_martins", "caco2_wang", "clearance_hepatocyte_az", "clearance_microsome_az",
             "cyp2c9_substrate_carbonmangels", "cyp2d6_substrate_carbonmangels",
             "cyp3a4_substrate_carbonmangels", "dili", "half_life_obach", "herg", "hia_hou",
             "pgp_broccatelli", "vdss_lombardo")
MAX_DIFFERENCE = 1e-5


def units(work: Path) -> list[dict]:
    """Every corpus and ASAP run of the rule: its folder, set-aside table, targets, kind."""
    out = []
    for t in json.loads((work / "corpus" / "tables.json").read_text()):
        for label, seed in CORPUS:
            run = work / "runs" / "corpus" / "admet" / label / _safe(t["task"]) / f"seed{seed}"
            if t["seed"] == seed and (run / "ensemble.json").is_file():  # else dropped in L
                out.append({"suite": "corpus", "task": t["task"], "seed": seed, "label": label,
                            "run": run, "aside": work / "corpus" / _safe(t["task"]) /
                            f"seed{seed}" / "aside.csv", "targets": ("Y",), "kind": t["kind"]})
    for label, seeds in ASAP:
        for seed in seeds:
            out.append({"suite": "asap", "task": "asap", "seed": seed, "label": label,
                        "run": work / "runs" / "asap" / "admet" / label / "asap" / f"seed{seed}",
                        "aside": work / "asap" / "aside.csv", "targets": ASAP_TARGETS,
                        "kind": "regression"})
    return out


def store(work: Path, u: dict) -> Path:
    return work / "tree_weight" / u["suite"] / u["label"] / _safe(u["task"]) / f"seed{u['seed']}.npz"


def member_predictions(u: dict) -> tuple[np.ndarray, np.ndarray, list]:
    """[members, molecules, targets] predictions of the set-aside molecules, their labels,
    and the ensemble's tree flags; refuses when the members at the run's weights do not give
    the run's recorded prediction."""
    from graphnorm import load_predictor
    from graphnorm.ensemble import Ensemble

    ensemble = Ensemble.read(u["run"])
    frame = pd.read_csv(u["aside"])
    smiles = frame["smiles"].tolist()
    members = []
    for path in ensemble.files:
        predictor = load_predictor(path)
        rows = predictor.predict_rows(smiles)
        if any(rows.errors):
            raise RuntimeError(f"{path}: molecules failed: {[e for e in rows.errors if e][:3]}")
        names = predictor.loaded.targets  # the columns of rows.mean, in the run's order
        order = [names.index(c) for c in u["targets"]]
        members.append(rows.mean[:, order])
    members = np.stack(members)
    recorded = pd.read_csv(u["run"] / "aside_pred.csv")
    cols = ["prediction"] if len(u["targets"]) == 1 else list(u["targets"])
    expected = recorded[cols].to_numpy(float)
    got = ensemble.combine(members)
    worst = float(np.nanmax(np.abs(got - expected)))
    if worst > MAX_DIFFERENCE:
        raise RuntimeError(f"{u['run']}: the members combine to {worst:.2g} off the recorded "
                           "prediction: the study stops (RULE.md O)")
    return members, frame[list(u["targets"])].to_numpy(float), list(ensemble.tree)


def collect(work: Path) -> None:
    for u in units(work):
        path = store(work, u)
        if path.is_file():
            continue
        members, y, tree = member_predictions(u)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, members=members, y=y, tree=np.array(tree))
        print(f"{u['suite']} {u['task']} seed {u['seed']}: {members.shape}", flush=True)


def weights_for(tree: np.ndarray, w: float) -> list[float]:
    return [w if t else 1.0 - w for t in tree]


def set_aside_scores(work: Path, u: dict) -> dict[float, dict[str, tuple[str, float]]]:
    """{w: {target: (metric, score)}} of one corpus or ASAP run."""
    from graphnorm.ensemble import Ensemble

    data = np.load(store(work, u))
    ensemble = Ensemble.read(u["run"])
    out = {}
    for w in WEIGHTS:
        pred = ensemble.weighted(weights_for(data["tree"], w)).combine(data["members"])
        out[w] = {}
        for k, target in enumerate(u["targets"]):
            have = ~np.isnan(data["y"][:, k]) & ~np.isnan(pred[:, k])
            out[w][target] = _score(u["kind"], data["y"][have, k], pred[have, k])
    return out


def tdc_scores(work: Path) -> dict[tuple[str, int], dict[float, tuple[str, float]]]:
    """{(task, index): {w: (metric, cross-fitted validation score)}}."""
    from graphnorm.bench.crossfit import crossfit_run
    from graphnorm.ensemble import Ensemble

    out = {}
    for folder, indices in TDC:
        for task in TDC_TASKS:
            for k in indices:
                run = next((work / "tdc" / folder / task / "runs").glob(f"*/seed{k}"))
                tree = np.array(Ensemble.read(run).tree)
                out[(task, k)] = {}
                for w in WEIGHTS:
                    cf = crossfit_run(run, weights=weights_for(tree, w))
                    out[(task, k)][w] = (cf.metric, cf.crossfit)
    return out


def r_by_task(scores: dict) -> dict[float, dict[str, list[float]]]:
    """{w: {task: [r of w against 0.7, per seed]}} from {(task, seed): {w: (metric, score)}}."""
    out = {w: defaultdict(list) for w in WEIGHTS}
    for (task, _), by_w in sorted(scores.items()):
        metric, base = by_w[BASE]
        for w in WEIGHTS:
            out[w][task] += improvements(metric, [base], [by_w[w][1]], statistic="bounded")
    return {w: dict(v) for w, v in out.items()}


def best_weight(suites: list[dict]) -> float:
    """The weight with the highest mean r over the given suites' tasks joined (ties: the one
    closer to 0.7)."""
    def mean_r(w):
        per_task = [np.mean(v) for s in suites for v in s[w].values()]
        return float(np.mean(per_task))
    return max(WEIGHTS, key=lambda w: (round(mean_r(w), 12), -abs(w - BASE)))


def ledger(scores: dict, labels: dict, commit: str) -> None:
    have = pd.read_csv(LEDGER)["run"].tolist() if LEDGER.exists() else []
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    rows = []
    for (_, seed), by_w in sorted(scores.items()):
        for w, per_target in by_w.items():
            name = f"rule_o/admet/init-from-{labels[seed]}/tree-weight-{w}/seed{seed}"
            if name in have:
                continue
            maes = {f"mae_{t}": round(s, 4) for t, (_, s) in per_target.items()}
            rows.append({"date_utc": now, "commit": commit, "run": name,
                         "command": f"python experiments/tree_weight.py summary (the members of "
                                    f"admet/init-from-{labels[seed]}/seed{seed} at w={w})",
                         **maes, "aggregated_mae": round(float(np.mean(list(maes.values()))), 4)})
    if rows:
        pd.DataFrame(rows).to_csv(LEDGER, mode="a", header=not LEDGER.exists(), index=False)


def summarize(work: Path, out: Path) -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    per_suite, asap_scores, labels = {"corpus": {}, "asap": {}}, {}, {}
    for u in units(work):
        by_w = set_aside_scores(work, u)
        if u["suite"] == "asap":  # each endpoint a task, as N pools them
            asap_scores[("asap", u["seed"])], labels[u["seed"]] = by_w, u["label"]
            for target in u["targets"]:
                per_suite["asap"][(target, u["seed"])] = {w: s[target] for w, s in by_w.items()}
        else:
            per_suite["corpus"][(u["task"], u["seed"])] = {w: s["Y"] for w, s in by_w.items()}
    per_suite["tdc_validation"] = tdc_scores(work)
    r = {name: r_by_task(scores) for name, scores in per_suite.items()}
    result = {"rule": "experiments/results/pretrain/RULE.md, O", "base": BASE,
              "weights": list(WEIGHTS), "commit": commit, "suites": {}}
    for name in r:
        others = [r[o] for o in r if o != name]
        w = best_weight(others)
        interval = pooled_interval(r[name][w]) if w != BASE else None
        result["suites"][name] = {
            "chosen_by_the_others": w, **(interval or {}),
            "verdict": pooled_verdict(interval) if interval else "neutral",
            "mean_r_by_weight": {str(v): float(np.mean([np.mean(x) for x in r[name][v].values()]))
                                 for v in WEIGHTS}}
    verdicts = [s["verdict"] for s in result["suites"].values()]
    result["adopted"] = verdicts.count("helps") >= 2 and "hurts" not in verdicts
    result["weight"] = best_weight(list(r.values())) if result["adopted"] else BASE
    ledger(asap_scores, labels, commit)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "summary.md").write_text(markdown(result))
    print(markdown(result))
    return result


def markdown(result: dict) -> str:
    lines = ["# Rule O: the tree member's weight in `--recipe admet`, fine-tuned network", "",
             f"Base {result['base']}; candidates {result['weights'][0]}-{result['weights'][-1]} "
             "by 0.1; each suite judged on the weight the other two chose.", "",
             "| suite | chosen by the other two | tasks | pairs | mean r | 95 % interval | verdict |",
             "|---|---|---|---|---|---|---|"]
    for name, s in result["suites"].items():
        if "mean" in s:
            lines.append(f"| {name} | {s['chosen_by_the_others']} | {s['tasks']} | {s['pairs']} "
                         f"| {s['mean']:+.4f} | [{s['low']:+.4f}, {s['high']:+.4f}] | {s['verdict']} |")
        else:
            lines.append(f"| {name} | {s['chosen_by_the_others']} | | | | | {s['verdict']} |")
    lines += ["", "Mean r against 0.7 by weight (each suite's tasks):", "",
              "| suite | " + " | ".join(str(w) for w in result["weights"]) + " |",
              "|---|" + "---|" * len(result["weights"])]
    for name, s in result["suites"].items():
        lines.append(f"| {name} | " + " | ".join(f"{s['mean_r_by_weight'][str(w)]:+.3f}"
                                                 for w in result["weights"]) + " |")
    lines += ["", f"**Adopted: {'yes' if result['adopted'] else 'no'}**; the recipe's tree "
              f"weight: {result['weight']}.", "", f"Code {result['commit'][:8]}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("members", "summary"))
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "experiments" / "results" /
                        "pretrain" / "rule_o")
    args = parser.parse_args(argv)
    if args.step == "members":
        collect(args.work)
    else:
        summarize(args.work, args.out)


if __name__ == "__main__":
    main()
