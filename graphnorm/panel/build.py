"""``graphnorm panel build RUN``: which endpoints of a pre-trained model hold up, scored on
held-out molecules, with their intervals and a far-from-training yardstick -- ``panel.json``,
what ``graphnorm admet`` (graphnorm/inference/admet_panel.py) predicts from.

The rule was written before any score (experiments/results/pretrain/RULE.md, C):

- every held-out molecule (whole held-out scaffolds) is dealt to a *selection* half S or a
  *report* half R by a hash of its SMILES;
- a trained task is shown when on S it has >= `MIN_SELECT` labels (binary: >= `MIN_CLASS` per
  class) and ROC-AUC >= `MIN_AUROC` or R² >= `MIN_R2` (in its units), and >= `MIN_REPORT`
  labels on R; the score it reports is R's;
- regression intervals: split-conformal (Vovk et al. 2005; Lei et al. 2018, *Distribution-free
  predictive inference for regression*, JASA 113) at `LEVEL`, the ceil(LEVEL (n + 1))-th
  smallest |y - ŷ| on R;
- far from training: the distance of the [VNode] embedding to the nearest of `CENTROIDS`
  k-means centroids of `DOMAIN_SAMPLE` training molecules' embeddings, above S's 95th
  percentile.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from graphnorm.panel import Domain, Endpoint, Panel, nearest_distance, platt_probability
from graphnorm.tasks import CLASSIFICATION, REGRESSION
from graphnorm.pretrain.corpus_units import units_of

MIN_SELECT, MIN_CLASS, MIN_REPORT = 50, 10, 25
MIN_AUROC, MIN_R2 = 0.75, 0.30
LEVEL = 0.9
CENTROIDS, DOMAIN_SAMPLE, DOMAIN_QUANTILE = 256, 20_000, 0.95


def halves(smiles) -> np.ndarray:
    """True for the selection half S, False for the report half R (a hash of the SMILES)."""
    return np.array([int(hashlib.sha256(s.encode()).hexdigest()[:8], 16) % 2 == 0
                     for s in smiles])


def conformal_halfwidth(residuals: np.ndarray, level: float = LEVEL) -> float:
    """The ceil(level (n + 1))-th smallest |residual| (inf when n is too small): the
    split-conformal quantile predict's intervals use (`graphnorm.stats.calibration`)."""
    from graphnorm.stats.calibration import conformal_quantile

    return conformal_quantile(np.abs(residuals), level)


def endpoint(name: str, binary: bool, y: np.ndarray, pred: np.ndarray, select: np.ndarray,
             description: str = "") -> Endpoint:
    """One task's entry: its selection and report scores and whether it is shown. ``pred``:
    logits (binary) or values in the task's units (regression); NaN labels = not measured."""
    have = ~np.isnan(y)
    s, r = have & select, have & ~select
    from graphnorm.pretrain.evaluate import _auroc, _r2

    # enough labels on both halves for the endpoint to be judged at all (no score read)
    enough = s.sum() >= MIN_SELECT and r.sum() >= MIN_REPORT and (
        not binary or min(y[s].sum(), (1 - y[s]).sum()) >= MIN_CLASS)
    if binary:
        score_s = _auroc(y[s], pred[s]) if s.sum() else None
        ok = enough and score_s is not None and score_s >= MIN_AUROC
        fields = dict(metric="rocauc", score_select=score_s,
                      score=_auroc(y[r], pred[r]) if r.sum() else None,
                      **calibrated(y[s], pred[s], y[r], pred[r]))
    else:
        score_s = _r2(y[s], pred[s]) if s.sum() else None
        ok = enough and score_s is not None and score_s >= MIN_R2
        fields = dict(metric="r2", score_select=score_s,
                      score=_r2(y[r], pred[r]) if r.sum() else None,
                      halfwidth=conformal_halfwidth(y[r] - pred[r]) if r.sum() else None)
    return Endpoint(task=name, kind=(CLASSIFICATION if binary else REGRESSION).stored,
                    units=description, n_select=int(s.sum()), n=int(r.sum()),
                    judged=bool(enough), shown=bool(ok and fields["score"] is not None),
                    **fields)


def calibrated(y_select: np.ndarray, z_select: np.ndarray, y_report: np.ndarray,
               z_report: np.ndarray) -> dict:
    """Platt scaling of a binary endpoint's logits, fitted on S and judged on R:
    {"platt": (a, b) (the probability shown is sigmoid(a z + b)), "ece": R's expected
    calibration error of those probabilities, "ece_uncalibrated": of sigmoid(z)}. Without
    both classes on S there is nothing to fit: the raw probability is kept ("platt" absent)."""
    from graphnorm.stats.calibration import ProbabilityCalibrator, expected_calibration_error

    out = {"ece_uncalibrated": None, "ece": None}
    if len(y_report):
        out["ece_uncalibrated"] = out["ece"] = expected_calibration_error(
            platt_probability(z_report), y_report)
    if len(np.unique(y_select)) < 2:
        return out
    fitted = ProbabilityCalibrator("platt").fit(platt_probability(z_select), y_select).model
    a, b = float(fitted.coef_[0, 0]), float(fitted.intercept_[0])
    out["platt"] = (a, b)
    if len(y_report):
        out["ece"] = expected_calibration_error(platt_probability(z_report, a, b), y_report)
    return out


def domain_centroids(train_embeddings: np.ndarray, seed: int = 0) -> np.ndarray:
    """float32 [K, D]: `CENTROIDS` k-means centroids of the training embeddings."""
    from sklearn.cluster import MiniBatchKMeans

    k = min(CENTROIDS, len(train_embeddings))
    km = MiniBatchKMeans(n_clusters=k, random_state=seed, n_init=3).fit(train_embeddings)
    return km.cluster_centers_.astype(np.float32)


def stored_centroids(centroids: np.ndarray) -> list:
    # 5 decimals: distances of order 1-10 keep 4 significant digits, the file a third the size
    return [[round(float(v), 5) for v in row] for row in centroids]


def domain_yardstick(train_embeddings: np.ndarray, select_embeddings: np.ndarray,
                     seed: int = 0) -> Domain:
    """K-means centroids of the training embeddings, and S's `DOMAIN_QUANTILE` distance to
    the nearest of them as the threshold."""
    centroids = domain_centroids(train_embeddings, seed)
    distance = nearest_distance(select_embeddings, centroids)
    return Domain(stored_centroids(centroids), float(np.quantile(distance, DOMAIN_QUANTILE)))


def task_descriptions(raw_dir) -> dict[str, str]:
    """``<corpus>/<task>`` -> its units (`corpus_units.units_of`: where tasks.csv leaves
    them blank or garbled) or the units or transform its tasks.csv states."""
    import os

    import pandas as pd

    root = Path(raw_dir or os.environ.get("GRAPHNORM_RAW_DIR", ".")) / "admet_corpus"
    out = {}
    for path in sorted(root.glob("*/tasks.csv")):
        frame = pd.read_csv(path)
        for _, row in frame.iterrows():
            text = row.get("description")
            key = f"{path.parent.name}/{row['task']}"
            out[key] = units_of(key, "" if pd.isna(text) else str(text))
    return out


def held_out_predictions(run, model) -> dict:
    """``model``'s view of every held-out molecule of ``run``: {"pred" [N, T]: logits
    (binary) or values in the task's units, "raw" [N, T]: the head's outputs as they come,
    "y" [N, T] (NaN = not measured), "select" [N] (the S half), "rows" [N] (corpus rows),
    "embeddings" [N, D]}."""
    from graphnorm.pretrain.evaluate import forward_all

    if not len(run.held_out_positions):
        raise ValueError("the run holds no molecule out (--val-percent 0: every row trained), "
                         "so no endpoint can be judged on it: build the panel of a run that held "
                         "scaffolds out")
    held = run.subset(run.held_out_positions, "held_out")
    z, y, emb, rows = forward_all(model, run.loader(held), run.labels_of)
    mean, std = run.scaling.mean.numpy(), run.scaling.std.numpy()
    binary = run.scaling.binary.numpy()
    pred = np.where(binary[None, :], z, z * std[None, :] + mean[None, :])
    return {"pred": pred, "raw": z, "y": y,
            "select": halves([run.corpus.smiles[r] for r in rows]), "rows": rows,
            "embeddings": emb}


def quantity_endpoints(run, entries: list, held: dict) -> list:
    """A quantity run's panel: one endpoint per quantity ("quantity/<name>", in its unit),
    scored on the held-out labels of all its sources, each against its own source's output
    (shared weights plus that source's offset), and shown on the scale of the source with the
    most training labels (``output``). Where the quantity holds up, its sources are folded
    into it (not shown; ``quantity`` names it); elsewhere they stand as they are."""
    import dataclasses

    from graphnorm.quantities import PREFIX, QUANTITIES

    index = {n: t for t, n in enumerate(run.corpus.task_names)}
    counts = run.corpus.subset(run.corpus_rows(run.train_positions)).labels_per_task()
    by_quantity: dict = {}
    for name, q in zip(run.corpus.task_names, run.quantity_of):
        if q is not None and run.scaling.trained[index[name]]:
            by_quantity.setdefault(q, []).append(index[name])
    added, folded = [], set()
    for q, tasks in by_quantity.items():
        y = np.concatenate([held["y"][:, t] for t in tasks])
        pred = np.concatenate([held["pred"][:, t] for t in tasks])
        select = np.tile(held["select"], len(tasks))
        reference = run.corpus.task_names[max(tasks, key=lambda t: counts[t])]
        binary = QUANTITIES[q].kind == CLASSIFICATION.stored  # pred: logits then
        e = dataclasses.replace(endpoint(PREFIX + q, binary, y, pred, select, QUANTITIES[q].unit),
                                output=reference)
        added.append(e)
        if e.shown:
            folded |= {run.corpus.task_names[t] for t in tasks}
    mapped = dict(zip(run.corpus.task_names, run.quantity_of))
    sources = [dataclasses.replace(e, quantity=mapped.get(e.task),
                                   shown=e.shown and e.task not in folded) for e in entries]
    return added + sources


def build_panel(run, folder: Path, raw_dir=None, seed: int = 0) -> Panel:
    """The panel of ``folder``'s networks (a `graphnorm pretrain` run of ``run``'s spec: its
    best.ckpt, or the members `graphnorm panel ensemble` assembled there, averaged)."""
    import torch

    from graphnorm.pretrain.evaluate import forward_all

    from .networks import digests, load_networks

    model, corpus = load_networks(folder).model, run.corpus
    held = held_out_predictions(run, model)
    y, emb, rows, select = held["y"], held["embeddings"], held["rows"], held["select"]
    binary, trained = run.scaling.binary.numpy(), run.scaling.trained.numpy()
    described = task_descriptions(raw_dir)
    entries = []
    for t, name in enumerate(corpus.task_names):
        if not trained[t]:
            continue
        entries.append(endpoint(name, bool(binary[t]), y[:, t], held["pred"][:, t], select,
                                described.get(name, "")))
    rng = np.random.default_rng(seed)
    sample = rng.choice(run.train_positions, min(DOMAIN_SAMPLE, len(run.train_positions)),
                        replace=False)
    torch.manual_seed(seed)
    _, _, train_emb, _ = forward_all(model, run.loader(run.subset(np.sort(sample), "domain")),
                                     run.labels_of)
    domain = domain_yardstick(train_emb, emb[select], seed)
    if run.quantity_of is not None:
        entries = quantity_endpoints(run, entries, held)
    shas = digests(folder)
    return Panel(checkpoint_sha256=shas[0], member_sha256=shas if len(shas) > 1 else None,
                 corpus_sha256=corpus.checksum(), held_out_molecules=int(len(rows)),
                 selection_molecules=int(select.sum()),
                 rule="graphnorm.panel.build: held-out scaffolds dealt to S/R halves, the "
                      "thresholds below (written before any score: experiments/results/pretrain/)",
                 thresholds={"min_select": MIN_SELECT, "min_class": MIN_CLASS,
                             "min_report": MIN_REPORT, "auroc": MIN_AUROC, "r2": MIN_R2,
                             "level": LEVEL, "domain_quantile": DOMAIN_QUANTILE},
                 domain=domain, endpoints=entries)
