"""What the default and the boosted trees cost a user, first run and per seed, on TDC tasks.

For each task, in a scratch folder with its own empty feature cache, four commands a user
would type (``graphnorm benchmark --suite tdc-admet --seeds 1``, one thread):

- ``gbm cold``: ``--models gbm --tree-features maplight+admet`` on an empty cache (features
  computed inside), then ``gbm warm``: the same again, features cached;
- ``default cold``: ``--recipe admet`` on another empty cache, then ``default warm``.

Each command's process CPU-s (user + system, imports included) is measured from outside;
``metrics.json`` gives the runs' own ``cpu_time_s`` (from the start of training, imports
excluded) and the Graphormer member's, whence CPU-min per 1,000 training molecules (issue
35's member target) and the ratio default / gbm (its ≤ 3x target on tables below 2,000 rows).
Tasks run ``--jobs`` at a time (one thread each; 2 on 2 cores did not change CPU-s: dili
27.6 vs 28.0 CPU-s alone and in a pair, session 26).

    python experiments/tdc_default_cost.py --tasks dili,herg --jobs 2 --out experiments/results/tdc_admet/cost/default_cost.md

``--seeds 5`` measures the official protocol as a user runs it instead: per task one command
per variant with ``--seeds 5`` on an empty feature cache, its process CPU-s divided by 5. Early
stopping makes the Graphormer's steps differ by seed, which seed 0 alone does not show.
``--board DIR`` keeps the default's runs there (a board of the code measured).

    python experiments/tdc_default_cost.py --seeds 5 --board experiments/results/tdc_admet/board29 --out experiments/results/tdc_admet/cost/default_cost29.md

``--default-flags '--init-from admet'`` measures fine-tuning the shipped backbone instead
(issue 58's bound: <= 3x gbm on a table of ~1,000 molecules).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from graphnorm.provenance import code_sha, cpu_model
from graphnorm.run_folder import read_metrics

SMALL = ("bbb_martins bioavailability_ma caco2_wang clearance_hepatocyte_az clearance_microsome_az "
         "cyp2c9_substrate_carbonmangels cyp2d6_substrate_carbonmangels "
         "cyp3a4_substrate_carbonmangels dili half_life_obach herg hia_hou pgp_broccatelli "
         "vdss_lombardo").split()
# gbm as the default's member is: refitted on train + validation (session 31, refit31/RULE.md)
VARIANTS = {"gbm": ["--models", "gbm", "--tree-features", "maplight+admet", "--tree-refit"],
            "default": ["--recipe", "admet"]}


def run_command(task: str, variant: str, out: Path, cache: Path, seeds: int = 1) -> float:
    """One benchmark command; returns its process CPU-s (children's rusage, from outside)."""
    cmd = [sys.executable, "-m", "graphnorm.cli", "benchmark", "--suite", "tdc-admet", "--tasks", task,
           *VARIANTS[variant], "--seeds", str(seeds), "--threads", "1", "--jobs", "1", "--no-progress",
           "--cache-root", str(cache), "--out", str(out)]
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".log"), "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: see {out.with_suffix('.log')}")
    return usage.ru_utime + usage.ru_stime


def runs(out: Path, task: str) -> dict:
    """The seed-0 run's metrics and, for an ensemble, its Graphormer member's."""
    found = sorted((out / task / "runs").glob("*/seed0/metrics.json"))
    if len(found) != 1:
        raise SystemExit(f"{out / task / 'runs'}: expected one seed0 run, found {len(found)}")
    run = found[0].parent
    members = (read_metrics(p.parent) for p in sorted(run.glob("*/metrics.json")))
    member = next((m for m in members if m.get("model") == "graphormer"), None)
    sizes = json.loads((run / "data_report.json").read_text())["split_sizes"] \
        if (run / "data_report.json").is_file() else None
    return dict(run=read_metrics(run), member=member, train=(sizes or {}).get("train"))


def measure(task: str, scratch: Path) -> dict:
    row = {"task": task, "load_start": os.getloadavg()[0]}
    for variant in VARIANTS:
        cache = scratch / task / f"cache_{variant}"
        shutil.rmtree(cache, ignore_errors=True)
        for temp in ("cold", "warm"):
            out = scratch / task / f"{variant}_{temp}"
            shutil.rmtree(out, ignore_errors=True)
            row[f"{variant}_{temp}_process"] = run_command(task, variant, out, cache)
            found = runs(out, task)
            row[f"{variant}_{temp}_run"] = found["run"]["cpu_time_s"]
            if variant == "default" and temp == "warm":
                m = found["member"]
                row.update(member=m["cpu_time_s"], steps=m["steps"], train=found["train"],
                           test=found["run"]["test_" + found["run"]["metric"]])
    row["load_end"] = os.getloadavg()[0]
    print(json.dumps(row), flush=True)
    return row


def measure_protocol(task: str, scratch: Path, seeds: int, board: Path | None) -> dict:
    """Each variant's ``--seeds`` command on an empty cache: process CPU-s per seed, and the
    default's runs (Graphormer steps and CPU-s per seed, from metrics.json)."""
    row = {"task": task, "load_start": os.getloadavg()[0], "seeds": seeds}
    for variant in VARIANTS:
        cache = scratch / task / f"cache_{variant}"
        shutil.rmtree(cache, ignore_errors=True)
        out = board if variant == "default" and board is not None else scratch / task / variant
        shutil.rmtree(out / task, ignore_errors=True)
        row[f"{variant}_process"] = run_command(task, variant, out, cache, seeds) / seeds
        found = [read_metrics(p.parent) for p in sorted((out / task / "runs").glob("*/seed*/metrics.json"))]
        if len(found) != seeds:
            raise SystemExit(f"{out / task}: expected {seeds} runs, found {len(found)}")
        row[f"{variant}_run"] = sum(m["cpu_time_s"] for m in found) / seeds
        if variant == "default":
            members = [read_metrics(p.parent) for p in
                       sorted((out / task / "runs").glob("*/seed*/model_0/metrics.json"))]
            row.update(steps=[m["steps"] for m in members], member=[m["cpu_time_s"] for m in members],
                       train=runs(out, task)["train"])
    row["load_end"] = os.getloadavg()[0]
    print(json.dumps(row), flush=True)
    return row


def _markdown(head: str, lines: list[str]) -> str:
    return "\n".join([head, "|" + "---|" * (head.count("|") - 1), *lines]) + "\n"


def seeds_table(rows: list[dict]) -> str:
    """The ``--seeds`` measurement: what each seed of the protocol costs, as a user pays it."""
    lines = []
    for r in rows:
        member = sum(r["member"]) / len(r["member"])
        lines.append(
            f"| {r['task']} | {r['train']} | {', '.join(map(str, r['steps']))} | {member:.1f} | "
            f"{member / 60 / (r['train'] / 1000):.2f} | {r['gbm_process']:.1f} / {r['gbm_run']:.1f} | "
            f"{r['default_process']:.1f} / {r['default_run']:.1f} | "
            f"{r['default_process'] / r['gbm_process']:.1f}x | "
            f"{r['load_start']:.1f}-{r['load_end']:.1f} |")
    return _markdown("| task | training molecules | member steps by seed | member CPU-s, mean | "
                     "CPU-min per 1,000, mean | gbm: process / run CPU-s per seed | default: "
                     "process / run | ratio (process) | load start-end |", lines)


def table(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        per_k = r["member"] / 60 / (r["train"] / 1000) if r.get("train") else float("nan")
        lines.append(
            f"| {r['task']} | {r['train']} | {r['steps']} | {r['member']:.1f} | {per_k:.2f} | "
            f"{r['gbm_warm_run']:.1f} / {r['gbm_warm_process']:.1f} | "
            f"{r['default_warm_run']:.1f} / {r['default_warm_process']:.1f} | "
            f"{r['default_warm_run'] / max(r['gbm_warm_run'], 0.1):.1f}x | "
            f"{r['gbm_cold_process']:.1f} | {r['default_cold_process']:.1f} | "
            f"{r['default_cold_process'] / r['gbm_cold_process']:.1f}x | "
            f"{r['load_start']:.1f}-{r['load_end']:.1f} |")
    return _markdown("| task | training molecules | member steps | member CPU-s | CPU-min per "
                     "1,000 | gbm warm: run / process CPU-s | default warm: run / process | warm "
                     "ratio (run) | gbm cold: process | default cold: process | cold ratio "
                     "(process) | load start-end |", lines)


def protocol_table(rows: list[dict], seeds: int = 5) -> str:
    """Per seed over the official protocol: one cold command, then ``seeds - 1`` warm ones
    (process CPU-s, as if each seed were its own command)."""
    lines = ["| task | default, 5-seed protocol, CPU-s per seed | gbm, same | ratio |", "|---|---|---|---|"]
    for r in rows:
        default, gbm = ((r[f"{v}_cold_process"] + (seeds - 1) * r[f"{v}_warm_process"]) / seeds
                        for v in ("default", "gbm"))
        lines.append(f"| {r['task']} | {default:.1f} | {gbm:.1f} | {default / gbm:.1f}x |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default=",".join(SMALL))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/default_cost"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seeds", type=int, default=1,
                    help="above 1: the whole protocol, one command per variant and task")
    ap.add_argument("--board", type=Path, help="with --seeds: keep the default's runs here")
    ap.add_argument("--default-flags", default="",
                    help="more flags of the default variant, e.g. '--init-from admet' (fine-tuning)")
    ap.add_argument("--final", action="store_true",
                    help="pass --final: score test.csv (and append to the suite's test ledger)")
    args = ap.parse_args()
    if args.final:  # without it the suite scores validation only
        for flags in VARIANTS.values():
            flags.append("--final")
    VARIANTS["default"].extend(args.default_flags.split())
    tasks = args.tasks.split(",")
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda t: measure(t, args.scratch) if args.seeds == 1 else
                             measure_protocol(t, args.scratch, args.seeds, args.board), tasks))
    flags = ((f" --default-flags '{args.default_flags}'" if args.default_flags else "")
             + f" --seeds {args.seeds}" + (f" --board {args.board}" if args.board else "")
             + (" --final" if args.final else ""))
    text = (f"command: `python experiments/tdc_default_cost.py --tasks {args.tasks} --jobs {args.jobs}"
            f"{flags} --out {args.out}` ({code_sha()[:7]}, {cpu_model()}, one thread per command)\n\n"
            + (table(rows) + "\n" + protocol_table(rows) if args.seeds == 1 else seeds_table(rows)))
    (args.scratch / "rows.json").write_text(json.dumps(rows, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
