"""The summary of RULE.md L, M, N and P (`python experiments/finetune_default.py summary`): each
rule's arms and seeds, the pooled verdict per suite, the decision, the cost, and the ASAP
ledger rows of the rule's test scorings. The runs are finetune_default.py's.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from graphnorm.bench.pooled import (error_of, improvements, pooled_interval, pooled_verdict,
                                    relative_improvement)


ROOT = Path(__file__).resolve().parents[1]
LEDGER = ROOT / "experiments" / "results" / "asap_admet" / "ledger.csv"
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
    # P: both arms the admet recipe from X, B as shipped, P with --backbone-lr 0.1
    "P": {"statistic": "bounded", "seeds": {"tdc_validation": (0, 1), "corpus": (3,),
                                            "asap": (9, 10, 11)}, "tdc": ("p-base", "blr0.1"),
          "arms": (("admet", "p-base"), ("admet", "blr0.1"))},
    # R: both arms the admet recipe as shipped, B from X, R from the longer-trained Y (--arm)
    "R": {"statistic": "bounded", "seeds": {"tdc_validation": (2, 3, 4), "corpus": (4,),
                                            "asap": (12, 13, 14)}, "tdc": ("r-base", None),
          "arms": (("admet", "r-base"), ("admet", None))},
}


def tdc_rows(work: Path) -> list[dict]:
    """Each finished (arm folder, task, seed) of W/tdc as one score row (cross-fitted on
    validation under 2,000 rows, as `versus` scores it), merged with the rows already kept in
    W/tdc_rows.jsonl: a row outlives the run folder whose member predictions it needs, so a
    suite half run on a lost machine resumes from its committed rows (RULE.md, N, session 51)."""
    from graphnorm.bench.tdc_versus import CROSSFIT_BELOW_ROWS, seed_scores, task_rows
    from graphnorm.data.tdc import TDC_ADMET_TASKS, admet_group_dir
    from graphnorm.run_folder import METRICS_FILE

    kept = work / "tdc_rows.jsonl"
    rows = {(r["folder"], r["task"], r["seed"]): r for r in
            (json.loads(x) for x in (kept.read_text().splitlines() if kept.exists() else [])
             if x.strip())}
    group = admet_group_dir(None)
    for task_dir in sorted((work / "tdc").glob("*/*")) if (work / "tdc").is_dir() else []:
        task, folder = task_dir.name, task_dir.parent.name
        if task not in TDC_ADMET_TASKS or not any(task_dir.glob(f"runs/*/seed*/{METRICS_FILE}")):
            continue  # not a task, or no seed finished yet
        crossfitted = task_rows(task, group) < CROSSFIT_BELOW_ROWS
        _, scores = seed_scores(task_dir, crossfitted)
        for seed, score in scores.items():
            rows[(folder, task, seed)] = {"folder": folder, "task": task, "seed": int(seed),
                                          "metric": TDC_ADMET_TASKS[task], "score": float(score),
                                          "crossfitted": crossfitted}
    ordered = [rows[k] for k in sorted(rows)]
    kept.write_text("".join(json.dumps(r) + "\n" for r in ordered))
    return ordered


def tdc_suite(work: Path, rule: dict, new: str) -> dict[str, list[float]]:
    """Suite 1: per task, r of each of the rule's seeds both arms finished (validation
    cross-fitted under 2,000 rows); W/tdc/<new arm folder> against W/tdc/<base folder>."""
    base, folder = rule["tdc"]
    folder = folder or new
    scores = defaultdict(dict)  # (folder, task) -> {seed: score}
    metric = {}
    for r in tdc_rows(work):
        scores[r["folder"], r["task"]][r["seed"]] = r["score"]
        metric[r["task"]] = r["metric"]
    out = {}
    for task in sorted(metric):
        a, b = scores.get((folder, task), {}), scores.get((base, task), {})
        pairs = [(b[s], a[s]) for s in rule["seeds"]["tdc_validation"] if s in a and s in b]
        if pairs:
            out[task] = improvements(metric[task], *zip(*pairs), statistic=rule["statistic"])
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
    if arms[1][0] == "admet" and ((work / "tdc").is_dir() or (work / "tdc_rows.jsonl").exists()):
        suites["tdc_validation"] = tdc_suite(work, rule, new)
    for suite in ("corpus", "asap"):
        suites[suite], dropped[suite] = suite_improvements(rows, suite, arms, rule)
    result = {"rule": f"experiments/results/pretrain/RULE.md, {rule_name}", "recipe": recipe,
              "arms": [arm for _, arm in arms], "statistic": rule["statistic"], "seeds": rule["seeds"],
              "commit": commit, "runs_code": sorted({r["code"] for r in rows if r.get("code")}),
              "host": f"{platform.processor() or platform.machine()}, "
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
    if rule_name == "N":
        result["non_inferiority"] = non_inferiority(result, [arm for _, arm in arms])
    if recipe == "admet" and rule_name == "L":
        g = rule_g_reference()
        result["rule_g_reference"] = {"per_task": g, "mean": float(np.mean(list(g.values())))}
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "summary.md").write_text(markdown(result, rule_name, new))
    print(markdown(result, rule_name, new))
    return result


def non_inferiority(result: dict, arms, margin: float = -0.03, cost_ratio: float = 0.2) -> dict:
    """RULE.md Q, asked of N's result: every suite's 95 % lower end at least ``margin``, and
    the new arm's median CPU-s per run at most ``cost_ratio`` of the base arm's on each suite
    whose rows record it; it decides only where N did not adopt."""
    base, new = arms
    lows = {name: s["low"] for name, s in result["suites"].items()}
    ratios = {suite: c[new]["cpu_s_median"] / c[base]["cpu_s_median"]
              for suite, c in result["cost"].items() if base in c and new in c}
    holds = (len(lows) == 3 and all(v >= margin for v in lows.values()) and bool(ratios)
             and all(v <= cost_ratio for v in ratios.values()))
    return {"rule": "experiments/results/pretrain/RULE.md, Q", "margin": margin,
            "cost_ratio_max": cost_ratio, "lower_ends": lows, "cost_ratios": ratios,
            "holds": holds, "adopted": holds and not result["adopted"]}


def markdown(result: dict, rule_name: str = "L", new: str = "admet") -> str:
    title = (f"# Rule {rule_name}, recipe `{result['recipe']}`: fine-tuned (`--init-from {new}`) "
             "against scratch (`--init-from none`)")
    if "recipes" in result:
        (rb, rn), (lb, ln) = result["recipes"], result["arms"]
        title = f"# Rule {rule_name}: `--recipe {rn}` ({ln}) against `--recipe {rb}` ({lb})"
    elif result.get("arms", ["none"])[0] != "none":  # two fine-tuned arms (P)
        lb, ln = result["arms"]
        title = f"# Rule {rule_name}, recipe `{result['recipe']}`: {ln} against {lb}"
    lines = [title, "",
             "| suite | tasks | (task, seed) pairs | mean relative improvement | 95 % interval | verdict |",
             "|---|---|---|---|---|---|"]
    for name, s in result["suites"].items():
        lines.append(f"| {name} | {s['tasks']} | {s['pairs']} | {s['mean']:+.4f} | "
                     f"[{s['low']:+.4f}, {s['high']:+.4f}] | {s['verdict']} |")
    verdicts = [s["verdict"] for s in result["suites"].values()]
    lines += ["", f"**Adopted: {'yes' if result['adopted'] else 'no'}** (the rule adopts what "
              f"helps on at least two suites and hurts on none; here it helps on "
              f"{verdicts.count('helps')} and hurts on {verdicts.count('hurts')}).", ""]
    q = result.get("non_inferiority")
    if q and not result["adopted"]:
        ends = ", ".join(f"{k} {v:+.4f}" for k, v in q["lower_ends"].items())
        ratios = ", ".join(f"{k} {v:.3f}" for k, v in q["cost_ratios"].items())
        lines += [f"**Rule Q (N not adopted): {'adopted' if q['adopted'] else 'not adopted'}** "
                  f"(every lower end >= {q['margin']:+.2f}: {ends}; median CPU-s ratio <= "
                  f"{q['cost_ratio_max']}: {ratios}).", ""]
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
            lines.append(f"- cost, {suite}, arm `{arm}`: {c['runs']} runs, median "
                         f"{c['cpu_s_median']:.0f} CPU-s per run (train + predict), "
                         f"{c['cpu_s_total'] / 3600:.2f} CPU-h in all, load average "
                         f"{c['load_median']:.1f}")
    ran = ", ".join(result.get("runs_code", [])) or "not recorded"
    lines += ["", f"Runs on code {ran}; summary at {result['commit'][:8]}; {result['host']}."]
    return "\n".join(lines) + "\n"


def ledger_asap(work: Path, commit: str, rule_name: str = "L") -> None:
    """One ledger row per ASAP test scoring of the rule's seeds not yet in the ledger (keyed
    by run)."""
    rows = [json.loads(x) for x in (work / "results.jsonl").read_text().splitlines() if x.strip()]
    LEDGER.parent.mkdir(parents=True, exist_ok=True)
    have = pd.read_csv(LEDGER)["run"].tolist() if LEDGER.exists() else []
    seeds = RULES[rule_name]["seeds"]["asap"]
    new = []
    for r in rows:
        arm = f"init-from-{r['arm']}" if rule_name in ("L", "M") else r["arm"]  # N, P: a label
        name = f"rule_{rule_name.lower()}/{r['recipe']}/{arm}/seed{r['seed']}"
        if r["suite"] != "asap" or name in have or "scores" not in r or r["seed"] not in seeds:
            continue
        new.append({"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "commit": r.get("code") or commit,  # the code the run ran on, where kept
                    "run": name, "command": r["command"],
                    **{f"mae_{k}": round(v, 4) for k, v in r["scores"].items()},
                    "aggregated_mae": round(float(np.mean(list(r["scores"].values()))), 4)})
    if new:
        pd.DataFrame(new).to_csv(LEDGER, mode="a", header=not LEDGER.exists(), index=False)
