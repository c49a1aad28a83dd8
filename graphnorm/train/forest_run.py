"""``train --model rf``: the fingerprint forest (graphnorm/baselines/forest.py) as a run on a
user table, with the files of every training run: metrics.json, predictions_{val,test}.csv.gz,
the table's split files, and the fitted forests (forest.skops + forest.json, which predict
loads; graphnorm/baselines/forest_file.py)."""
from __future__ import annotations

import json
import time
from pathlib import Path

from graphnorm.baselines.forest import (COUNT_BITS, COUNT_RADIUS, FOREST, ForestConfig, fit_forests,
                                        morgan_counts, predict_forests)
from graphnorm.baselines.forest_file import save_forest


def _smiles(dataset) -> list[str]:
    return [dataset[i].smiles for i in range(len(dataset))]


def train_forest(cfg) -> dict:
    """``train --model rf`` on a user table: fit, score val/test, write the run's files."""
    import torch

    from graphnorm.data.table_dataset import VOCAB, load_table_dataset, spec_from_config, write_run_files
    from graphnorm.train.task import compute_metric, per_target_metrics
    from graphnorm.train.evaluate import prediction_frame
    from graphnorm.train.run import _cpu_model, code_sha, refuse_overwrite

    spec = spec_from_config(cfg)
    if spec is None:
        raise ValueError("--model rf takes a user table (--data FILE); the benchmark datasets "
                         "train the graph models")
    started, cpu_started = time.time(), time.process_time()
    out = Path(cfg.out)
    refuse_overwrite(out, cfg.resume)
    # the run's own featurizer: a forest beside graph runs of the table (an ensemble member,
    # a benchmark seed) reads their cached featurization instead of making another
    splits = load_table_dataset(spec, root=cfg.cache_root, featurizer=cfg.featurizer_config(VOCAB),
                                progress=cfg.progress)
    info = splits.info
    xs = {s: morgan_counts(_smiles(splits[s])) for s in ("train", "val", "test")}
    ys = {s: splits[s].targets().double().numpy().reshape(len(splits[s]), -1)
          for s in ("train", "val", "test")}
    threads = cfg.threads or 1
    forests = fit_forests(info["task_type"], xs["train"], ys["train"], cfg.seed, threads)
    val_pred, test_pred = (predict_forests(info["task_type"], forests, xs[s]) for s in ("val", "test"))
    fingerprint = {"radius": COUNT_RADIUS, "bits": COUNT_BITS, "kind": "Morgan counts"}
    out.mkdir(parents=True, exist_ok=True)
    write_run_files(out, splits)
    save_forest(out, forests, info, fingerprint, ForestConfig().__dict__, cfg.seed)
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
        "cpu_time_s": round(time.process_time() - cpu_started, 1),
        "budget_s": None, "stopped_by": "fit", "model": FOREST, "params": 0,
        "train_graphs_per_s": round(len(splits["train"]) / max(wall, 1e-9), 1),
        "hardware": f"{_cpu_model()}, {threads} threads, sklearn",
        "forest": ForestConfig().__dict__, "fingerprint": fingerprint,
        "git_sha": code_sha(), "data_checksum": splits.checksum, "config": cfg.to_dict(),
    }
    (out / "metrics.json").write_text(json.dumps(result, indent=2))
    return result
