"""Where one Graphormer member's CPU time goes: a finished run trained again under cProfile.

Reads RUN/metrics.json, trains its config again into a scratch folder (same seed, same
split) under cProfile, and splits the process's time into: start-up (imports before
``train``), optimizer steps (forward, backward, update), BatchNorm recalibration before each
validation, the validation passes themselves, checkpoint writing, and the rest (data set-up,
test predictions, plots). cProfile slows Python-heavy parts more than torch kernels, so read
the shares, not the seconds; ``metrics.json``'s own ``cpu_time_s`` (printed beside) counts
from the start of ``train``, imports excluded.

    python experiments/member_cost_profile.py RUN [RUN ...] --out experiments/results/tdc_admet/cost/profile.md
"""
from __future__ import annotations

import argparse
import os
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path

from graphnorm.run_folder import read_metrics

# (label, file suffix, function name): cumulative time of the first match
PARTS = (
    ("optimizer steps", "training_epoch_loop.py", "advance"),
    ("BN recalibration", "callbacks.py", "on_validation_epoch_start"),
    ("validation (all)", "evaluation_loop.py", "run"),
    ("checkpoints", "model_checkpoint.py", "_save_checkpoint"),
    ("train()", "graphnorm/train/run.py", "train"),
    # inside every forward pass (training, recalibration, validation): forward only
    ("attention bias", "graph/attention_bias.py", "forward"),
    ("random-walk PE", "graph/structural.py", "random_walk_pe"),
)


def profile_parts(prof: Path) -> tuple[float, dict]:
    """The profiled process's total time and each part's cumulative time."""
    stats = pstats.Stats(str(prof)).stats  # {(file, line, name): (cc, nc, tt, ct, callers)}
    total = max(ct for (_, _, _, ct, _) in stats.values())
    parts = {}
    for label, suffix, name in PARTS:
        times = [ct for (f, _, n), (_, _, _, ct, _) in stats.items() if f.endswith(suffix) and n == name]
        parts[label] = max(times) if times else 0.0
    return total, parts


def suite_table(path) -> Path:
    """A TDC suite run's table: where the run read it, or, for a run of a scratch cache that
    is gone (tdc_default_cost.py), the same table in today's cache (GRAPHNORM_CACHE), which
    the suite writes identically (callers that need it exact check its sha256)."""
    from graphnorm.data.cache import cache_root

    path = Path(path)
    return path if path.is_file() else cache_root() / "tdc" / "tables" / path.name


def write_rerun_config(run: Path, out: Path, config: Path) -> Path:
    """RUN's resolved config (from its metrics.json), to train again into ``out``: written
    to ``config`` (YAML, for ``graphnorm train --config``)."""
    import yaml

    cfg = dict(read_metrics(run)["config"], out=str(out))
    cfg.pop("resume", None)
    if cfg.get("data") and not Path(cfg["data"]).is_file():
        # a suite run's table lived in its scratch cache (tdc_default_cost.py): the same
        # table from today's cache (GRAPHNORM_CACHE), which the suite writes identically
        cfg.pop("cache_root", None)
        cfg["data"] = str(suite_table(cfg["data"]))
    config.write_text(yaml.safe_dump(cfg))
    return config


def profile_run(run: Path, scratch: Path) -> dict:
    metrics = read_metrics(run)
    prof = scratch / "prof.out"
    if prof.exists() and (scratch / "run" / "metrics.json").exists():  # --keep: profiled before
        return _result(run, metrics, scratch, None)
    config = write_rerun_config(run, scratch / "run", scratch / "config.yaml")
    cmd = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "graphnorm.cli", "train",
           "--config", str(config), "--no-progress"]
    before = os.times()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = os.times()
    child_cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return _result(run, metrics, scratch, child_cpu)


def _result(run: Path, metrics: dict, scratch: Path, child_cpu) -> dict:
    total, parts = profile_parts(scratch / "prof.out")
    rerun = read_metrics(scratch / "run")
    return dict(run=run, steps=metrics["steps"], cpu_recorded=metrics["cpu_time_s"],
                process_cpu_profiled=child_cpu, profiled_total=total, parts=parts,
                same_val=abs(rerun[f"val_{metrics['metric']}"] - metrics[f"val_{metrics['metric']}"]) < 1e-6)


def _task(run: Path) -> str:
    """A suite run's task: <bench>/<task>/runs/<variant>/seed<k>[/model_<m>] (an ensemble's
    Graphormer member lies one folder deeper)."""
    parts = run.parts[:-1] if run.name.startswith("model_") else run.parts
    return parts[-4] if len(parts) >= 4 else str(run)


def row(r: dict) -> str:
    p, total = r["parts"], r["profiled_total"]
    start = total - p["train()"]
    val_only = p["validation (all)"] - p["BN recalibration"]
    rest = p["train()"] - p["optimizer steps"] - p["validation (all)"] - p["checkpoints"]
    cells = [start, p["optimizer steps"], p["BN recalibration"], val_only, p["checkpoints"], rest]
    cells += [p["attention bias"], p["random-walk PE"]]
    shares = " | ".join(f"{100 * c / total:.0f} %" for c in cells)
    cpu = "-" if r["process_cpu_profiled"] is None else f"{r['process_cpu_profiled']:.0f}"
    return (f"| {_task(r['run'])} | {r['steps']} | {r['cpu_recorded']:.0f} | {cpu} | "
            f"{shares} | {'yes' if r['same_val'] else 'no'} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run folders holding metrics.json")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--keep", type=Path, help="keep each profile in KEEP/<task>-<seed>/ "
                    "(prof.out, run/) and reuse one found there")
    args = ap.parse_args()
    lines = ["| task | steps | CPU-s (metrics.json) | process CPU-s under cProfile | start-up | "
             "optimizer steps | BN recalibration | validation | checkpoints | rest | "
             "in all forwards: attention bias | random-walk PE | same val score |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    load = os.getloadavg()[0]
    for run in args.runs:
        if args.keep:
            scratch = args.keep / f"{_task(run)}-{run.name}"
            scratch.mkdir(parents=True, exist_ok=True)
            r = profile_run(run, scratch)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                r = profile_run(run, Path(tmp))
        lines.append(row(r))
        print(lines[-1], flush=True)
    text = (f"command: `python experiments/member_cost_profile.py {' '.join(map(str, args.runs))}`\n\n"
            f"load average at the start: {load:.2f}; shares of the profiled process's time\n\n"
            + "\n".join(lines) + "\n")
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
