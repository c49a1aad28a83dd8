"""RDKit 2D descriptors per molecule: RDKit's functions one by one (the old path) against
``graphnorm.chem.descriptor_values`` (shared intermediates once), CPU ms per molecule, and a
check that every value is bit for bit the same.

    python experiments/bench_descriptors.py                      # 1,000 ZINC250k test molecules
    python experiments/bench_descriptors.py --source hiv --n 4000 --every 10   # diverse: metals, salts

Both paths run on each molecule in turn (fresh molecules each), so caches and load affect
them alike; CPU time (time.process_time) is the figure, the load average is recorded with it.
Results: experiments/results/screening/descriptors_<source>.json.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR", REPO.parent / "shared" / "datasets"))


def molecules(source: str, n: int, every: int) -> list[str]:
    if source == "zinc":
        with gzip.open(RAW / "zinc" / "jtvae_test.txt.gz", "rt") as f:
            lines = [line.strip() for line in f]
    else:
        with gzip.open(RAW / "molhiv" / "HIV.csv.gz", "rt") as f:
            lines = [row["smiles"] for row in csv.DictReader(io.StringIO(f.read()))]
    return lines[::every][:n]


def one_by_one(mol, functions) -> np.ndarray:
    out = np.empty(len(functions))
    for k, (_, fn) in enumerate(functions):
        try:
            out[k] = float(fn(mol))
        except Exception:  # an error is NaN on both paths here; the tests compare the errors
            out[k] = np.nan
    return out


def main() -> None:
    from rdkit import Chem, RDLogger

    from graphnorm.chem.descriptor_values import descriptor_values, rdkit_descriptor_list
    from graphnorm.chem.descriptors import descriptor_functions

    from bench_screening import environment  # git sha, CPU, versions, this command

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", choices=["zinc", "hiv"], default="zinc")
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--every", type=int, default=1, help="take every k-th molecule")
    p.add_argument("--out", type=Path, default=REPO / "experiments" / "results" / "screening")
    args = p.parse_args()
    RDLogger.DisableLog("rdApp.*")
    smiles = [s for s in molecules(args.source, args.n, args.every) if Chem.MolFromSmiles(s)]
    sets = {"model inputs (descriptors.py)": descriptor_functions(),
            "all of _descList (tabular.py)": rdkit_descriptor_list()}
    load_before, report = os.getloadavg(), {}
    for label, functions in sets.items():
        old = new = 0.0
        mismatched = []
        for s in smiles:
            a, b = Chem.MolFromSmiles(s), Chem.MolFromSmiles(s)
            t = time.process_time()
            want = one_by_one(a, functions)
            old += time.process_time() - t
            t = time.process_time()
            got, _ = descriptor_values(b, functions)
            new += time.process_time() - t
            if not np.array_equal(got, want, equal_nan=True):
                mismatched.append(s)
        report[label] = {"descriptors": len(functions), "one_by_one_ms": 1e3 * old / len(smiles),
                         "shared_ms": 1e3 * new / len(smiles), "mismatched_molecules": mismatched}
        print(f"{label}: {len(functions)} descriptors, one by one {report[label]['one_by_one_ms']:.2f} "
              f"ms/mol, shared {report[label]['shared_ms']:.2f} ms/mol, "
              f"{len(mismatched)} of {len(smiles)} molecules differ", flush=True)
    report = {"environment": environment(REPO), "source": args.source, "molecules": len(smiles),
              "every": args.every,
              "load_before": load_before, "load_after": os.getloadavg(), "sets": report}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"descriptors_{args.source}.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
