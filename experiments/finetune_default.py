"""RULE.md L and M: fine-tuning a backbone against training from scratch, pooled over tasks
and seeds on three development suites (experiments/results/pretrain/rule_l/, rule_m/).

    python experiments/finetune_default.py tables  --work W        # corpus + ASAP tables
    python experiments/finetune_default.py run     --work W --suite corpus --arm admet
    python experiments/finetune_default.py run     --work W --suite asap   --arm none --seeds 3 4 5
    python experiments/finetune_default.py run     --work W --suite corpus --arm PATH/best.ckpt \\
        --label q-SHA8 --seeds 1                                   # a backbone by path (M)
    python experiments/finetune_default.py summary --work W --out experiments/results/pretrain/rule_l
    python experiments/finetune_default.py summary --work W --rule M --arm q-SHA8 --out .../rule_m
    python experiments/finetune_default.py run     --work W --suite asap --recipe auto --arm none --seeds 6 7 8   # N

``summary`` pools each suite (`graphnorm.bench.pooled`: one interval per suite), applies the
rule, and writes ``OUT/summary.json`` and ``OUT/summary.md``.

Each (suite, recipe, arm, task, seed) is one ``graphnorm train --data`` and one ``graphnorm
predict`` on the molecules set aside, as a user would run them; its score lands in
``W/results.jsonl`` as it finishes (a rerun skips it: resumable). The ASAP test scorings are
appended to ``experiments/results/asap_admet/ledger.csv``.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from graphnorm.bench.pooled import (error_of, improvements, pooled_interval, pooled_verdict,
                                    relative_improvement)

ROOT = Path(__file__).resolve().parents[1]
RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR", ROOT.parent / "shared" / "datasets"))
GRAPHNORM = str(Path(sys.executable).parent / "graphnorm")
PANEL = ROOT / "graphnorm" / "pretrained" / "admet" / "panel.json"
LEDGER = ROOT / "experiments" / "results" / "asap_admet" / "ledger.csv"
MIN_HELD, CAP, ASIDE_FOLDS, MIN_CLASS = 300, 1200, 5, 10
VAL_PERCENT = 15  # the shipped backbone's held-out scaffolds (source.json spec)
SEEDS = {"corpus": (0, 1, 2), "asap": tuple(range(9))}
ASAP_TARGETS = ("LogD", "KSOL_uM", "HLM_CLint", "MLM_CLint", "MDR1_MDCKII_Papp")


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _safe(task: str) -> str:
    return task.replace("/", "__")


def corpus_tables(work: Path) -> list[dict]:
    """The corpus suite's tables: each judged endpoint's labelled held-out molecules (as the
    shipped run held them out), split per seed into the user's table and the set-aside."""
    from rdkit import Chem, rdBase

    from graphnorm.data.scaffold import murcko_scaffold, scaffold_bucket
    from graphnorm.pretrain.corpus import load_corpus, loose_key
    from graphnorm.pretrain.data import MAX_ATOMS
    from graphnorm.pretrain.splits import benchmark_keys

    panel = json.loads(PANEL.read_text())
    chosen = [e for e in panel["endpoints"] if e.get("judged") and e["n_select"] + e["n"] >= MIN_HELD]
    corpus = load_corpus(RAW)
    excluded = benchmark_keys(RAW / "tdc_admet_group")
    molecule = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    made = []
    for e in chosen:
        t = corpus.task_names.index(e["task"])
        held = []
        for row, y in zip(molecule[corpus.task == t], corpus.value[corpus.task == t]):
            s = corpus.smiles[row]
            with rdBase.BlockLogs():
                mol = Chem.MolFromSmiles(s)
            if mol is None or mol.GetNumAtoms() > MAX_ATOMS:
                continue
            key, scaf = loose_key(s), murcko_scaffold(s, mol)
            if (key if key is not None else s) in excluded:
                continue
            if scaffold_bucket(scaf, s) < VAL_PERCENT:
                held.append((s, float(y), scaf or s))
        held = sorted(held, key=lambda m: _hash(m[0]))[:CAP]
        frame = pd.DataFrame(held, columns=["smiles", "Y", "group"])
        for seed in SEEDS["corpus"]:
            aside = frame["group"].map(lambda g: _hash(f"{seed}:{g}") % ASIDE_FOLDS == 0)
            folder = work / "corpus" / _safe(e["task"]) / f"seed{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            frame.loc[~aside, ["smiles", "Y"]].to_csv(folder / "table.csv", index=False)
            frame.loc[aside, ["smiles", "Y"]].to_csv(folder / "aside.csv", index=False)
            made.append({"task": e["task"], "seed": seed, "kind": e["kind"],
                         "held": len(held), "panel_held": e["n_select"] + e["n"],
                         "table": int((~aside).sum()), "aside": int(aside.sum())})
    (work / "corpus" / "tables.json").write_text(json.dumps(made, indent=1))
    return made


def asap_transform(frame: pd.DataFrame) -> pd.DataFrame:
    """The official scale: LogD as is, every other endpoint log10(clip(y, 0) + 1)."""
    out = frame.copy()
    for c in ASAP_TARGETS[1:]:
        out[c] = np.log10(out[c].clip(lower=0) + 1)
    return out


def asap_tables(work: Path) -> None:
    folder = work / "asap"
    folder.mkdir(parents=True, exist_ok=True)
    train = asap_transform(pd.read_csv(RAW / "asap_admet" / "train.csv"))
    # separately registered stereoisomers collapse to one SMILES: their values averaged
    train.groupby("smiles", sort=False)[list(ASAP_TARGETS)].mean().reset_index() \
        .to_csv(folder / "table.csv", index=False)
    asap_transform(pd.read_csv(RAW / "asap_admet" / "test.csv")).to_csv(folder / "aside.csv",
                                                                        index=False)


def _units(work: Path, suite: str) -> list[tuple[str, int, Path, tuple[str, ...]]]:
    """(task, seed, folder, target columns) of every run of a suite."""
    if suite == "asap":
        return [("asap", s, work / "asap", ASAP_TARGETS) for s in SEEDS["asap"]]
    tables = json.loads((work / "corpus" / "tables.json").read_text())
    return [(t["task"], t["seed"], work / "corpus" / _safe(t["task"]) / f"seed{t['seed']}", ("Y",))
            for t in tables]


def _done(results: Path) -> set[tuple]:
    if not results.exists():
        return set()
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    return {(r["suite"], r["recipe"], r["arm"], r["task"], r["seed"]) for r in rows}


def _score(kind: str, y: np.ndarray, p: np.ndarray) -> tuple[str, float]:
    from sklearn.metrics import roc_auc_score

    if kind == "binary":
        return "rocauc", float(roc_auc_score(y, p))
    return "mae", float(np.mean(np.abs(y - p)))


def run_suite(work: Path, suite: str, arm: str, recipe: str, seeds=None, label=None) -> None:
    """Train and score every (task, seed) of ``suite`` not yet in results.jsonl, starting from
    ``arm`` (``--init-from``: none, admet or a checkpoint path), recorded as ``label``."""
    label = label or arm
    results = work / "results.jsonl"
    done = _done(results)
    kinds = {t["task"]: t["kind"] for t in json.loads((work / "corpus" / "tables.json").read_text())} \
        if suite == "corpus" else {}
    for task, seed, folder, targets in _units(work, suite):
        if (suite, recipe, label, task, seed) in done or (seeds is not None and seed not in seeds):
            continue
        aside = pd.read_csv(folder / "aside.csv")
        kind = kinds.get(task, "regression")
        if kind == "binary" and min((aside.Y == 1).sum(), (aside.Y == 0).sum()) < MIN_CLASS:
            row = {"suite": suite, "recipe": recipe, "arm": label, "task": task, "seed": seed,
                   "dropped": f"fewer than {MIN_CLASS} of a class aside"}
        else:
            row = _train_and_score(work, suite, arm, recipe, task, seed, folder, targets, kind,
                                   label)
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def _train_and_score(work, suite, arm, recipe, task, seed, folder, targets, kind, label) -> dict:
    out = work / "runs" / suite / recipe / label / _safe(task) / f"seed{seed}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.time()
    load = os.getloadavg()[0]
    cmd = [GRAPHNORM, "train", "--data", str(folder / "table.csv"), "--target-columns",
           *targets, "--init-from", arm, "--seed", str(seed), "--threads", "1",
           "--no-progress", "--out", str(out)]
    if recipe != "auto":
        cmd += ["--recipe", recipe]
    if not (out / "metrics.json").exists():
        shutil.rmtree(out, ignore_errors=True)  # a run cut short: train it again whole
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    pred = out / "aside_pred.csv"
    subprocess.run([GRAPHNORM, "predict", "--checkpoint", str(out), "--input",
                    str(folder / "aside.csv"), "--output", str(pred)], check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    frame = pd.read_csv(pred)
    scores = {}
    for c in targets:
        # a target name the output reuses moves the input's column to <name>_input
        truth, col = (f"{c}_input", c) if f"{c}_input" in frame else (c, "prediction")
        have = frame[truth].notna() & frame[col].notna()
        metric, scores[c] = _score(kind, frame.loc[have, truth].to_numpy(float),
                                   frame.loc[have, col].to_numpy(float))
    return {"suite": suite, "recipe": recipe, "arm": label, "task": task, "seed": seed,
            "metric": metric, "scores": scores,
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "wall_s": round(time.time() - wall, 1), "load": round(load, 2),
            "command": " ".join(cmd[1:])}


def ledger_asap(work: Path, commit: str, rule_name: str = "L") -> None:
    """One ledger row per ASAP test scoring of the rule's seeds not yet in the ledger (keyed
    by run)."""
    rows = [json.loads(x) for x in (work / "results.jsonl").read_text().splitlines() if x.strip()]
    LEDGER.parent.mkdir(parents=True, exist_ok=True)
    have = pd.read_csv(LEDGER)["run"].tolist() if LEDGER.exists() else []
    seeds = RULES[rule_name]["seeds"]["asap"]
    new = []
    for r in rows:
        name = f"rule_{rule_name.lower()}/{r['recipe']}/init-from-{r['arm']}/seed{r['seed']}"
        if r["suite"] != "asap" or name in have or "scores" not in r or r["seed"] not in seeds:
            continue
        new.append({"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "commit": commit, "run": name, "command": r["command"],
                    **{f"mae_{k}": round(v, 4) for k, v in r["scores"].items()},
                    "aggregated_mae": round(float(np.mean(list(r["scores"].values()))), 4)})
    if new:
        pd.DataFrame(new).to_csv(LEDGER, mode="a", header=not LEDGER.exists(), index=False)


# ---- the summary: a rule's verdict per suite, the decision, the cost --------------------

RULE_G = ROOT / "experiments" / "results" / "pretrain" / "rule_g" / "versus_small.json"
# what each rule reads (RULE.md L as amended, M, N): the statistic, the seeds per suite (TDC:
# benchmark seed indices), the arms' folder under W/tdc, and the arms as (recipe, label) in
# results.jsonl (None: the summary's --recipe, and its --arm for the second)
RULES = {
    "L": {"statistic": "relative", "seeds": {"tdc_validation": (0, 1, 2), "corpus": (0,),
                                             "asap": (0, 1, 2)}, "tdc": ("scratch", "pre-9c04996f"),
          "arms": ((None, "none"), (None, None))},
    "M": {"statistic": "bounded", "seeds": {"tdc_validation": (3, 4), "corpus": (1,),
                                            "asap": (3, 4, 5)}, "tdc": ("scratch", None),
          "arms": ((None, "none"), (None, None))},
    # N: arm A is today's default (recipe auto, from scratch), C the admet recipe (its start)
    "N": {"statistic": "bounded", "seeds": {"tdc_validation": (0, 1), "corpus": (2,),
                                            "asap": (6, 7, 8)}, "tdc": ("small-table", "admet-x"),
          "arms": (("auto", "none"), ("admet", "admet-x"))},
}


def tdc_suite(work: Path, rule: dict, new: str) -> dict[str, list[float]]:
    """Suite 1: per task, r of each of the rule's seeds both arms finished (validation
    cross-fitted under 2,000 rows); W/tdc/<new arm folder> against W/tdc/scratch."""
    from graphnorm.bench.tdc_versus import versus
    from graphnorm.data.tdc import admet_group_dir

    base, folder = rule["tdc"]
    table = versus(work / "tdc" / (folder or new), work / "tdc" / base, admet_group_dir(None),
                   rule="pooled")
    wanted = rule["seeds"]["tdc_validation"]
    out = {}
    for _, r in table.iterrows():
        pairs = [(b, a) for seed, b, a in zip(r["seed_list"], r["b_scores"], r["a_scores"])
                 if seed in wanted]
        if pairs:
            out[r["task"]] = improvements(r["metric"], *zip(*pairs), statistic=rule["statistic"])
    return out


def rule_g_reference() -> dict[str, float]:
    """Rule G's per-task r (the earlier backbone af181f17, 5 seeds): reported, not decided on."""
    rows = json.loads(RULE_G.read_text())
    return {r["task"]: relative_improvement(error_of(r["metric"], r["b_mean"]),
                                            error_of(r["metric"], r["a_mean"])) for r in rows}


def rule_arms(rule: dict, recipe: str, new: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """The (recipe, label) of the rule's base and fine-tuned arms in results.jsonl."""
    (rb, lb), (rn, ln) = rule["arms"]
    return (rb or recipe, lb), (rn or recipe, ln or new)


def suite_improvements(rows: list[dict], suite: str, arms: tuple, rule: dict
                       ) -> tuple[dict[str, list[float]], list]:
    """Per task (an ASAP endpoint, a corpus endpoint), r of each seed both ``arms`` (base,
    new; each a (recipe, label)) scored."""
    scored = defaultdict(dict)
    dropped = []
    for r in rows:
        arm = (r["recipe"], r["arm"])
        if r["suite"] != suite or arm not in arms or r["seed"] not in rule["seeds"][suite]:
            continue
        if "dropped" in r:
            dropped.append((r["task"], r["seed"], r["dropped"]))
            continue
        for name, value in r["scores"].items():
            task = name if suite == "asap" else r["task"]
            scored[(task, r["seed"], r["metric"])][arm] = value
    base, new = arms
    by_task = defaultdict(list)
    for (task, seed, metric), score in sorted(scored.items()):
        if base in score and new in score:
            by_task[task] += improvements(metric, [score[base]], [score[new]],
                                          statistic=rule["statistic"])
    return dict(by_task), sorted(set(dropped))


def _cost(rows: list[dict], suite: str, arms) -> dict:
    out = {}
    for recipe, arm in arms:
        mine = [r for r in rows if r["suite"] == suite and r["recipe"] == recipe
                and r["arm"] == arm and "cpu_s" in r]
        if mine:
            cpu = [r["cpu_s"] for r in mine]
            out[arm] = {"runs": len(cpu), "cpu_s_median": float(np.median(cpu)),
                        "cpu_s_total": float(np.sum(cpu)),
                        "load_median": float(np.median([r["load"] for r in mine]))}
    return out


def summarize(work: Path, out: Path, recipe: str, commit: str, rule_name: str = "L",
              new: str = "admet") -> dict:
    rule = RULES[rule_name]
    arms = rule_arms(rule, recipe, new)
    rows = [json.loads(x) for x in (work / "results.jsonl").read_text().splitlines() if x.strip()]
    suites, dropped = {}, {}
    if arms[1][0] == "admet" and (work / "tdc").is_dir():
        suites["tdc_validation"] = tdc_suite(work, rule, new)
    for suite in ("corpus", "asap"):
        suites[suite], dropped[suite] = suite_improvements(rows, suite, arms, rule)
    result = {"rule": f"experiments/results/pretrain/RULE.md, {rule_name}", "recipe": recipe,
              "arms": [arm for _, arm in arms], "statistic": rule["statistic"], "seeds": rule["seeds"],
              "commit": commit, "host": f"{platform.processor() or platform.machine()}, "
                                        f"{os.cpu_count()} CPUs", "suites": {}}
    if arms[0][0] != arms[1][0]:  # arms of two recipes (N)
        result["recipes"] = [recipe for recipe, _ in arms]
    if rule_name == "L":  # L's record as it was written (its arms and seeds were fixed)
        for k in ("arms", "statistic", "seeds"):
            result.pop(k)
    for name, by_task in suites.items():
        if not by_task:
            continue
        interval = pooled_interval(by_task)
        result["suites"][name] = {**interval, "verdict": pooled_verdict(interval),
                                  "per_task": {t: float(np.mean(v)) for t, v in by_task.items()},
                                  "dropped": dropped.get(name, [])}
    verdicts = [s["verdict"] for s in result["suites"].values()]
    result["adopted"] = len(verdicts) == 3 and verdicts.count("helps") >= 2 and "hurts" not in verdicts
    result["cost"] = {s: _cost(rows, s, arms) for s in ("corpus", "asap")}
    if recipe == "admet" and rule_name == "L":
        g = rule_g_reference()
        result["rule_g_reference"] = {"per_task": g, "mean": float(np.mean(list(g.values())))}
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "summary.md").write_text(markdown(result, rule_name, new))
    print(markdown(result, rule_name, new))
    return result


def markdown(result: dict, rule_name: str = "L", new: str = "admet") -> str:
    title = (f"# Rule {rule_name}, recipe `{result['recipe']}`: fine-tuned (`--init-from {new}`) "
             "against scratch (`--init-from none`)")
    if "recipes" in result:
        (rb, rn), (lb, ln) = result["recipes"], result["arms"]
        title = f"# Rule {rule_name}: `--recipe {rn}` ({ln}) against `--recipe {rb}` ({lb})"
    lines = [title, "",
             "| suite | tasks | (task, seed) pairs | mean relative improvement | 95 % interval | verdict |",
             "|---|---|---|---|---|---|"]
    for name, s in result["suites"].items():
        lines.append(f"| {name} | {s['tasks']} | {s['pairs']} | {s['mean']:+.4f} | "
                     f"[{s['low']:+.4f}, {s['high']:+.4f}] | {s['verdict']} |")
    lines += ["", f"**Adopted: {'yes' if result['adopted'] else 'no'}** (helps on at least two "
              "suites, hurts on none).", ""]
    for name, s in result["suites"].items():
        per = ", ".join(f"{t.split('/')[-1]} {v:+.3f}" for t, v in sorted(s["per_task"].items(),
                                                                           key=lambda kv: kv[1]))
        lines += [f"- {name}, per task (mean r over seeds): {per}"]
        if s["dropped"]:
            lines += [f"  - dropped: {s['dropped']}"]
    if "rule_g_reference" in result:
        g = result["rule_g_reference"]
        lines += [f"- for reference, rule G's runs (earlier backbone af181f17, 5 seeds, decide "
                  f"nothing): mean r over 13 tasks {g['mean']:+.4f}"]
    lines += [""]
    for suite, arms in result["cost"].items():
        for arm, c in arms.items():
            lines.append(f"- cost, {suite}, `--init-from {arm}`: {c['runs']} runs, median "
                         f"{c['cpu_s_median']:.0f} CPU-s per run (train + predict), "
                         f"{c['cpu_s_total'] / 3600:.2f} CPU-h in all, load average "
                         f"{c['load_median']:.1f}")
    lines += ["", f"Code {result['commit'][:8]}; {result['host']}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("tables", "run", "summary"))
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--suite", choices=("corpus", "asap"))
    parser.add_argument("--arm", help="run: what --init-from is given (none, admet, a "
                        "checkpoint path); summary: the fine-tuned arm's label")
    parser.add_argument("--label", help="run: the arm's name in results.jsonl when --arm is "
                        "a path (default: --arm)")
    parser.add_argument("--rule", default="L", choices=tuple(RULES))
    parser.add_argument("--recipe", default="admet", choices=("admet", "auto"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--seeds", type=int, nargs="+", help="run: only these seeds")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.step == "tables":
        asap_tables(args.work)
        print(json.dumps(corpus_tables(args.work), indent=1))
    elif args.step == "run":
        run_suite(args.work, args.suite, args.arm, args.recipe, args.seeds, args.label)
    else:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=ROOT).stdout.strip()
        ledger_asap(args.work, commit, args.rule)
        summarize(args.work, args.out, args.recipe, commit, args.rule, args.arm or "admet")


if __name__ == "__main__":
    main()
