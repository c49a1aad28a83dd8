"""``train --model rf|gbm``: a tree kind (graphnorm.models) as a run on a user
table, with the files of every training run: metrics.json, predictions_{val,test}.csv.gz,
the table's split files, and the fitted model (forest.skops or gbm.json), which predict loads."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from graphnorm.run_folder import RunRecord, predictions_file


def _smiles(dataset) -> list[str]:
    return [dataset[i].smiles for i in range(len(dataset))]


def _warn_overlap(feature_set: str, smiles: dict, boosters) -> dict | None:
    """Molecules per split that the set's fitted parts saw, announced when any is scored."""
    from graphnorm.baselines.tree_features import training_overlap

    counts = training_overlap(feature_set, smiles, boosters)
    if counts and (counts["val"] or counts.get("test")):
        import warnings

        which = f"boosters of {boosters}" if boosters else "shipped ADMET boosters"
        warnings.warn(f"--tree-features {feature_set}: the {which} were fitted on "
                      f"{counts['val']} of the {len(smiles['val'])} validation and "
                      f"{counts.get('test', 0)} of the {len(smiles.get('test', []))} test molecules; their "
                      "features are in-sample there, so those scores flatter the set "
                      "(graphnorm/pretrained/README.md lists the data)", stacklevel=2)
    return counts


def train_trees(cfg) -> dict:
    """``train --model rf|gbm`` on a user table: fit, score val/test, write the run's files."""
    import torch

    from graphnorm.models import tree_kind
    from graphnorm.baselines.tree_features import (keep_backbone, keep_with_run, signature,
                                                   table_matrix, width)
    from graphnorm.checkpoints import load_gnn_columns
    from graphnorm.data.table_dataset import VOCAB, load_table_dataset, spec_from_config, write_run_files
    from graphnorm.train.evaluate import prediction_frame, scored_splits
    from graphnorm.provenance import code_sha, cpu_model
    from graphnorm.run_folder import refuse_overwrite
    from graphnorm.tasks import compute_metric, resolve_task

    kind = tree_kind(cfg.model_name)
    trees = kind.implementation()  # fit, predict, save (graphnorm.baselines.tree_member.TreeKind)
    feature_set = trees.features(kind.name, cfg.tree_features)
    boosters = cfg.admet_boosters
    # a set that takes no boosters file or backbone, or a file it cannot read
    gnn = load_gnn_columns(cfg.feature_backbone)  # +gnn sets: the pre-trained network's columns
    width(feature_set, boosters, gnn)
    spec = spec_from_config(cfg)
    if spec is None:
        raise ValueError(f"--model {kind.name} takes a user table (--data FILE); the benchmark "
                         "datasets train the graph models")
    started, cpu_started = time.time(), time.process_time()
    out = Path(cfg.out)
    refuse_overwrite(out, cfg.resume)
    # the run's own featurizer: a tree model beside graph runs of the table (an ensemble
    # member, a benchmark seed) reads their cached featurization instead of making another
    splits = load_table_dataset(spec, root=cfg.cache_root, featurizer=cfg.featurizer_config(VOCAB),
                                progress=cfg.progress)
    info = splits.info
    task = resolve_task(info)
    scored = scored_splits(splits)  # ("val",): a table without test rows, never scored
    smiles = {s: _smiles(splits[s]) for s in ("train", *scored)}
    every = sorted(set().union(*smiles.values()))
    overlap = _warn_overlap(feature_set, smiles, boosters)
    table = table_matrix(feature_set, every, Path(spec.path).name, splits.checksum,
                         cfg.cache_root, cfg.progress, boosters, gnn)
    row = {s: k for k, s in enumerate(every)}
    xs = {s: table[[row[m] for m in smiles[s]]] for s in smiles}
    ys = {s: splits[s].targets().double().numpy().reshape(len(splits[s]), -1) for s in smiles}
    threads = cfg.threads or 1
    models, config, transforms = trees.fit(task, xs["train"], ys["train"], cfg.seed,
                                          threads)
    preds = {"val": trees.predict(task, models, xs["val"], transforms)}
    refit = None
    if cfg.tree_refit:  # validation is scored; the model kept also learns from its rows
        models, config, transforms = trees.fit(task, np.concatenate([xs["train"], xs["val"]]),
                                              np.concatenate([ys["train"], ys["val"]]), cfg.seed,
                                              threads)
        refit = {"rows": len(xs["train"]) + len(xs["val"]), "splits": ["train", "val"]}
    logged = [f"{n} ({t})" for n, t in zip(info["targets"], transforms) if t]
    if logged and cfg.progress:
        print(f"[graphnorm] {kind.name}: fitted in log10 units, predicted in yours (positive, "
              f"heavy-tailed labels): {', '.join(logged)}", flush=True)
    if "test" in scored:
        preds["test"] = trees.predict(task, models, xs["test"], transforms)
    features = signature(feature_set, boosters, gnn)
    out.mkdir(parents=True, exist_ok=True)
    keep_with_run(boosters, out)
    keep_backbone(gnn, out)
    write_run_files(out, splits)
    trees.save(out, models, info, features, config, cfg.seed, transforms)
    scores, per_target = {"test": None}, {}
    for split, pred in preds.items():
        p, y = torch.from_numpy(pred), torch.from_numpy(ys[split])
        scores[split] = compute_metric(info["metric"], p, y)
        per_target[split] = task.per_target(p, y, info["targets"])
        prediction_frame(info["targets"], p, y, smiles[split]).to_csv(
            out / predictions_file(split), index=False)
    wall = time.time() - started
    metric = info["metric"]
    record = RunRecord(
        metric, cfg.seed, scores["val"], scores["test"], model=kind.name, dataset=cfg.data,
        norm=cfg.norm, per_target=per_target, best_epoch=None, epochs=0, steps=0,
        wall_time_s=round(wall, 1), cpu_time_s=round(time.process_time() - cpu_started, 1),
        budget_s=None, stopped_by="fit", params=0,
        hardware=f"{cpu_model()}, {threads} threads, {kind.label}", git_sha=code_sha(),
        data_checksum=splits.checksum, config=cfg.to_dict(),
        extra={"train_graphs_per_s": round(len(splits["train"]) / max(wall, 1e-9), 1),
               "tree_model": config, "features": features, "transforms": transforms,
               **({"admet_overlap": overlap} if overlap is not None else {}),
               # the saved model's own fit (test scores): train + val; val scores: train only
               **({"refit": refit} if refit is not None else {})})
    record.write(out)
    return record.fields
