"""``graphnorm panel refit HELD REFIT``: the panel of a model trained on every row, carrying
the choices and scores its held-out build made.

A panel is chosen and scored on held-out scaffolds (`build`, `readouts`): which endpoints are
shown, which a one-table booster predicts, their intervals and Platt scales. Those molecules
are then labels the shipped model never learned from. The refit is the usual last step of a
model chosen on held-out data (cross-validation's "refit on everything"): the same recipe
trained again on every row (``graphnorm pretrain --val-percent 0``), the held-out build's
panel carried over unchanged, and only what is fitted to the training molecules fitted again:

- each chosen booster, on every labelled molecule of its endpoint, with the held build's
  settings and target transform (a booster that reads the network reads the refit one's);
- the far-from-training yardstick (`Domain`): k-means centroids of the refit model's
  embeddings, and a threshold at the same quantile of the training molecules' distances as
  the held build's threshold sat in its own (no molecule is held out to set it afresh).

The scores, intervals and calibrations are the held build's, measured on molecules that model
had not seen; the panel says so (``refit_of``: the checkpoint they were measured on) and so
does its card. The two runs must share the corpus and every setting that shapes the model
(`SAME_FIELDS`); budget, learning-rate schedule, seed and warm start may differ.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from graphnorm.panel import PANEL_FILE, Domain, Panel, nearest_distance

# the settings two runs must share for one's panel to describe the other's model
SAME_FIELDS = ("norm", "num_layers", "hidden", "ffn_hidden", "descriptors", "exclude_tdc",
               "tdc_tables", "corpora", "held_out_tasks", "targets", "weighting", "sampling")
DOMAIN_SAMPLE = 20_000  # training molecules whose embeddings place the centroids (as build)


class RefitError(ValueError):
    """Two runs whose panel cannot be carried from one to the other, named."""


def check_refit(held_spec, refit_spec, held: Panel, corpus_sha256: str) -> None:
    """RefitError unless ``held_spec`` held molecules out, ``refit_spec`` trained every row,
    and both read the same corpus with the same model settings."""
    if held.refit_of is not None:
        raise RefitError("the held-out panel is itself a refit: carry the panel of the run "
                         "that held scaffolds out")
    if held_spec.val_percent == 0:
        raise RefitError("the held-out run trained every row (--val-percent 0): its panel was "
                         "not chosen on held-out molecules")
    if refit_spec.val_percent != 0:
        raise RefitError(f"the refit run holds {refit_spec.val_percent} % of scaffolds out; a "
                         "refit trains every row: `graphnorm pretrain --val-percent 0`")
    differ = [f"{f}: {getattr(held_spec, f)!r} vs {getattr(refit_spec, f)!r}"
              for f in SAME_FIELDS if getattr(held_spec, f) != getattr(refit_spec, f)]
    if differ:
        raise RefitError("the two runs differ in what shapes the model (" + "; ".join(differ)
                         + "): train the refit with the held-out run's settings")
    if corpus_sha256 != held.corpus_sha256:
        raise RefitError(f"the refit run read another corpus (sha256 {corpus_sha256[:16]}…) "
                         f"than the panel was built on ({held.corpus_sha256[:16]}…)")


def carried_domain(held: Domain, held_distances: np.ndarray, embeddings: np.ndarray,
                   seed: int = 0) -> Domain:
    """The refit model's yardstick: centroids of its training ``embeddings``, the threshold at
    the quantile of their distances where ``held``'s threshold sat among ``held_distances``
    (the same molecules' distances under the held model)."""
    from .build import domain_centroids, stored_centroids

    quantile = float(np.mean(held_distances <= held.threshold))
    centroids = domain_centroids(embeddings, seed)
    distance = nearest_distance(embeddings, centroids)
    return Domain(stored_centroids(centroids), float(np.quantile(distance, quantile)))


def refit_panel(held_folder: Path, refit_run, refit_folder: Path, threads: int = 1,
                progress: bool = True, seed: int = 0) -> Panel:
    """Write ``refit_folder``'s panel.json (and its booster bundle) from the held-out build's
    in ``held_folder``; returns the panel."""
    import json

    import torch

    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.data.build import stage
    from graphnorm.pretrain.evaluate import forward_all
    from graphnorm.pretrain.folder import BEST_FILE, SPEC_FILE
    from graphnorm.pretrain.spec import PretrainSpec

    held_folder, refit_folder = Path(held_folder), Path(refit_folder)
    for folder, names in ((held_folder, (SPEC_FILE, BEST_FILE, PANEL_FILE)),
                          (refit_folder, (SPEC_FILE, BEST_FILE))):
        missing = [n for n in names if not (folder / n).is_file()]
        if missing:
            raise RefitError(f"{folder}: no {', '.join(missing)} (the held-out build needs its "
                             "run and its panel built; the refit its run trained)")
    held = Panel.read(held_folder / PANEL_FILE)
    if len(held.checkpoints) > 1:
        raise RefitError(f"{held_folder} is an ensemble of {len(held.checkpoints)} networks: a "
                         "refit carries one network's panel to one refitted network; an ensemble's "
                         "panel is built on its members as they were trained")
    held_spec = PretrainSpec.from_dict(json.loads((held_folder / SPEC_FILE).read_text()))
    check_refit(held_spec, refit_run.spec, held, refit_run.corpus.checksum())
    held_sha = hashlib.sha256((held_folder / BEST_FILE).read_bytes()).hexdigest()
    if held_sha != held.checkpoint_sha256:
        raise RefitError(f"{held_folder / PANEL_FILE} was built from another checkpoint than "
                         f"{held_folder / BEST_FILE}: rebuild it (panel build)")
    model = load_checkpoint(refit_folder / BEST_FILE).model
    rng = np.random.default_rng(seed)
    positions = refit_run.train_positions
    sample = np.sort(rng.choice(positions, min(DOMAIN_SAMPLE, len(positions)), replace=False))
    stage(progress, f"refit: both models' view of {len(sample):,} training molecules")
    views = []
    for m in (load_checkpoint(held_folder / BEST_FILE).model, model):
        torch.manual_seed(seed)
        views.append(forward_all(m, refit_run.loader(refit_run.subset(sample, "domain")),
                                 refit_run.labels_of)[2])
    domain = carried_domain(held.domain, held.domain.distance(views[0]), views[1], seed)
    bundle = None
    if held.readouts_sha256 is not None:
        bundle = _refit_boosters(held_folder, held, refit_run, refit_folder, model, threads,
                                 progress)
    panel = held.replace(
        checkpoint_sha256=hashlib.sha256((refit_folder / BEST_FILE).read_bytes()).hexdigest(),
        domain=domain, readouts_sha256=bundle, refit_of=held.checkpoint_sha256)
    panel.write(refit_folder)
    return panel


def _refit_boosters(held_folder: Path, held: Panel, run, out: Path, model, threads: int,
                    progress: bool) -> str:
    """Each booster of the held build fitted again on every labelled training molecule of its
    endpoint; returns the new bundle's sha256."""
    from graphnorm.data.build import stage
    from graphnorm.tasks import CLASSIFICATION

    from .boosters import BACKBONE, booster_estimator, read_bundle, write_bundle
    from .readouts import CorpusFeatures, pooled_labels, stored_text, training_labels

    stored = read_bundle(held_folder, held, run.spec.descriptors)
    corpus, index = run.corpus, {n: t for t, n in enumerate(run.corpus.task_names)}
    # a quantity's booster pools its sources' labels, moved by the held build's offsets
    mol_of, labelled = training_labels(run, {
        task: [(index[name], d) for name, d in b.get("sources", [[task, 0.0]])]
        for task, b in stored.items()})
    network = any(b["features"] == BACKBONE for b in stored.values())
    features = CorpusFeatures(run, np.concatenate([mol_of[v] for parts in labelled.values()
                                                   for v, _ in parts]),
                              progress, model if network else None)
    boosters = {}
    for k, (task, b) in enumerate(sorted(stored.items()), 1):
        binary = b["kind"] == CLASSIFICATION.stored
        rows = mol_of[np.concatenate([v for v, _ in labelled[task]])]
        y, margin = pooled_labels(corpus, labelled[task], binary)
        x = features.of(rows, b.get("own", index.get(task)), b["features"])
        est = booster_estimator(binary, b["transform"], threads).fit(x, y, init_score=margin)
        boosters[task] = dict(b, model=stored_text(est, x))
        stage(progress, f"refit: booster {k}/{len(stored)} {task} on {len(rows):,} molecules")
    return write_bundle(out, boosters, run.spec.descriptors)
