"""Where does a ZINC model's error sit? Test MAE of molecules with and without a ring of more
than 6 atoms (penalized logP subtracts ~3.5 per ring atom beyond 6).

    python experiments/error_by_ring.py runs/a/best.ckpt runs/b/best.ckpt \
        --out experiments/results/recipe_search/error_by_ring.md
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch
from rdkit import Chem

from graphnorm.checkpoints import load_checkpoint
from graphnorm.train.datamodule import GraphDataModule
from graphnorm.train.evaluate import predict_loader


def largest_ring(smiles: str) -> int:
    mol = Chem.MolFromSmiles(smiles)  # keep a reference: RingInfo does not own the molecule
    rings = mol.GetRingInfo().AtomRings()
    return max((len(r) for r in rings), default=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--split", default="test", choices=["val", "test"])
    ap.add_argument("--out")
    args = ap.parse_args()
    dm = GraphDataModule("zinc-subset", 256, os.environ.get("GRAPHNORM_RAW_DIR"), progress=False)
    dm.setup()
    ds = dm.splits[args.split]
    macro = torch.tensor([largest_ring(ds[i].smiles) > 6 for i in range(len(ds))])
    lines = [f"# Error by largest ring, ZINC-subset {args.split} ({int(macro.sum())} of {len(ds)} "
             f"molecules have a ring > 6 atoms)", "",
             "| checkpoint | MAE all | MAE ring > 6 | MAE others | share of abs. error from ring > 6 |",
             "|---|---|---|---|---|"]
    for path in args.checkpoints:
        loaded = load_checkpoint(path)
        (pred,), y, _ = predict_loader([loaded], dm.loader(args.split, train=False))
        err = (pred - y).abs().squeeze(1)
        share = float(err[macro].sum() / err.sum())
        lines.append(f"| {path} | {err.mean():.4f} | {err[macro].mean():.4f} | {err[~macro].mean():.4f} "
                     f"| {share:.1%} |")
        print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
