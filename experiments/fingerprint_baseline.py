"""How much of ogbg-molhiv a molecule's Morgan fingerprint alone explains: scikit-learn
models on the cached fingerprints (``featurizer: {fingerprint_bits: N}``), scored by the OGB
Evaluator on the official scaffold split, model chosen on validation. The floor a graph model
with fingerprints at its [VNode] should clear, at seconds of CPU.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/fingerprint_baseline.py \\
        --bits 2048 --out experiments/results/ogbg-molhiv/fingerprint_baseline.md
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
from ogb.graphproppred import Evaluator
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from graphnorm.chem import FeaturizerConfig
from graphnorm.data import load_dataset


def arrays(split) -> tuple[np.ndarray, np.ndarray]:
    rows = [split[i] for i in range(len(split))]
    return (np.unpackbits(np.concatenate([g.fingerprint.numpy() for g in rows]), axis=1),
            np.concatenate([g.y.numpy().reshape(-1) for g in rows]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bits", type=int, default=2048)
    ap.add_argument("--seeds", type=int, default=3, help="random forest seeds")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    splits = load_dataset("ogbg-molhiv", featurizer=FeaturizerConfig(vocab="ogb", fingerprint_bits=args.bits),
                          progress=False, workers=1)
    data = {k: arrays(splits[k]) for k in ("train", "val", "test")}
    evaluator = Evaluator("ogbg-molhiv")

    def auc(model, split: str) -> float:
        x, y = data[split]
        return evaluator.eval({"y_true": y.reshape(-1, 1), "y_pred": model.predict_proba(x)[:, 1:2]})["rocauc"]

    models = [(f"logistic regression, C={c}", lambda s, c=c: LogisticRegression(C=c, max_iter=2000))
              for c in (0.01, 0.1, 1.0)]
    models += [("random forest, 500 trees, min_samples_leaf=1",
                lambda s: RandomForestClassifier(500, n_jobs=1, random_state=s))]
    lines = [f"# ogbg-molhiv from Morgan fingerprints alone (radius 2, {args.bits} bits)", "",
             "| model | seed | val ROC-AUC | test ROC-AUC | fit CPU s |", "|---|---|---|---|---|"]
    for name, build in models:
        for seed in range(args.seeds if "forest" in name else 1):
            start = time.process_time()
            model = build(seed).fit(*data["train"])
            cpu = time.process_time() - start
            lines.append(f"| {name} | {seed} | {auc(model, 'val'):.4f} | {auc(model, 'test'):.4f} | {cpu:.0f} |")
            print(lines[-1], flush=True)
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines += ["", f"Official scaffold split ({len(data['train'][1])}/{len(data['val'][1])}/"
              f"{len(data['test'][1])}), OGB Evaluator. Data checksum {splits.checksum[:16]}…, "
              f"git {sha}, {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
              f"load average {os.getloadavg()[0]:.1f} at the end (CPU seconds do not depend on it).",
              "", "Command: `GRAPHNORM_RAW_DIR=../shared/datasets python experiments/fingerprint_baseline.py "
              f"--bits {args.bits} --seeds {args.seeds} --out {args.out}`"]
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
