"""``graphnorm panel blend RUN``: columns predicted by the mean of the network's head and a
one-table booster -- the quantity columns of ``QUANTITIES`` and every column a booster
predicts alone -- each kept by a check on the selection half S.

Why: on sources no part of the panel had read (the leave-source-out yardstick of
experiments/results/zero_shot/), the head blended half and half with the panel's own Morgan
booster ranked 4 of 6 sources better than the head and 1 worse. Either alone was worse
somewhere: the booster loses on pharma assays, and the head misses what the booster gets
from public tables. The blend of column q, for a molecule x and a source s of q, is

    ŷ_s(x) = ½ ŷ_head,s(x) + ½ (G(x) + d_s)

where ŷ_head,s is the head's output for source s (a binary column's logit), G the booster on
q's reference scale (a binary column's logit) and d_s the source's offset to it
(`readouts.quantity_sources`; 0 for a column of one source). A binary blend is then
Platt-scaled on S as every binary column is (`build.endpoint`). G is the booster `panel
readouts` fits: where readouts kept a Morgan booster for the column, G is that booster (no
bytes added); otherwise (a quantity column the head predicts) it is fitted here the same way.

The check on S (RULE.md, amendments of session 57 and 58): a quantity column keeps the blend
unless the 95 % paired bootstrap of (blend − present predictor) on S lies wholly below 0 --
a guard, not a choice, since the blend was chosen on sources no panel had read and S favours
boosters that lose on new programs. Any other column takes the blend where its S score is at
least its booster's: no never-read source measures those, so S is the evidence. R scores the
column and gives its interval, as for every endpoint.

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
    """The panel's judged regression columns of ``quantities`` and, after them, every judged
    column a one-table Morgan booster predicts. An unknown quantity is refused; a column the
    panel does not judge is skipped."""
    from graphnorm.quantities import PREFIX, QUANTITIES as KNOWN

    from .boosters import MORGAN

    unknown = [q for q in quantities if q not in KNOWN]
    if unknown:
        raise ValueError(f"unknown quantities {unknown}; the map has {sorted(KNOWN)[:8]} ...")
    found = [panel.endpoint(PREFIX + q) for q in quantities]
    named = [e for e in found if e is not None and e.judged and not e.binary and not e.by_related]
    return named + [e for e in panel.endpoints if e.judged and e.by_booster
                    and (e.features or MORGAN) == MORGAN and e not in named]


def kept_on_select(e, select: dict) -> bool:
    """Whether column ``e`` keeps its blend, given S's `readouts.paired_scores` of (blend,
    present predictor) (module docstring: a guard for a quantity column, else the higher)."""
    if e.is_quantity:
        return select["hi"] is None or select["hi"] >= 0
    return select["booster"] is not None and select["head"] is not None \
        and select["booster"] >= select["head"]


def blend_panel(run, out, quantities=QUANTITIES, threads: int = 1, progress: bool = True) -> Panel:
    """Score the blend of each column `blend_targets` names (module docstring), write
    ``blend.jsonl``, the bundle and the panel with the blends kept; returns the panel."""
    from graphnorm.baselines.booster_store import decode
    from graphnorm.data.build import stage
    from graphnorm.tasks import REGRESSION, target_transforms

    from .boosters import MORGAN, booster_estimator, logit_of, write_bundle
    from .build import endpoint, held_out_predictions
    from .networks import load_networks
    from .readouts import CorpusFeatures, endpoint_sources, paired_scores, pooled_held, \
        pooled_labels, stored_text, training_labels
    from .related import CurrentPredictor

    out = Path(out)
    if not getattr(run.spec, "descriptors", None):
        raise ValueError(f"{out}: a blend's booster reads the backbone's descriptors, and this "
                         "run has none (a --descriptors run's panel can take one)")
    panel = Panel.read(out)
    targets = blend_targets(panel, quantities)
    done = [e.task for e in panel.endpoints if e.by_blend]
    if done:
        raise ValueError(f"{out / 'panel.json'}: {done} are blends already; blend the panel "
                         f"`panel readouts` (and `panel related`) wrote: run them again first")
    stage(progress, f"blend: {len(targets)} columns")
    model = load_networks(out).model
    held = held_out_predictions(run, model)
    index = {n: t for t, n in enumerate(run.corpus.task_names)}
    sources = {e.task: endpoint_sources(run, held, e, index) for e in targets}
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
    rows_out, chosen = [], {}
    for e in targets:
        t = index[e.output or e.task]
        y, _ = pooled_labels(run.corpus, labelled[e.task], e.binary)
        if reused(e):
            text, transform = bundle[e.task]["model"], bundle[e.task]["transform"]
        else:
            transform = (target_transforms(REGRESSION, y[:, None]) or [None])[0]
            x = train_features.of(train_rows[e.task], t, MORGAN)
            text = stored_text(booster_estimator(False, transform, threads).fit(x, y), x)
        g = booster_estimator(e.binary, transform, model=decode(text))

        def booster_values(u, have, d, g=g, t=t, binary=e.binary):
            p = g.predict(features.of(held["rows"][have], t, MORGAN))
            return (logit_of(p) if binary else p) + d

        y_h, head_h, select = pooled_held(held, sources[e.task],
                                          lambda u, have, d: held["pred"][have, u])
        _, g_h, _ = pooled_held(held, sources[e.task], booster_values)
        blend_h = 0.5 * head_h + 0.5 * g_h
        # the present predictor: G itself where it is the column's booster, the head, or
        # another booster (`CurrentPredictor`); G's predictions are not made twice
        cur_h = g_h if reused(e) else head_h if e.by_head else pooled_held(
            held, sources[e.task], lambda u, have, d, e=e: current(e, u, have, d))[1]
        row = {"task": e.task, "present": e.predictor, "n_train": int(len(y)),
               "select": paired_scores(e.binary, y_h[select], blend_h[select], cur_h[select]),
               "report": paired_scores(e.binary, y_h[~select], blend_h[~select],
                                       cur_h[~select])}
        row["kept"] = kept_on_select(e, row["select"])
        rows_out.append(row)
        s = row["select"]
        stage(progress, f"blend: {e.task}: S {e.predictor} {s['head']:.4f} blend "
                        f"{s['booster']:.4f}{' (kept)' if row['kept'] else ' (not kept)'}")
        if row["kept"]:
            stored = dict(bundle[e.task]) if reused(e) else {
                "model": text, "kind": REGRESSION.stored, "transform": transform,
                "features": MORGAN, "own": t}
            if e.is_quantity:
                stored["sources"] = [[run.corpus.task_names[u], d] for u, d in sources[e.task]]
            chosen[e.task] = (endpoint(e.task, e.binary, y_h, blend_h, select, e.units), stored)
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
    rule = ("graphnorm.panel.blend: the head and a booster, half and half: on quantity columns "
            "where it is not worse on S, on booster columns where it is at least as high on S")
    return panel.replace(endpoints=entries, readout_rule="; ".join(
        r for r in (panel.readout_rule, rule) if r))
