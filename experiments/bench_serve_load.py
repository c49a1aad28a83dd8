"""`graphnorm serve` under a bounded mixed load on loopback: do small requests wait for large ones?

    python experiments/bench_serve_load.py [--checkpoint RUN] [--clients 8] [--requests 200]
        [--slice-rows 64] [--name slices]

Starts the server (uvicorn, a subprocess, 127.0.0.1, one torch thread) and sends a seeded,
shuffled mix from ``--clients`` threads: 1-row requests (valid SMILES, or one that does not
parse), 2,000-row and 30,000-row bodies (ZINC molecules), bodies that are not JSON, wrong
types, random bytes as application/octet-stream. Prints p50/p95 of the small requests and
the status codes per kind; writes ``<out>/<name>.json`` with the load average, git sha,
hardware and the exact command. ``--slice-rows 100000`` gives every request one turn on the
model, i.e. the server before requests were sliced.

Without ``--checkpoint`` the model is the shipped ``zinc250k`` backbone (the small-table
recipe's 4 x 64 Graphormer, trained) cut to its ``MolLogP`` output: a real trained model of
the default size with one target, no training needed.
"""
from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import platform
import queue
import random
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SMALL_KINDS = ("small_valid", "small_invalid_smiles")
# share of requests per kind; the rest (large and malformed) competes with the small ones
MIX = {"small_valid": 0.55, "small_invalid_smiles": 0.10, "large_2000": 0.12,
       "oversize_30000": 0.03, "not_json": 0.05, "wrong_types": 0.05, "random_bytes": 0.10}
FALLBACK_SMILES = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "CC(C)Cc1ccc(cc1)C(C)C(=O)O",
                   "CN1CCC[C@H]1c1cccnc1", "O=C(O)c1ccccc1OC(C)=O", "CCN(CC)CC", "c1ccc2ccccc2c1"]


def logp_checkpoint(dest: Path) -> Path:
    """The shipped zinc250k backbone with its head cut to the MolLogP output."""
    import torch

    from graphnorm.pretrained import pretrained_path

    ckpt = torch.load(pretrained_path("zinc250k"), map_location="cpu", weights_only=True)
    block = ckpt["graphnorm"]
    k = block["task"]["targets"].index("MolLogP")
    state = ckpt["state_dict"]
    for name in ("model.head.weight", "model.head.bias"):
        state[name] = state[name][k:k + 1].clone()
    block["task"] = dict(block["task"], targets=["MolLogP"], num_tasks=1)
    block["model_config"] = dict(block["model_config"], num_tasks=1)
    block["target_mean"], block["target_std"] = [block["target_mean"][k]], [block["target_std"][k]]
    dest.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, dest / "best.ckpt")
    return dest / "best.ckpt"


def zinc_smiles(n: int) -> tuple[list[str], str]:
    raw = Path(os.environ.get("GRAPHNORM_RAW_DIR", REPO.parent / "shared" / "datasets"))
    path = raw / "zinc" / "jtvae_test.txt.gz"
    if not path.is_file():
        return (FALLBACK_SMILES * (n // len(FALLBACK_SMILES) + 1))[:n], "built-in list, repeated"
    with gzip.open(path, "rt") as f:
        smiles = [line.strip() for line in f if line.strip()]
    return (smiles * (n // len(smiles) + 1))[:n], f"{path.name} (ZINC test molecules)"


def request_plan(n: int, seed: int, smiles: list[str]) -> list[tuple[str, bytes, str]]:
    """(kind, body, content type) of every request, shuffled with ``seed``."""
    rng = random.Random(seed)
    counts = {kind: round(share * n) for kind, share in MIX.items()}
    counts["small_valid"] += n - sum(counts.values())
    plan = []
    for kind, count in counts.items():
        for _ in range(count):
            ctype = "application/json"
            if kind == "small_valid":
                body = json.dumps({"smiles": [rng.choice(smiles)]})
            elif kind == "small_invalid_smiles":
                body = json.dumps({"smiles": ["C1CC(" + rng.choice("NOS")]})
            elif kind == "large_2000":
                start = rng.randrange(len(smiles) - 2000)
                body = json.dumps({"smiles": smiles[start:start + 2000]})
            elif kind == "oversize_30000":
                body = json.dumps({"smiles": (smiles * 3)[:30_000]})
            elif kind == "not_json":
                body = '{"smiles": [CCO, ' + "x" * rng.randrange(10, 500)
            elif kind == "wrong_types":
                body = json.dumps(rng.choice([{"smiles": "CCO"}, {"smiles": [1, 2]}, ["CCO"],
                                              {"smile": ["CCO"]}, None]))
            else:
                body, ctype = rng.randbytes(rng.randrange(100, 20_000)), "application/octet-stream"
            plan.append((kind, body.encode() if isinstance(body, str) else body, ctype))
    rng.shuffle(plan)
    return plan


def post(port: int, body: bytes, ctype: str) -> tuple[int, float, bool]:
    """(status, seconds, whether the answer was JSON with a detail or rows)."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request("POST", "/predict", body=body, headers={"Content-Type": ctype})
        response = conn.getresponse()
        raw = response.read()
        status = response.status
    finally:
        conn.close()
    elapsed = time.perf_counter() - start
    try:
        answer = json.loads(raw)
        well_formed = isinstance(answer, dict) and ("detail" in answer or "rows" in answer)
    except ValueError:
        well_formed = False
    return status, elapsed, well_formed


def start_server(checkpoint: Path, slice_rows: int, log_path: Path) -> tuple[subprocess.Popen, int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "graphnorm.cli", "serve", "--checkpoint",
                                 str(checkpoint), "--port", str(port), "--threads", "1",
                                 "--slice-rows", str(slice_rows)],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                conn.close()
                return proc, port
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            sys.exit(f"the server did not start: {log_path.read_text()[-2000:]}")
        time.sleep(0.3)


def run_load(port: int, plan: list, clients: int) -> list[dict]:
    todo: queue.Queue = queue.Queue()
    for k, item in enumerate(plan):
        todo.put((k, *item))
    results, lock = [], threading.Lock()

    def client() -> None:
        while True:
            try:
                k, kind, body, ctype = todo.get_nowait()
            except queue.Empty:
                return
            try:
                status, seconds, well_formed = post(port, body, ctype)
            except OSError as err:  # a reset or timeout is a result too
                status, seconds, well_formed = f"{type(err).__name__}", float("nan"), False
            with lock:
                results.append({"k": k, "kind": kind, "status": status, "seconds": seconds,
                                "json_answer": well_formed, "bytes": len(body)})

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(results, key=lambda r: r["k"])


def quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def hardware() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in
                  Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
                 platform.processor()) if Path("/proc/cpuinfo").is_file() else platform.processor()
    return {"cpu": model, "cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}


def git_state() -> dict:
    def git(*args):
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip()
    return {"git_sha": git("rev-parse", "HEAD") or "unknown",
            "serve_code_uncommitted": bool(git("status", "--porcelain", "--", "graphnorm/serve"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", help="default: the zinc250k backbone cut to MolLogP")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--slice-rows", type=int, default=64, help="passed to graphnorm serve")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="slices", help="the JSON's file name (without .json)")
    ap.add_argument("--out", default=str(REPO / "experiments" / "results" / "serve_load"))
    args = ap.parse_args()

    smiles, source = zinc_smiles(30_000)
    plan = request_plan(args.requests, args.seed, smiles)
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = (Path(args.checkpoint) if args.checkpoint
                      else logp_checkpoint(Path(tmp) / "logp"))
        log_path = Path(tmp) / "server.log"
        load_before = os.getloadavg()
        proc, port = start_server(checkpoint, args.slice_rows, log_path)
        try:
            start = time.perf_counter()
            results = run_load(port, plan, args.clients)
            wall = time.perf_counter() - start
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        load_after = os.getloadavg()
        server_log = log_path.read_text(errors="replace")

    by_kind: dict = defaultdict(list)
    for r in results:
        by_kind[r["kind"]].append(r)
    small = [r["seconds"] for r in results if r["kind"] in SMALL_KINDS and r["status"] == 200]
    large = [r["seconds"] for r in by_kind["large_2000"] if r["status"] == 200]
    statuses = Counter(str(r["status"]) for r in results)
    summary = {
        "small_requests": {"n": len(small), "p50_s": quantile(small, 0.5),
                           "p95_s": quantile(small, 0.95), "max_s": max(small)},
        "large_2000_requests": {"n": len(large), "p50_s": quantile(large, 0.5),
                                "p95_s": quantile(large, 0.95)} if large else None,
        "status_codes": dict(sorted(statuses.items())),
        "status_codes_by_kind": {k: dict(Counter(str(r["status"]) for r in rs))
                                 for k, rs in sorted(by_kind.items())},
        "server_errors_5xx": sum(1 for r in results if str(r["status"]).startswith("5")),
        "answers_without_json": sum(1 for r in results if not r["json_answer"]),
        "server_log": {"bytes": len(server_log), "tracebacks": server_log.count("Traceback")},
        "wall_s": wall,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "setup": {"clients": args.clients, "requests": args.requests, "seed": args.seed,
                  "slice_rows": args.slice_rows, "mix": MIX, "smiles": source,
                  "model": args.checkpoint or "zinc250k backbone cut to MolLogP (4 x 64 "
                           "Graphormer, GINE branch; no descriptors)",
                  "server": "graphnorm serve, uvicorn, 127.0.0.1, --threads 1, OMP_NUM_THREADS=1"},
        "hardware": hardware(), **git_state(),
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{args.name}.json"
    path.write_text(json.dumps(summary, indent=2) + "\n")

    s = summary["small_requests"]
    print(f"{args.requests} requests, {args.clients} clients, slice {args.slice_rows} rows, "
          f"{wall:.1f} s; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"small requests (n={s['n']}): p50 {s['p50_s']:.3f} s, p95 {s['p95_s']:.3f} s, "
          f"max {s['max_s']:.3f} s")
    if large:
        print(f"2,000-row requests (n={len(large)}): p50 {statistics.median(large):.2f} s")
    for kind, codes in summary["status_codes_by_kind"].items():
        print(f"  {kind:22s} {codes}")
    print(f"5xx: {summary['server_errors_5xx']}, tracebacks in the server log: "
          f"{summary['server_log']['tracebacks']}; wrote {path}")


if __name__ == "__main__":
    main()
