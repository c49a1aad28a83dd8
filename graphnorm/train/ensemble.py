"""``train --ensemble N``: N seeds on one split into ``OUT/model_<k>``, then scored together.

Members differ only in their seed (initialization, dropout, batch order); the data split is
the same for all (``split_seed``). With ``tree_member`` a tree model (``tree_model``: rf, the
Morgan-count forest of ``--model rf``, into ``OUT/forest``; gbm, the boosted trees, into
``OUT/gbm``) trains on that split and is one more member of the mean (weighted on validation
with ``tree_weight``, graphnorm/train/member_weights.py).
``OUT/ensemble.json`` reports each member's val/test metric, the ensemble mean's per-target
metrics, and on the test split how well the members' disagreement (std) ranks the
ensemble's errors: Spearman of |error| vs std per target. The
std is model disagreement, not a calibrated interval: a large std says the models were
unsure, a small one does not promise a small error.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from graphnorm.run_folder import (ENSEMBLE_FILE, LAST_CHECKPOINT, SPLITS_FILE, RunRecord, hold_run,
                                  is_finished, json_safe, predictions_file, read_metrics)
from graphnorm.train.processes import die_with_parent, train_run

RUN_FILES = (SPLITS_FILE, "skipped_rows.csv", "data_report.json")


def member_configs(cfg, parallel: bool = False) -> list:
    """The members' run configs, as planned (graphnorm/train/plan.py): the graph models,
    then the tree model when it is a member; a graph member with a last.ckpt resumes."""
    from graphnorm.train.plan import ensemble_members

    return ensemble_members(cfg, lambda folder: (folder / LAST_CHECKPOINT).is_file(), parallel)


def check_tree_member(cfg) -> None:
    """Refuse a tree member that could not train, before the graph members spend hours."""
    if not cfg.tree_member:
        return
    from graphnorm.models import model_kind, tree_kind

    kind = tree_kind(cfg.tree_model)  # a typo fails now
    from graphnorm.baselines.tree_features import width

    # so does a set it cannot read, or a boosters file that set does not take
    from graphnorm.checkpoints import load_gnn_columns

    width(kind.implementation().features(kind.name, cfg.tree_features), cfg.admet_boosters,
          load_gnn_columns(cfg.feature_backbone))
    if model_kind(cfg.model_name).tree:
        raise ValueError(f"--tree-member adds a tree model to graph models; --model "
                         f"{cfg.model_name} trains the trees alone")
    if not cfg.data:
        raise ValueError("--tree-member takes a user table (--data FILE): the trees read "
                         "its SMILES; the benchmark datasets train graph models only")


def _name(k: int, member) -> str:
    from graphnorm.models import model_kind

    return member.model_name if model_kind(member.model_name).tree else f"model {k}"


def _run(todo: list, jobs: int) -> None:
    if jobs <= 1:
        for k, member in todo:
            print(f"[ensemble] {_name(k, member)}: seed {member.seed} -> {member.out}", flush=True)
            train_run(member)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor


    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"),
                             initializer=die_with_parent) as pool:
        futures = []
        for k, member in todo:  # planned for a worker: one thread, no bars (plan.for_worker)
            print(f"[ensemble] {_name(k, member)}: seed {member.seed} -> {member.out} (queued)",
                  flush=True)
            futures.append(pool.submit(train_run, member))
        for f in futures:
            f.result()  # a failed member fails the ensemble; a rerun skips finished ones


def train_ensemble(cfg, jobs: int = 1) -> dict:
    """Train the members that have no metrics.json yet, then write OUT/ensemble.json (the
    folder held against a second process: graphnorm.run_folder.hold_run)."""
    from graphnorm.chem.descriptor_values import shared_by_smiles

    check_tree_member(cfg)
    with hold_run(cfg.out), shared_by_smiles():  # the members' RDKit descriptors, once
        return _train_ensemble(cfg, jobs)


def _train_ensemble(cfg, jobs: int) -> dict:
    out = Path(cfg.out)
    members = member_configs(cfg, parallel=jobs > 1)
    todo = [(k, m) for k, m in enumerate(members) if not is_finished(m.out)]
    for k, m in enumerate(members):
        if (k, m) not in todo:
            print(f"[ensemble] {_name(k, m)}: done, skipped", flush=True)
    _run(todo, jobs)
    for name in RUN_FILES:  # the members share one split: its files beside the ensemble
        src = Path(members[0].out) / name
        if src.is_file():
            shutil.copyfile(src, out / name)
    report = evaluate_ensemble(cfg)
    (out / ENSEMBLE_FILE).write_text(json.dumps(json_safe(report), indent=2, allow_nan=False))
    ensemble_metrics(cfg, report).write(out)
    split = "test" if "test" in report["ensemble"] else "val"  # val: a selection run's data
    print(f"[graphnorm] ensemble of {len(members)}: {split} {report['metric']} "
          f"{report['ensemble'][split][report['metric']]:.4f} (members "
          f"{', '.join(f'{v:.4f}' for v in report[f'members_{split}'])})"
          f"; Spearman |error| vs std {report.get('spearman_abs_error_std')} -> {out}/ensemble.json")
    return report


def ensemble_metrics(cfg, report: dict) -> RunRecord:
    """The ensemble as one run in ``OUT/metrics.json`` (a benchmark run may be an ensemble):
    the ensemble's val/test metric; time, steps and parameters summed over members (what the
    ensemble cost)."""
    members = [read_metrics(m.out) for m in member_configs(cfg)]
    metric, first = report["metric"], members[0]
    return RunRecord(
        metric, cfg.seed, report["ensemble"]["val"][metric],
        # None: the data withheld its test split (a TDC selection run), so nothing scored it
        report["ensemble"].get("test", {}).get(metric), model=cfg.model_name,
        dataset=first["dataset"], norm=cfg.norm,
        per_target={s: scored["per_target"] for s, scored in report["ensemble"].items()},
        best_epoch=None, epochs=max(m["epochs"] for m in members),
        steps=sum(m["steps"] for m in members),
        wall_time_s=round(sum(m["wall_time_s"] for m in members), 1),
        cpu_time_s=round(sum(m.get("cpu_time_s") or 0.0 for m in members), 1),
        budget_s=first.get("budget_s"), stopped_by=first.get("stopped_by"),
        params=sum(m["params"] for m in members), hardware=first.get("hardware"),
        git_sha=report["git_sha"], data_checksum=report["data_checksum"], config=cfg.to_dict(),
        extra={"ensemble": len(members), "members_test": report["members_test"],
               "tree_member": cfg.tree_member})


def spearman_error_std(mean: np.ndarray, std: np.ndarray, y: np.ndarray) -> list:
    """Per target: Spearman rank correlation of |mean - y| with std over labelled rows."""
    from scipy.stats import spearmanr

    out = []
    for j in range(y.shape[1]):
        have = ~np.isnan(y[:, j])
        err = np.abs(mean[have, j] - y[have, j])
        rho = spearmanr(err, std[have, j]).statistic if have.sum() > 2 else float("nan")
        out.append(None if np.isnan(rho) else round(float(rho), 4))
    return out


def member_predictions(files: list[Path], split: str, names: list[str]):
    """``predict_loader``'s (predictions [M, N, T], labels [N, T], SMILES) from the members'
    own prediction files of ``split`` (each written when its best model was scored,
    `Ensemble.split_predictions`): the tree member then need not featurize the split's
    molecules again. None where a file is missing or the members' rows differ; the members
    then predict again."""
    import torch

    from graphnorm.ensemble import Ensemble, MemberRowsError

    try:
        rows, preds = Ensemble.of_files(files).split_predictions(split, names)
    except (FileNotFoundError, KeyError, MemberRowsError):
        return None
    if rows["smiles"].isna().any():
        return None
    # float32, as the members' predict_batch returns (the files hold them in float64)
    return (torch.from_numpy(preds.astype("float32")),
            torch.tensor(rows[[f"y:{n}" for n in names]].to_numpy("float32")),
            rows["smiles"].tolist())


def evaluate_ensemble(cfg) -> dict:
    from graphnorm.checkpoints import checkpoint_files, load_member
    from graphnorm.ensemble import Ensemble
    from graphnorm.tasks import compute_metric, resolve_task
    from graphnorm.train.datamodule import GraphDataModule
    from graphnorm.train.evaluate import predict_loader, prediction_frame, scored_splits
    from graphnorm.train.member_weights import (fit_tree_weight, member_weights, prior_weight,
                                                   tree_weight_rule)
    from graphnorm.provenance import code_sha

    out = Path(cfg.out)
    files = checkpoint_files(out)
    models = [load_member(p) for p in files]
    task = models[0].task
    # equal weights until fitted on validation; --member-average logodds: a classifier's
    # log-odds are averaged (graphnorm/ensemble/averaging.py)
    ensemble = Ensemble.of_files(files, average=cfg.member_average).for_task(task)
    metric, names = task["metric"], models[0].targets
    report = {"metric": metric, "members": len(models), "targets": names,
              "seeds": [cfg.seed + k for k in range(cfg.ensemble)], "ensemble": {},
              "member_files": ensemble.record(out)["member_files"]}
    members = [read_metrics(p.parent) for p in files]
    report["members_val"] = [m[f"val_{metric}"] for m in members]
    report["members_test"] = [m[f"test_{metric}"] for m in members]
    tree = ensemble.tree
    average = report["member_average"] = ensemble.average
    fit, prior = tree_weight_rule(cfg.tree_weight)
    # members whose data withheld the test split (a TDC selection run) scored none: nor does
    # the ensemble, from their files; otherwise the data module says which splits hold rows
    splits = ("val",) if all(m[f"test_{metric}"] is None for m in members) else ("val", "test")
    read = {split: member_predictions(files, split, names) for split in splits}
    checksum = members[0].get("data_checksum")  # the members' data: the ensemble's
    if checksum is None or not all(read.values()):  # the members predict the splits again
        dm = GraphDataModule.from_config(cfg, progress=False, num_workers=0)
        dm.setup()
        checksum = dm.checksum
        splits = scored_splits(dm.splits)
    for split in splits:
        preds, y, smiles = read[split] or predict_loader(models, dm.loader(split, train=False))
        if split == "val" and (fit or prior is not None) and any(tree) and not all(tree):
            weights = (fit_tree_weight(metric, preds, y, tree, prior, average) if fit else
                       member_weights(prior_weight(prior, tree), tree, preds.dtype))
            ensemble = ensemble.weighted(weights.tolist())
            report["member_weights"] = ensemble.record(out)["member_weights"]
        std = ensemble.spread(preds)
        mean = ensemble.combine(preds)
        # the ensemble's own prediction files, as a single run's: benchmark seed ensembles,
        # `compare` and conformal coverage read them
        prediction_frame(names, mean, y, smiles).to_csv(out / predictions_file(split),
                                                        index=False)
        report["ensemble"][split] = {metric: compute_metric(metric, mean, y),
                                     "per_target": resolve_task(task).per_target(mean, y, names)}
        if split == "test":
            report["spearman_abs_error_std"] = dict(zip(names, spearman_error_std(
                mean.double().numpy(), std.double().numpy(), y.double().numpy())))
            report["mean_std"] = dict(zip(names, std.mean(0).tolist()))
    report.update(data_checksum=checksum, git_sha=code_sha(), config=cfg.to_dict())
    return report
