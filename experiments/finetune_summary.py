"""RULE.md L's verdicts from ``W/results.jsonl`` (experiments/finetune_default.py) and rule G's
TDC validation summary: one pooled interval per suite, the decision, and the cost.

Writes ``OUT/summary.json`` and ``OUT/summary.md``.
"""
from __future__ import annotations

import json
import os
import platform
from collections import defaultdict
from pathlib import Path

import numpy as np

from graphnorm.bench.pooled import error_of, pooled_interval, pooled_verdict, relative_improvement

ROOT = Path(__file__).resolve().parents[1]
SUITE_SEEDS = {"corpus": (0,), "asap": (0, 1, 2)}  # RULE.md L as amended: corpus seed 0 only
RULE_G = ROOT / "experiments" / "results" / "pretrain" / "rule_g" / "versus_small.json"


def tdc_suite(work: Path) -> dict[str, list[float]]:
    """Suite 1 (amended): per task, r of each seed both selection suites finished
    (A = fine-tuned, B = scratch), validation cross-fitted under 2,000 rows."""
    from graphnorm.bench.tdc_versus import versus
    from graphnorm.data.tdc import admet_group_dir

    table = versus(work / "tdc" / "pre-9c04996f", work / "tdc" / "scratch", admet_group_dir(None),
                   rule="pooled")
    return {r["task"]: [relative_improvement(error_of(r["metric"], b), error_of(r["metric"], a))
                        for a, b in zip(r["a_scores"], r["b_scores"])] for _, r in table.iterrows()}


def rule_g_reference() -> dict[str, float]:
    """Rule G's per-task r (the earlier backbone af181f17, 5 seeds): reported, not decided on."""
    rows = json.loads(RULE_G.read_text())
    return {r["task"]: relative_improvement(error_of(r["metric"], r["b_mean"]),
                                            error_of(r["metric"], r["a_mean"])) for r in rows}


def run_suite(rows: list[dict], suite: str, recipe: str) -> tuple[dict[str, list[float]], list]:
    """Per task (an ASAP endpoint, a corpus endpoint), r of each seed both arms scored."""
    arms = defaultdict(dict)
    dropped = []
    for r in rows:
        if r["suite"] != suite or r["recipe"] != recipe or r["seed"] not in SUITE_SEEDS[suite]:
            continue
        if "dropped" in r:
            dropped.append((r["task"], r["seed"], r["dropped"]))
            continue
        for name, value in r["scores"].items():
            task = name if suite == "asap" else r["task"]
            arms[(task, r["seed"])][r["arm"]] = error_of(r["metric"], value)
    by_task = defaultdict(list)
    for (task, seed), e in sorted(arms.items()):
        if "none" in e and "admet" in e:
            by_task[task].append(relative_improvement(e["none"], e["admet"]))
    return dict(by_task), sorted(set(dropped))


def _cost(rows: list[dict], suite: str, recipe: str) -> dict:
    out = {}
    for arm in ("none", "admet"):
        cpu = [r["cpu_s"] for r in rows if r["suite"] == suite and r["recipe"] == recipe
               and r["arm"] == arm and "cpu_s" in r]
        load = [r["load"] for r in rows if r["suite"] == suite and r["recipe"] == recipe
                and r["arm"] == arm and "load" in r]
        if cpu:
            out[arm] = {"runs": len(cpu), "cpu_s_median": float(np.median(cpu)),
                        "cpu_s_total": float(np.sum(cpu)), "load_median": float(np.median(load))}
    return out


def summarize(work: Path, out: Path, recipe: str, commit: str) -> dict:
    rows = [json.loads(x) for x in (work / "results.jsonl").read_text().splitlines() if x.strip()]
    suites, dropped = {}, {}
    if recipe == "admet" and (work / "tdc").is_dir():
        suites["tdc_validation"] = tdc_suite(work)
    for suite in ("corpus", "asap"):
        suites[suite], dropped[suite] = run_suite(rows, suite, recipe)
    result = {"rule": "experiments/results/pretrain/RULE.md, L", "recipe": recipe,
              "commit": commit, "host": f"{platform.processor() or platform.machine()}, "
                                        f"{os.cpu_count()} CPUs", "suites": {}}
    for name, by_task in suites.items():
        if not by_task:
            continue
        interval = pooled_interval(by_task)
        result["suites"][name] = {**interval, "verdict": pooled_verdict(interval),
                                  "per_task": {t: float(np.mean(v)) for t, v in by_task.items()},
                                  "dropped": dropped.get(name, [])}
    verdicts = [s["verdict"] for s in result["suites"].values()]
    result["adopted"] = len(verdicts) == 3 and verdicts.count("helps") >= 2 and "hurts" not in verdicts
    result["cost"] = {s: _cost(rows, s, recipe) for s in ("corpus", "asap")}
    if recipe == "admet":
        g = rule_g_reference()
        result["rule_g_reference"] = {"per_task": g, "mean": float(np.mean(list(g.values())))}
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "summary.md").write_text(markdown(result))
    print(markdown(result))
    return result


def markdown(result: dict) -> str:
    lines = [f"# Rule L, recipe `{result['recipe']}`: fine-tuned (`--init-from admet`) against "
             "scratch (`--init-from none`)", "",
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
