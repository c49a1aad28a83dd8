"""A pre-training table: ZINC250k training molecules (JT-VAE split) with RDKit descriptors as
regression targets, written as a CSV that ``graphnorm train --data`` reads like any user table.

Why: the SepNorm paper's MolHIV gain is for a *pre-trained* Graphormer (PCQM4M HOMO-LUMO gap).
PCQM4M is not reachable here; supervised pre-training on computed molecular properties of
220k drug-like molecules is the closest thing we can do offline. No MolHIV molecule and no
HIV label is used. The file is derived from the shared raw data, so it is written outside the
repository's tracked files (default ``data/derived/``, gitignored); rerun this to rebuild it.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/make_pretrain_table.py \\
        --out data/derived/zinc250k_descriptors.csv
"""
from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import os
import time
from pathlib import Path

import pandas as pd
from rdkit import Chem
from rdkit.Chem import QED, Descriptors

from graphnorm.data.raw import ENV_RAW_DIR, find_raw_files, read_zinc_smiles

# Cheap, well-defined whole-molecule properties (about 1.7 ms per molecule together)
DESCRIPTORS = ("MolLogP", "MolMR", "TPSA", "MolWt", "NumHDonors", "NumHAcceptors",
               "NumRotatableBonds", "RingCount", "NumAromaticRings", "FractionCSP3",
               "NumHeteroatoms", "LabuteASA", "BertzCT", "qed")


def describe(smiles: str) -> list[float]:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return [float("nan")] * len(DESCRIPTORS)
    return [QED.qed(mol) if n == "qed" else float(getattr(Descriptors, n)(mol)) for n in DESCRIPTORS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw-dir", default=os.environ.get(ENV_RAW_DIR))
    ap.add_argument("--out", type=Path, default=Path("data/derived/zinc250k_descriptors.csv"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, help="first N molecules only (a quick try)")
    args = ap.parse_args()
    if not args.raw_dir:
        ap.error(f"no raw directory: pass --raw-dir or set {ENV_RAW_DIR}")
    smiles = read_zinc_smiles(find_raw_files("zinc-full", args.raw_dir))["train"][: args.limit]
    started = time.time()
    with mp.get_context("spawn").Pool(args.workers) as pool:
        rows = pool.map(describe, smiles, chunksize=512)
    table = pd.DataFrame(rows, columns=list(DESCRIPTORS))
    table.insert(0, "smiles", smiles)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False, float_format="%.6g")
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(f"{args.out}: {len(table):,} molecules x {len(DESCRIPTORS)} descriptors in "
          f"{time.time() - started:.0f} s ({args.workers} workers); sha256 {digest}")


if __name__ == "__main__":
    main()
