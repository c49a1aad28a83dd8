"""Own data on real molecules: does the ensemble std rank errors, does the [VNode] embedding
carry information?

1. A table of the first N molecules of ZINC's JT-VAE test file (raw data dir) with targets
   RDKit computes: Crippen logP and TPSA (trained), QED and the ZINC benchmark's penalized
   logP (never trained on: probe targets). The table goes to --work, not into the repository.
2. ``train --data ... --target-columns logp tpsa --split scaffold --ensemble K``.
3. On the scaffold test split: Spearman of |ensemble error| vs ensemble std per target.
4. ``embed`` (model_0's final-norm [VNode]) for every molecule; a ridge probe and a 5-NN
   regressor fitted on the train split, scored on the test split, for each target, against
   the same probes on an untrained model of the same config and against the train mean.

    python experiments/own_data_demo.py --raw-dir ../shared/datasets --rows 2000 \
        --ensemble 5 --epochs 20 --out experiments/results/own_data
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch


def build_table(raw_dir: Path, rows: int, path: Path) -> dict:
    from rdkit import Chem
    from rdkit.Chem import QED, Descriptors

    from graphnorm.data.labels import zinc_label

    source = raw_dir / "zinc" / "jtvae_test.txt.gz"
    with gzip.open(source, "rt") as f:
        smiles = [line.strip() for _, line in zip(range(rows), f)]
    records = []
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        records.append({"smiles": s, "logp": Descriptors.MolLogP(mol), "tpsa": Descriptors.TPSA(mol),
                        "qed": QED.qed(mol), "penalized_logp": zinc_label(s)})
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(records).to_csv(path, index=False, float_format="%.5f")
    return {"source": str(source), "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
            "rows": rows, "table_sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def morgan(smiles) -> np.ndarray:
    """Morgan fingerprints (radius 2, 2048 bits): the chemist's reference representation."""
    from rdkit import Chem
    from rdkit.Chem import rdFingerprintGenerator

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    return np.stack([gen.GetFingerprintAsNumPy(Chem.MolFromSmiles(s)) for s in smiles]).astype(np.float32)


def probes(emb: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray) -> dict:
    from sklearn.linear_model import RidgeCV
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    ridge = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-3, 3, 13)))
    ridge.fit(emb[train], y[train])
    knn = make_pipeline(StandardScaler(), KNeighborsRegressor(5)).fit(emb[train], y[train])
    r, k = ridge.predict(emb[test]), knn.predict(emb[test])
    mean_mae = float(np.abs(y[test] - y[train].mean()).mean())
    return {"ridge_mae": round(float(np.abs(r - y[test]).mean()), 4),
            "ridge_r2": round(float(1 - ((r - y[test]) ** 2).sum() / ((y[test] - y[test].mean()) ** 2).sum()), 4),
            "knn5_mae": round(float(np.abs(k - y[test]).mean()), 4), "train_mean_mae": round(mean_mae, 4)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw-dir", required=True)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--ensemble", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default="runs/own_data_demo", help="table, runs (not committed)")
    ap.add_argument("--out", default="experiments/results/own_data")
    args = ap.parse_args(argv)
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.inference.embed import embed_smiles
    from graphnorm.train.ensemble import train_ensemble
    from graphnorm.models import build_model
    from graphnorm.inference.predict import Predictor
    from graphnorm.train.config import TrainConfig
    from graphnorm.provenance import code_sha

    work, out = Path(args.work), Path(args.out)
    start = time.time()
    data = build_table(Path(args.raw_dir), args.rows, work / "zinc_props.csv")
    cfg = TrainConfig(data=str(work / "zinc_props.csv"), target_columns=["logp", "tpsa"],
                      split="scaffold", preset=args.preset, max_epochs=args.epochs, batch_size=64,
                      lr=1e-3, ensemble=args.ensemble, seed=args.seed, threads=1, progress=False,
                      out=str(work / "run"), checkpoint_every_n_steps=10_000)
    report = train_ensemble(cfg)
    # embeddings of model_0 and of an untrained twin, probed on targets never trained on
    table = pd.read_csv(work / "zinc_props.csv")
    splits = json.loads((work / "run" / "splits.json").read_text())
    index = {s: np.array([int(x.split()[1]) - 2 for x in splits[s]]) for s in ("train", "test")}
    loaded = load_checkpoint(work / "run" / "model_0" / "best.ckpt")
    trained, _ = embed_smiles(Predictor(loaded), table.smiles)
    torch.manual_seed(args.seed)
    loaded.model = build_model(loaded.meta["model_config"]).eval()
    untrained, _ = embed_smiles(Predictor(loaded), table.smiles)
    fingerprints = morgan(table.smiles)
    probe = {}
    for target in ("penalized_logp", "qed", "logp"):
        y = table[target].to_numpy()
        probe[target] = {"trained_vnode": probes(trained, y, index["train"], index["test"]),
                         "untrained_vnode": probes(untrained, y, index["train"], index["test"]),
                         "morgan2_2048": probes(fingerprints, y, index["train"], index["test"])}
    result = {
        "command": "python " + " ".join([sys.argv[0], *(argv or sys.argv[1:])]),
        "git_sha": code_sha(), "data": data, "seeds": report["seeds"], "split": "scaffold 0.8/0.1/0.1, split_seed 0",
        "split_sizes": {s: len(splits[s]) for s in ("train", "val", "test")},
        "ensemble_test": report["ensemble"]["test"], "members_test_mae": report["members_test"],
        "spearman_abs_error_vs_std_test": report["spearman_abs_error_std"],
        "mean_std_test": report["mean_std"], "probes_test": probe,
        "wall_time_s": round(time.time() - start, 1),
        "load_average_1_5_15": [round(v, 2) for v in os.getloadavg()],
        "hardware": "CPU, 1 thread per training (2 shared cores)",
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: result[k] for k in ("spearman_abs_error_vs_std_test", "probes_test")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
