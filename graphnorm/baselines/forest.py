"""The chemist's baseline: a random forest on Morgan count fingerprints (``--model rf``).

Breiman (2001), https://doi.org/10.1023/A:1010933404324, on ECFP4-like counts (Rogers & Hahn
2010, https://doi.org/10.1021/ci100050t): radius 2, 2048 folded counts per molecule, one
scikit-learn forest per target fitted on the rows labelled for it. It reads a user table
exactly as the graph models do (`load_table_dataset`: same rows, same split), and writes the
same run files (``metrics.json``, ``predictions_{val,test}.csv.gz``, ``splits.json``), so
``benchmark --models graphormer,rf`` pairs it with the Graphormer split by split. It has no
checkpoint: ``predict`` takes the graph models only.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FOREST = "rf"
COUNT_RADIUS, COUNT_BITS = 2, 2048


@dataclass(frozen=True)
class ForestConfig:
    n_estimators: int = 500
    max_features: float = 0.3  # of the 2048 counts per split; sklearn's 1.0 overfits counts
    min_samples_leaf: int = 1


def morgan_counts(smiles: list[str], radius: int = COUNT_RADIUS, bits: int = COUNT_BITS) -> np.ndarray:
    """float32 [N, bits] folded Morgan counts (RDKit's generator); the rows were sanitized by
    the table reader already, so a failure here is a bug, raised with the SMILES."""
    from rdkit import Chem
    from rdkit.Chem import rdFingerprintGenerator

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=bits)
    out = np.zeros((len(smiles), bits), dtype=np.float32)
    for i, s in enumerate(smiles):
        mol = Chem.MolFromSmiles(s)
        if mol is None:
            raise ValueError(f"random forest: RDKit cannot read SMILES {s!r}")
        out[i] = gen.GetCountFingerprintAsNumPy(mol)
    return out


def _smiles(dataset) -> list[str]:
    return [dataset[i].smiles for i in range(len(dataset))]


def fit_predict(task_type: str, x_train: np.ndarray, y_train: np.ndarray, xs: list[np.ndarray],
                seed: int, threads: int, config: ForestConfig = ForestConfig()) -> list[np.ndarray]:
    """One forest per target on its labelled training rows; predictions [N, T] for each of
    ``xs`` (probabilities of 1 for binary targets)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    outs = [np.full((len(x), y_train.shape[1]), np.nan) for x in xs]
    for j in range(y_train.shape[1]):
        have = ~np.isnan(y_train[:, j])
        kw = dict(n_estimators=config.n_estimators, max_features=config.max_features,
                  min_samples_leaf=config.min_samples_leaf, random_state=seed, n_jobs=threads)
        if task_type == "regression":
            forest = RandomForestRegressor(**kw).fit(x_train[have], y_train[have, j])
            for out, x in zip(outs, xs):
                out[:, j] = forest.predict(x)
        else:
            forest = RandomForestClassifier(**kw).fit(x_train[have], y_train[have, j].astype(int))
            positive = list(forest.classes_).index(1) if 1 in forest.classes_ else None
            for out, x in zip(outs, xs):
                out[:, j] = forest.predict_proba(x)[:, positive] if positive is not None else 0.0
    return outs


def train_forest(cfg) -> dict:
    """``train --model rf`` on a user table: fit, score val/test, write the run's files."""
    import torch

    from graphnorm.data.table_dataset import load_table_dataset, spec_from_config, write_run_files
    from graphnorm.task import compute_metric, per_target_metrics
    from graphnorm.train.evaluate import prediction_frame
    from graphnorm.train.run import _cpu_model, code_sha, refuse_overwrite

    spec = spec_from_config(cfg)
    if spec is None:
        raise ValueError("--model rf takes a user table (--data FILE); the benchmark datasets "
                         "train the graph models")
    started = time.time()
    out = Path(cfg.out)
    refuse_overwrite(out, cfg.resume)
    splits = load_table_dataset(spec, root=cfg.cache_root, progress=cfg.progress)
    info = splits.info
    xs = {s: morgan_counts(_smiles(splits[s])) for s in ("train", "val", "test")}
    ys = {s: splits[s].targets().double().numpy().reshape(len(splits[s]), -1)
          for s in ("train", "val", "test")}
    threads = cfg.threads or 1
    val_pred, test_pred = fit_predict(info["task_type"], xs["train"], ys["train"],
                                      [xs["val"], xs["test"]], cfg.seed, threads)
    out.mkdir(parents=True, exist_ok=True)
    write_run_files(out, splits)
    scores, per_target = {}, {}
    for split, pred in (("val", val_pred), ("test", test_pred)):
        p, y = torch.from_numpy(pred), torch.from_numpy(ys[split])
        scores[split] = compute_metric(info["metric"], p, y)
        per_target[split] = per_target_metrics(info["task_type"], p, y, info["targets"])
        prediction_frame(info["targets"], p, y, _smiles(splits[split])).to_csv(
            out / f"predictions_{split}.csv.gz", index=False)
    wall = time.time() - started
    metric = info["metric"]
    result = {
        "dataset": cfg.data, "norm": cfg.norm, "seed": cfg.seed, "metric": metric,
        f"val_{metric}": scores["val"], f"test_{metric}": scores["test"], "per_target": per_target,
        "best_epoch": None, "epochs": 0, "steps": 0, "wall_time_s": round(wall, 1),
        "budget_s": None, "stopped_by": "fit", "model": FOREST, "params": 0,
        "train_graphs_per_s": round(len(splits["train"]) / max(wall, 1e-9), 1),
        "hardware": f"{_cpu_model()}, {threads} threads, sklearn",
        "forest": ForestConfig().__dict__, "fingerprint": {"radius": COUNT_RADIUS, "bits": COUNT_BITS,
                                                           "kind": "Morgan counts"},
        "git_sha": code_sha(), "data_checksum": splits.checksum, "config": cfg.to_dict(),
    }
    (out / "metrics.json").write_text(json.dumps(result, indent=2))
    return result
