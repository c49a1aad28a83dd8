"""A pre-training table: ZINC250k training molecules (JT-VAE split) with RDKit descriptors as
regression targets, written as a CSV that ``graphnorm train --data`` reads like any user table.

Two target sets:

- ``--targets basic`` (the MolHIV fine-tuning campaign, ``results/ogbg-molhiv/
  pretrain_zinc_descriptors``): 14 cheap whole-molecule properties, ~1.7 ms per molecule.
- ``--targets rdkit2d`` (the shipped ``zinc250k`` backbone, ``graphnorm/pretrained/``): the
  RDKit 2D descriptor list the featurizer uses (`graphnorm.chem.descriptors`, signed-log),
  ~6 ms per molecule, without the descriptors that are (nearly) constant on ZINC: one value on
  more than 99 % of the molecules makes a standardized target of a few huge outliers.

Only the JT-VAE *training* file is read, so that no ZINC(-subset) validation or test molecule
is seen; ``--exclude TABLE ...`` also drops the molecules of other tables (the small-table
benchmark's ZINC tables), compared as RDKit canonical SMILES. No label of any benchmark is
used. The file is derived from the shared raw data, so it is written outside the
repository's tracked files (``data/derived/``, gitignored); rerun this to rebuild it.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/make_pretrain_table.py \\
        --targets rdkit2d --exclude data/derived/small/zinc_*.csv \\
        --out data/derived/zinc250k_rdkit2d.csv
"""
from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rdkit import Chem, rdBase
from rdkit.Chem import QED, Descriptors

from graphnorm.chem.descriptors import FeaturizationError, descriptor_names, rdkit_descriptors
from graphnorm.data.raw import ENV_RAW_DIR, find_raw_files, read_zinc_smiles

# Cheap, well-defined whole-molecule properties (about 1.7 ms per molecule together)
BASIC = ("MolLogP", "MolMR", "TPSA", "MolWt", "NumHDonors", "NumHAcceptors",
         "NumRotatableBonds", "RingCount", "NumAromaticRings", "FractionCSP3",
         "NumHeteroatoms", "LabuteASA", "BertzCT", "qed")
MODE_SHARE_MAX = 0.99  # rdkit2d: a descriptor with one value on more molecules is dropped


def describe_basic(smiles: str) -> list[float]:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return [float("nan")] * len(BASIC)
    return [QED.qed(mol) if n == "qed" else float(getattr(Descriptors, n)(mol)) for n in BASIC]


def describe_rdkit2d(smiles: str) -> list[float] | None:
    """The featurizer's descriptors of one SMILES; None when RDKit cannot give them all."""
    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    try:
        return rdkit_descriptors(mol, smiles)[0].tolist()
    except FeaturizationError:
        return None


def canonical(smiles: str) -> str | None:
    mol = Chem.MolFromSmiles(smiles)
    return Chem.MolToSmiles(mol) if mol is not None else None


def excluded_smiles(paths: list[Path]) -> set[str]:
    """Canonical SMILES of the molecules in ``paths`` (CSV tables with a ``smiles`` column)."""
    out: set[str] = set()
    with rdBase.BlockLogs():
        for path in paths:
            out.update(c for c in map(canonical, pd.read_csv(path)["smiles"]) if c)
    return out


def varied_columns(table: pd.DataFrame) -> list[str]:
    """The descriptor columns whose most common value covers at most MODE_SHARE_MAX of rows."""
    share = table.apply(lambda col: col.value_counts(normalize=True).iloc[0])
    return [c for c in table.columns if share[c] <= MODE_SHARE_MAX]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw-dir", default=os.environ.get(ENV_RAW_DIR))
    ap.add_argument("--targets", choices=("basic", "rdkit2d"), default="basic")
    ap.add_argument("--exclude", type=Path, nargs="*", default=[],
                    help="tables whose molecules (column smiles) are left out")
    ap.add_argument("--out", type=Path, default=Path("data/derived/zinc250k_descriptors.csv"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, help="first N molecules only (a quick try)")
    args = ap.parse_args()
    if not args.raw_dir:
        ap.error(f"no raw directory: pass --raw-dir or set {ENV_RAW_DIR}")
    smiles = read_zinc_smiles(find_raw_files("zinc-full", args.raw_dir))["train"][: args.limit]
    started = time.time()
    if args.exclude:
        drop = excluded_smiles(args.exclude)
        with rdBase.BlockLogs():
            keep = [s for s in smiles if canonical(s) not in drop]
        print(f"left out {len(smiles) - len(keep):,} molecules found in {len(args.exclude)} tables")
        smiles = keep
    if args.targets == "basic":
        describe, names = describe_basic, list(BASIC)
    else:
        describe, names = describe_rdkit2d, descriptor_names()
    with mp.get_context("spawn").Pool(args.workers) as pool:
        rows = pool.map(describe, smiles, chunksize=512)
    failed = [s for s, r in zip(smiles, rows) if r is None]
    if failed:
        print(f"{len(failed)} molecules without descriptors left out, e.g. {failed[:3]}")
    kept = [(s, r) for s, r in zip(smiles, rows) if r is not None]
    table = pd.DataFrame(np.array([r for _, r in kept], dtype=np.float32), columns=names)
    if args.targets == "rdkit2d":
        columns = varied_columns(table)
        print(f"{len(names) - len(columns)} near-constant descriptors dropped, {len(columns)} kept")
        table = table[columns]
    table.insert(0, "smiles", [s for s, _ in kept])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False, float_format="%.5g")
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(f"{args.out}: {len(table):,} molecules x {table.shape[1] - 1} descriptors in "
          f"{time.time() - started:.0f} s ({args.workers} workers); sha256 {digest}")


if __name__ == "__main__":
    main()
