"""Screening throughput of ``graphnorm predict``: molecules per second and peak memory for
10^4 .. 10^6 ZINC250k rows, one process (one thread) and ``--jobs 2``, beside Chemprop 2.3.1's
``predict`` on the same rows when a Chemprop venv is given.

    python experiments/bench_screening.py                       # trains its models, ~35 min
    python experiments/bench_screening.py --checkpoint runs/x   # an existing run instead
    python experiments/bench_screening.py --runs graph:10000:1 gbm:10000:1 --code /tmp/old \
        --tag before                                            # another checkout's graphnorm

Models (trained here with the CLI on 1,200 ZINC molecules with RDKit's Crippen logP, a few
hundred steps: training length does not change prediction cost):

- ``graph``: what ``graphnorm train --data`` makes by default: the small-table recipe's
  Graphormer, RDKit descriptors included, and the gbm member (--forest-member is on by default);
- ``single``: that Graphormer alone (--no-forest-member), the single model of issue 36's target;
- ``single-fast``: the same with the fast descriptor set (``--descriptors fast``: RDKit's C++
  descriptors, 121 numbers, instead of the 205 of RDKit's 2D list);
- ``ensemble``: three of those plus the Morgan-count random forest (--forest-member);
- ``fast``: the tiny Graphormer without descriptors, the one run up to 10^6 rows;
- ``gbm``: the LightGBM tree model on MapLight features (``--model gbm``: Morgan and Avalon
  counts, ErG and all 217 RDKit descriptors), the ADMET campaign's member.

Every run is a fresh ``graphnorm predict`` process (start-up and model loading included),
``OMP_NUM_THREADS=1``. Peak memory: the sum of the resident set sizes of the command's
process tree (main + workers), sampled every 0.2 s, and the largest single process (wait4's
ru_maxrss). Results: experiments/results/screening/screening.{json,md}.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR", REPO.parent / "shared" / "datasets"))
OUT = REPO / "experiments" / "results" / "screening"
# (model, rows, jobs) measured by default: ~30 min on 2 busy cores; --full adds FULL
PLAN = [("graph", 10_000, 1), ("graph", 10_000, 2), ("ensemble", 10_000, 1),
        ("fast", 10_000, 1), ("fast", 100_000, 1), ("fast", 100_000, 2), ("fast", 1_000_000, 2)]
FULL = [("ensemble", 10_000, 2), ("graph", 100_000, 2), ("ensemble", 100_000, 2)]
# the machine is shared: 10^6 rows only when 10^5 rows with as many processes took less
# (so 10^6 takes under ~30 min), Chemprop's 10^5 only when its 10^4 took under a minute
MILLION_IF_UNDER_S, CHEMPROP_TENFOLD_IF_UNDER_S = 180, 60


def zinc_smiles(name: str, n: int | None = None) -> list[str]:
    with gzip.open(RAW / "zinc" / name, "rt") as f:
        return [line.strip() for k, line in enumerate(f) if n is None or k < n]


def write_rows(path: Path, n: int, library: list[str]) -> Path:
    """``n`` rows of ZINC250k SMILES, repeated when n exceeds the library."""
    if not path.exists():
        with open(path, "w") as f:
            f.write("smiles\n")
            for k in range(n):
                f.write(library[k % len(library)] + "\n")
    return path


def training_table(path: Path) -> Path:
    from rdkit import Chem
    from rdkit.Chem import Crippen

    rows = ["smiles,logp"]
    for s in zinc_smiles("jtvae_test.txt.gz", 1200):
        rows.append(f"{s},{Crippen.MolLogP(Chem.MolFromSmiles(s)):.3f}")
    path.write_text("\n".join(rows) + "\n")
    return path


def graphnorm_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "graphnorm.cli", *map(str, args)]


def train_models(work: Path, names: list[str], steps: int) -> dict[str, Path]:
    table = training_table(work / "train.csv")
    common = ["--data", table, "--target-columns", "logp", "--max-steps", steps, "--no-progress",
              "--cache-root", work / "cache", "--threads", 1]
    models = {"graph": ["--ensemble", 1],
              "ensemble": ["--ensemble", 3, "--forest-member"],
              "fast": ["--ensemble", 1, "--preset", "tiny", "--no-descriptors", "--no-forest-member"],
              "single": ["--ensemble", 1, "--no-forest-member"],
              "single-fast": ["--ensemble", 1, "--no-forest-member", "--descriptors", "fast"],
              "gbm": ["--model", "gbm"]}
    out = {}
    for name, extra in ((n, models[n]) for n in names):
        run = work / name
        if not run.exists():
            subprocess.run(graphnorm_cmd("train", *common, *extra, "--out", run), check=True,
                           stdout=subprocess.DEVNULL)
        out[name] = run
    return out


def measure(cmd: list[str], env: dict) -> dict:
    """Wall and CPU seconds, peak memory and load average of one command."""
    load_before = os.getloadavg()
    start = time.perf_counter()
    log = tempfile.TemporaryFile()  # not a pipe: a chatty command would block on a full one
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log)
    watched, peak_tree = psutil.Process(proc.pid), 0
    while True:
        # wait4: this child's rusage, its reaped workers included (times; maxrss = the largest)
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        try:
            tree = [watched] + watched.children(recursive=True)
            peak_tree = max(peak_tree, sum(p.memory_info().rss for p in tree))
        except psutil.Error:  # a worker ended between listing and reading
            pass
        time.sleep(0.2)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rc": proc.returncode,
            "stderr_tail": _tail(log),
            "peak_tree_rss_mb": peak_tree / 2**20, "max_process_rss_mb": usage.ru_maxrss / 1024,
            "load_before": load_before, "load_after": os.getloadavg()}


def _tail(log, size: int = 400) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-size:]


def one_thread_env(code: Path = REPO) -> dict:
    """One thread; ``code``: the checkout whose graphnorm runs (this one unless --code)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONPATH=str(code))
    env.pop("GRAPHNORM_DEBUG", None)
    return env


def predict_graphnorm(checkpoint: Path, rows: Path, out: Path, jobs: int, code: Path) -> dict:
    out.unlink(missing_ok=True)
    cmd = graphnorm_cmd("predict", "--checkpoint", checkpoint, "--input", rows, "--output", out,
                        "--jobs", jobs)
    result = measure(cmd, one_thread_env(code))
    result["command"] = shlex.join(["graphnorm", *cmd[3:]])
    result["rows_written"] = count_lines(out) - 1 if out.exists() else 0
    out.unlink(missing_ok=True)  # 10^6 rows of output: not kept
    return result


def count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f)


# --- Chemprop (a separate venv: its torch and RDKit, not graphnorm's) -------------------------
def chemprop_model(venv: Path, work: Path) -> Path | None:
    model = work / "chemprop"
    found = sorted(model.rglob("best*.pt"))
    if found:
        return found[0]
    table = training_table(work / "train.csv")
    cmd = [str(venv / "bin" / "chemprop"), "train", "--data-path", str(table), "--task-type",
           "regression", "--smiles-columns", "smiles", "--target-columns", "logp", "--epochs", "5",
           "--num-workers", "0", "--output-dir", str(model)]
    subprocess.run(cmd, check=True, env=one_thread_env(), stdout=subprocess.DEVNULL)
    found = sorted(model.rglob("best*.pt"))
    return found[0] if found else None


def predict_chemprop(venv: Path, model: Path, rows: Path, out: Path) -> dict:
    out.unlink(missing_ok=True)
    cmd = [str(venv / "bin" / "chemprop"), "predict", "--test-path", str(rows), "--model-paths",
           str(model), "--smiles-columns", "smiles", "--preds-path", str(out), "--num-workers", "0"]
    result = measure(cmd, one_thread_env())
    result["command"] = shlex.join(["chemprop", *cmd[1:]])
    result["rows_written"] = count_lines(out) - 1 if out.exists() else 0
    out.unlink(missing_ok=True)
    return result


# --- report ------------------------------------------------------------------------------
def environment(code: Path) -> dict:
    import rdkit
    import torch

    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "graphnorm"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    if code != REPO:  # an export (git archive) has no .git: the sha written beside it, or its path
        sha = (code / "GIT_SHA").read_text().strip() if (code / "GIT_SHA").exists() else str(code)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {"git_sha": sha, "graphnorm_tree_dirty": bool(dirty), "cpu": cpu,
            "cores": os.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "python": platform.python_version(), "torch": torch.__version__,
            "rdkit": rdkit.__version__, "command": shlex.join([sys.executable, *sys.argv])}


def markdown(results: list[dict], env: dict, notes: list[str]) -> str:
    lines = ["# Screening throughput: `graphnorm predict` on ZINC250k rows", "",
             f"`{env['command']}` at {env['git_sha'][:10]} on {env['cpu']} ({env['cores']} cores, "
             f"{env['memory_gb']} GB), torch {env['torch']}, RDKit {env['rdkit']}. One thread per "
             "process; wall time of a fresh process (start-up and model loading included).", "",
             "| model | rows | processes | molecules/s | per CPU-second | peak MB (tree) | "
             "peak MB (largest process) | load avg before → after |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['model']} | {r['rows']:,} | {r['jobs']} | {r['rows'] / r['wall_s']:,.0f} "
                     f"| {r['rows'] / max(r['cpu_s'], 1e-9):,.0f} | {r['peak_tree_rss_mb']:,.0f} | {r['max_process_rss_mb']:,.0f} "
                     f"| {r['load_before'][0]:.2f} → {r['load_after'][0]:.2f} |")
    lines += ["", "molecules/s: rows / wall seconds of the whole command; per CPU-second: rows / "
              "CPU seconds of the command and its workers (less sensitive to other load on the "
              "machine). peak MB (tree): the summed RSS of the command's processes, sampled every "
              "0.2 s; forked workers share the parent's pages and this sum counts them once per "
              "process, so with 2 processes it overstates. peak MB (largest process): ru_maxrss.", ""]
    lines += [f"- peak memory against rows: {line}" for line in memory_lines(results)]
    lines += ["", "Commands (one per row, rows file `rows_<N>.csv`):", ""]
    lines += [f"- {r['model']} {r['rows']:,} x{r['jobs']}: `{r['command']}`" for r in results]
    return "\n".join(lines + [""] + [f"- {n}" for n in notes] + [""])


def memory_lines(results: list[dict]) -> list[str]:
    """Largest-process peak per row count, for each model and process count run at several."""
    out = []
    for key in dict.fromkeys((r["model"], r["jobs"]) for r in results):
        runs = sorted((r for r in results if (r["model"], r["jobs"]) == key), key=lambda r: r["rows"])
        if len(runs) > 1:
            out.append(f"{key[0]} x{key[1]}: " + ", ".join(
                f"{r['max_process_rss_mb']:,.0f} MB at {r['rows']:,}" for r in runs))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, default=Path("/tmp/bench_screening"),
                   help="rows files, trained models, outputs (default /tmp/bench_screening)")
    p.add_argument("--checkpoint", type=Path, help="measure this run as 'graph' instead of training")
    p.add_argument("--rows", type=int, nargs="+", help="only these row counts")
    p.add_argument("--models", nargs="+", default=["graph", "ensemble", "fast"])
    p.add_argument("--runs", nargs="+", metavar="MODEL:ROWS:JOBS",
                   help="measure these instead of the default plan, e.g. gbm:10000:1")
    p.add_argument("--train-steps", type=int, default=300,
                   help="training steps of the models trained here (prediction cost does not depend on it)")
    p.add_argument("--code", type=Path, default=REPO,
                   help="run predict with this checkout's graphnorm (e.g. an export of main, for before/after)")
    p.add_argument("--tag", help="write screening_<tag>.{json,md} instead of screening.{json,md}")
    p.add_argument("--million", action="store_true",
                   help="run the 10^6-row lines whatever the 10^5 lines took")
    p.add_argument("--full", action="store_true", help="also the 10^5-row graph/ensemble runs")
    p.add_argument("--chemprop-venv", type=Path, default=Path("/tmp/chemprop-venv"),
                   help="a venv with chemprop==2.3.1 (skipped when absent)")
    p.add_argument("--chemprop-rows", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    library = zinc_smiles("jtvae_train.txt.gz")
    runs = [(m, int(n), int(j)) for m, n, j in (r.split(":") for r in args.runs)] if args.runs else None
    names = sorted({m for m, _, _ in runs}) if runs else args.models
    models = train_models(args.work, names, args.train_steps) if not args.checkpoint else {"graph": args.checkpoint}
    plan = runs or [(m, n, j) for m, n, j in PLAN + (FULL if args.full else []) if m in models
                    and m in args.models and (not args.rows or n in args.rows)]
    results, notes, env = [], [], environment(args.code)
    for model, n, jobs in plan:
        if n == 1_000_000 and not args.million:
            tenth = [r for r in results if (r["model"], r["rows"], r["jobs"]) == (model, 100_000, jobs)]
            if not tenth or tenth[0]["wall_s"] > MILLION_IF_UNDER_S:
                notes.append(f"{model}: 10^6 rows not run: 10^5 rows with {jobs} processes took "
                             f"{tenth[0]['wall_s']:.0f} s (> {MILLION_IF_UNDER_S} s)" if tenth
                             else f"{model}: 10^6 rows not run (no 10^5 run to time it by)")
                continue
        rows = write_rows(args.work / f"rows_{n}.csv", n, library)
        r = {"tool": "graphnorm", "model": model, "rows": n, "jobs": jobs,
             **predict_graphnorm(models[model], rows, args.work / f"out_{os.getpid()}.csv", jobs, args.code)}
        results.append(r)
        print(f"{model:9s} {n:>9,} x{jobs}: {n / r['wall_s']:7.0f} mol/s, peak {r['peak_tree_rss_mb']:6.0f} MB, "
              f"load {r['load_after'][0]:.2f}, rc {r['rc']}, {r['rows_written']:,} rows", flush=True)
    chemprop = args.chemprop_venv / "bin" / "chemprop"
    if chemprop.exists():
        model = chemprop_model(args.chemprop_venv, args.work)
        for n in args.chemprop_rows:
            tenth = [r for r in results if r["tool"] == "chemprop" and r["rows"] * 10 == n]
            if tenth and tenth[0]["wall_s"] > CHEMPROP_TENFOLD_IF_UNDER_S:
                notes.append(f"Chemprop {n:,} rows not run: {tenth[0]['rows']:,} took "
                             f"{tenth[0]['wall_s']:.0f} s (> {CHEMPROP_TENFOLD_IF_UNDER_S} s)")
                continue
            rows = write_rows(args.work / f"rows_{n}.csv", n, library)
            r = {"tool": "chemprop", "model": "chemprop 2.3.1 (defaults)", "rows": n, "jobs": 1,
                 **predict_chemprop(args.chemprop_venv, model, rows, args.work / "chemprop_out.csv")}
            results.append(r)
            print(f"chemprop  {n:>9,} x1: {n / r['wall_s']:7.0f} mol/s, peak {r['peak_tree_rss_mb']:6.0f} MB, "
                  f"rc {r['rc']}", flush=True)
    else:
        notes.append(f"Chemprop not measured: no {chemprop}")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"screening_{args.tag}" if args.tag else "screening"
    (args.out / f"{stem}.json").write_text(json.dumps({"environment": env, "notes": notes,
                                                         "results": results}, indent=2, allow_nan=False))
    text = markdown(results, env, notes)
    (args.out / f"{stem}.md").write_text(text)
    print("\n" + text)


if __name__ == "__main__":
    main()
