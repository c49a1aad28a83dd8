"""Small tables of the size a chemist has, built from the offline raw data, for the
small-table benchmark (`experiments/results/small_tables/`).

    python experiments/make_small_tables.py --raw-dir ../shared/datasets --out data/derived/small

Writes (each with a sidecar ``<name>.json``: source file sha256, seed, rows, how built):
- ``zinc_logp_noisy_1k.csv``: 1,000 random ZINC250k training molecules (JT-VAE file), target
  ``logp_noisy`` = RDKit Crippen MolLogP + N(0, 0.4^2) noise: a measured-like regression
  table (logP measurements scatter by about that much between labs).
- ``zinc_qed_2k.csv``: 2,000 other ZINC molecules, target ``qed`` (RDKit QED, no noise): a
  smooth, non-additive target that no single descriptor gives away.
- ``molhiv_3k.csv``: 3,000 MoleculeNet HIV molecules, every tenth one active (300 actives
  sampled at random, 2,700 inactives): a classification table with enough actives that a
  10 % test split holds about 30 of them. Enriched from the original 3.5 % on purpose.

The files are derived data (gitignored under data/derived/), rebuilt in seconds.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def zinc_smiles(raw: Path) -> tuple[list[str], Path]:
    path = raw / "zinc" / "jtvae_train.txt.gz"
    with gzip.open(path, "rt") as f:
        return [line.strip() for line in f if line.strip()], path


def write(df: pd.DataFrame, out: Path, name: str, meta: dict) -> None:
    df.to_csv(out / f"{name}.csv", index=False)
    (out / f"{name}.json").write_text(json.dumps(dict(meta, rows=len(df)), indent=2) + "\n")
    print(f"{out / name}.csv: {len(df)} rows")


def main() -> None:
    from rdkit import Chem
    from rdkit.Chem import QED, Crippen

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw-dir", default="../shared/datasets")
    ap.add_argument("--out", default="data/derived/small")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    raw, out = Path(args.raw_dir), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    smiles, zinc_file = zinc_smiles(raw)
    picked = rng.choice(len(smiles), 3000, replace=False)
    mols = [(smiles[i], Chem.MolFromSmiles(smiles[i])) for i in picked]
    logp = [(s, Crippen.MolLogP(m) + rng.normal(0, 0.4)) for s, m in mols[:1000]]
    write(pd.DataFrame(logp, columns=["smiles", "logp_noisy"]), out, "zinc_logp_noisy_1k",
          {"source": str(zinc_file), "source_sha256": sha256(zinc_file), "seed": args.seed,
           "target": "Crippen MolLogP + N(0, 0.4^2)"})
    qed = [(s, QED.qed(m)) for s, m in mols[1000:]]
    write(pd.DataFrame(qed, columns=["smiles", "qed"]), out, "zinc_qed_2k",
          {"source": str(zinc_file), "source_sha256": sha256(zinc_file), "seed": args.seed,
           "target": "RDKit QED"})

    hiv_file = raw / "molhiv" / "HIV.csv.gz"
    hiv = pd.read_csv(hiv_file)
    hiv = hiv[[Chem.MolFromSmiles(s) is not None for s in hiv.smiles]]  # strict-sanitizable
    act = hiv[hiv.HIV_active == 1].sample(300, random_state=args.seed)
    ina = hiv[hiv.HIV_active == 0].sample(2700, random_state=args.seed)
    table = pd.concat([act, ina]).sample(frac=1.0, random_state=args.seed)
    write(table[["smiles", "HIV_active"]].reset_index(drop=True), out, "molhiv_3k",
          {"source": str(hiv_file), "source_sha256": sha256(hiv_file), "seed": args.seed,
           "target": "HIV_active, 300 actives + 2,700 inactives sampled at random"})


if __name__ == "__main__":
    main()
