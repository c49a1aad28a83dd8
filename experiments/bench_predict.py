"""Prediction latency and file throughput: one SMILES warm, and a 10k-row SMILES file.

    python experiments/bench_predict.py --checkpoint runs/x/best.ckpt [--rows 10000]

Targets (issue 3): one SMILES end to end < 50 ms warm; a 10k-row file < 30 s. The file
rows are ZINC-subset training molecules from $GRAPHNORM_RAW_DIR (default ../shared/datasets)
plus a few bad rows, written to a temporary .smi file and run through the CLI code path.
"""
from __future__ import annotations

import argparse
import gzip
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch


def zinc_smiles(raw: Path, n: int) -> list[str]:
    with gzip.open(raw / "zinc" / "jtvae_train.txt.gz", "rt") as f:
        rows = [line.strip() for line in f]
    idx = [int(i) for i in (raw / "zinc" / "train.index").read_text().strip().split(",")]
    return [rows[i] for i in idx[:n]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    raw = Path(os.environ.get("GRAPHNORM_RAW_DIR", Path(__file__).resolve().parents[2] / "shared" / "datasets"))

    t0 = time.perf_counter()
    from graphnorm import load_predictor
    from graphnorm.cli import main as cli_main

    predictor = load_predictor(args.checkpoint)
    load_s = time.perf_counter() - t0
    predictor.predict(["CCO"])  # warm-up
    single = []
    for s in ["CC(=O)Nc1ccc(O)cc1", "c1ccccc1", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"] * 10:
        t = time.perf_counter()
        predictor.predict([s])
        single.append(1000 * (time.perf_counter() - t))

    mols = zinc_smiles(raw, args.rows - 3) + ["not_a_smiles", "", "C1CC"]
    with tempfile.TemporaryDirectory() as tmp:
        smi, out = Path(tmp) / "mols.smi", Path(tmp) / "preds.csv"
        smi.write_text("\n".join(mols) + "\n")
        t, c = time.perf_counter(), time.process_time()
        rc = cli_main(["predict", "--checkpoint", args.checkpoint, "--input", str(smi), "--output", str(out)])
        file_s, file_cpu = time.perf_counter() - t, time.process_time() - c
        n_rows = sum(1 for _ in out.open()) - 1

    print(f"{'measure':44s} {'value':>12s} {'target':>10s}")
    print(f"{'load checkpoint (incl. imports)':44s} {load_s:10.2f} s")
    print(f"{'one SMILES end to end, warm (median of 30)':44s} {statistics.median(single):9.1f} ms {'< 50 ms':>10s}")
    print(f"{'one SMILES, worst of 30':44s} {max(single):9.1f} ms")
    print(f"{f'{len(mols)}-row .smi file -> CSV (CLI path)':44s} {file_s:10.2f} s {'< 30 s':>10s}")
    print(f"{'  CPU time of that (this process)':44s} {file_cpu:10.2f} s")
    print(f"{'load average (1 min) at the end':44s} {os.getloadavg()[0]:10.2f}")
    print(f"{'rows written / exit code':44s} {n_rows:>8d} / {rc}")
    print(f"threads: {torch.get_num_threads()}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
