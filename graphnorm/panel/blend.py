"""``graphnorm panel blend RUN``: quantity columns predicted by the mean of the network's head
and a one-table booster, kept where the selection half S says the blend is not worse than
the column's present predictor.

Why: on sources no part of the panel had read (the leave-source-out yardstick of
experiments/results/zero_shot/), the head blended half and half with the panel's own Morgan
booster ranked 4 of 6 sources better than the head and 1 worse. Either alone was worse
somewhere: the booster loses on pharma assays, and the head misses what the booster gets
from public tables. The blend of column q, for a molecule x and a source s of q, is

    ŷ_s(x) = ½ ŷ_head,s(x) + ½ (G(x) + d_s)

where ŷ_head,s is the head's output for source s, G the booster on q's reference scale and d_s
the source's offset to it (`readouts.quantity_sources`). G is the booster `panel readouts`
fits for a quantity: the same features, settings and pooled training labels. Where readouts
kept a Morgan booster for the column, G is that booster; otherwise it is fitted here in the
same way. S guards the blend but does not choose it: the column keeps it unless the 95 %
paired bootstrap of (blend − present predictor) on S lies wholly below 0. That choice was
made on sources no panel had read; S favours boosters that lose on new programs. R scores
the column and gives its interval, as for every endpoint (`build.endpoint`).

Each column's row lands in ``RUN/blend.jsonl``. The panel names the booster bundle that now
holds G beside the boosters it already had. Run this step after ``panel readouts`` and
``panel related``; it writes the panel afresh from the one it finds.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from .record import BLEND, Panel

ROWS_FILE = "blend.jsonl"
# the quantity columns the yardstick measured the blend on (experiments/results/zero_shot/)
QUANTITIES = ("logd74", "solubility", "clint_microsomal_human", "papp_caco2")


def blend_targets(panel: Panel, quantities=QUANTITIES) -> list:
    """The panel's judged regression columns of ``quantities``. An unknown name is refused;
    a column the panel does not judge is skipped."""
    from graphnorm.quantities import PREFIX, QUANTITIES as KNOWN

    unknown = [q for q in quantities if q not in KNOWN]
    if unknown:
        raise ValueError(f"unknown quantities {unknown}; the map has {sorted(KNOWN)[:8]} ...")
    found = [panel.endpoint(PREFIX + q) for q in quantities]
    return [e for e in found if e is not None and e.judged and not e.binary and not e.by_related]


def blend_panel(run, out, quantities=QUANTITIES, threads: int = 1, progress: bool = True) -> Panel:
    """Score the blend of each column of ``quantities`` (module docstring), write
    ``blend.jsonl``, the bundle and the panel with the blends kept; returns the panel."""
    from graphnorm.baselines.booster_store import decode
    from graphnorm.data.build import stage
    from graphnorm.tasks import REGRESSION, target_transforms

    from .boosters import MORGAN, booster_estimator, write_bundle
    from .build import endpoint, held_out_predictions
    from .networks import load_networks
    from .readouts import CorpusFeatures, paired_scores, pooled_held, pooled_labels, \
        quantity_sources, stored_text, training_labels
    from .related import CurrentPredictor

    out = Path(out)
    if not getattr(run.spec, "descriptors", None):
        raise ValueError(f"{out}: a blend's booster reads the backbone's descriptors, and this "
                         "run has none (a --descriptors run's panel can take one)")
    panel = Panel.read(out)
    targets = blend_targets(panel, quantities)
    done = [e.task for e in targets if e.by_blend]
    if done:
        raise ValueError(f"{out / 'panel.json'}: {done} are blends already; blend the panel "
                         f"`panel readouts` (and `panel related`) wrote: run them again first")
    stage(progress, f"blend: {len(targets)} quantity columns")
    model = load_networks(out).model
    held = held_out_predictions(run, model)
    sources = {e.task: quantity_sources(run, held, e) for e in targets}
    mol_of, labelled = training_labels(run, sources)
    # the panel's present predictors, its bundle read once, and the held-out molecules'
    # features (computed here only when the panel has no booster to have needed them)
    current = CurrentPredictor(run, out, panel, held, model, held["rows"], progress)
    bundle = current.boosters
    features = current.features or CorpusFeatures(run, held["rows"], progress, None, held)

    def reused(e) -> bool:  # the column's own Morgan booster is readouts' G itself
        stored = bundle.get(e.task)
        return stored is not None and e.by_booster and stored["features"] == MORGAN

    train_rows = {e.task: mol_of[np.concatenate([m for m, _ in labelled[e.task]])]
                  for e in targets if not reused(e)}
    # the training molecules' features, only for the boosters fitted here
    train_features = CorpusFeatures(run, np.concatenate(list(train_rows.values())),
                                    progress) if train_rows else None
    index = {n: t for t, n in enumerate(run.corpus.task_names)}
    rows_out, chosen = [], {}
    for e in targets:
        t = index[e.output]
        y, _ = pooled_labels(run.corpus, labelled[e.task], False)
        if reused(e):
            text, transform = bundle[e.task]["model"], bundle[e.task]["transform"]
        else:
            transform = (target_transforms(REGRESSION, y[:, None]) or [None])[0]
            x = train_features.of(train_rows[e.task], t, MORGAN)
            text = stored_text(booster_estimator(False, transform, threads).fit(x, y), x)
        g = booster_estimator(False, transform, model=decode(text))

        def blended(u, have, d, g=g, t=t):
            return 0.5 * held["pred"][have, u] + 0.5 * (
                g.predict(features.of(held["rows"][have], t, MORGAN)) + d)

        y_h, blend_h, select = pooled_held(held, sources[e.task], blended)
        _, cur_h, _ = pooled_held(held, sources[e.task],
                                  lambda u, have, d, e=e: current(e, u, have, d))
        row = {"task": e.task, "present": e.predictor, "n_train": int(len(y)),
               "select": paired_scores(False, y_h[select], blend_h[select], cur_h[select]),
               "report": paired_scores(False, y_h[~select], blend_h[~select], cur_h[~select])}
        hi = row["select"]["hi"]
        row["kept"] = hi is None or hi >= 0  # a guard, not a choice (module docstring)
        rows_out.append(row)
        s = row["select"]
        stage(progress, f"blend: {e.task}: S {e.predictor} {s['head']:.4f} blend "
                        f"{s['booster']:.4f}{' (kept)' if row['kept'] else ' (worse: not kept)'}")
        if row["kept"]:
            new = endpoint(e.task, False, y_h, blend_h, select, e.units)
            chosen[e.task] = (new, {"model": text, "kind": REGRESSION.stored,
                                    "transform": transform, "features": MORGAN, "own": t,
                                    "sources": [[run.corpus.task_names[u], d]
                                                for u, d in sources[e.task]]})
    (out / ROWS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows_out))
    new_panel = _with_blends(panel, chosen)
    boosters = {**bundle, **{task: b for task, (_, b) in chosen.items()}}
    sha = write_bundle(out, boosters, run.spec.descriptors)
    new_panel = new_panel.replace(readouts_sha256=sha)
    new_panel.write(out)
    return new_panel


def _with_blends(panel: Panel, chosen: dict) -> Panel:
    """``panel`` with each kept column read as a blend: the head's own scores kept under
    ``head`` (a booster column's were there already)."""
    entries = []
    for e in panel.endpoints:
        if e.task not in chosen:
            entries.append(e)
            continue
        new, _ = chosen[e.task]
        head = e.head if e.head is not None else {"score_select": e.score_select,
                                                  "score": e.score, "shown": e.shown}
        entries.append(dataclasses.replace(new, readout=BLEND, features="morgan",
                                           quantity=e.quantity, output=e.output, head=head))
    rule = ("graphnorm.panel.blend: the head and a booster, half and half, on quantity columns "
            "where it is not worse on S")
    return panel.replace(endpoints=entries, readout_rule="; ".join(
        r for r in (panel.readout_rule, rule) if r))
