"""``graphnorm panel related RUN``: a quantity column read through a related quantity's column
(the same measurement in another species, `graphnorm.quantities.related_quantities`), kept
where the selection half S says it beats the panel's predictor of that column.

Why: a sparse species column can rank a new program's molecules worse than a well-measured
species' column read on its scale (ADMET-AI ranks mouse clearance by its human AZ clearance).
The candidate for quantity q through quantity r (the rule, written before it was built:
experiments/results/zero_shot/RULE.md, session 54):

    ŷ_{q,s}(x) = a_s + b · ŷ_r(x)

ŷ_r the network head's value of r's column (its reference source's output, in its unit), b one
slope and a_s one intercept per source s of q, by least squares on q's *training* labels; the
column shows its reference source's a (a source without training labels takes the reference's
plus the head's offset between the two). It is chosen as a booster is (`readouts`): the 95 %
paired bootstrap of (candidate - current) on S has its lower end above 0, current being the
head or the booster the panel has; among several, the higher on S. R is scored for the report
and the split-conformal interval (`build.endpoint`). Each candidate's row lands in
``RUN/related.jsonl``; run it after ``panel readouts`` (which writes the panel afresh).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from .record import RELATED, Panel

ROWS_FILE = "related.jsonl"


def fit_map(x: np.ndarray, y: np.ndarray, source: np.ndarray, n_sources: int
            ) -> tuple[float, np.ndarray]:
    """(b, a [n_sources]) of y ≈ a[source] + b x by least squares; a source without a row
    gets NaN."""
    design = np.column_stack([x, np.eye(n_sources)[source]])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    a = coef[1:].copy()
    a[np.bincount(source, minlength=n_sources) == 0] = np.nan
    return float(coef[0]), a


def halves_scores(y: np.ndarray, candidate: np.ndarray, current: np.ndarray,
                  part: np.ndarray) -> dict:
    """R² of both on one half and the 95 % paired interval of candidate - current: the
    boosters' comparison (`readouts.paired_scores`), in this step's words."""
    from .readouts import paired_scores

    h = paired_scores(False, y[part], candidate[part], current[part])
    return {"n": h["n"], "current": h["head"], "candidate": h["booster"], "lo": h["lo"],
            "hi": h["hi"]}


def head_values(run, model, rows: np.ndarray) -> np.ndarray:
    """The head's values [len(rows), T] (regression outputs in their units) of corpus
    molecules ``rows``, in order."""
    from graphnorm.pretrain.evaluate import forward_all

    unique = np.unique(rows)
    z, _, _, got = forward_all(model, run.loader(run.subset(run.payload_positions(unique),
                                                            "related")), run.labels_of)
    order = np.argsort(got)
    if not np.array_equal(got[order], unique):
        raise RuntimeError("the forward pass returned other molecules than asked")
    value = z[order] * run.scaling.std.numpy()[None, :] + run.scaling.mean.numpy()[None, :]
    return value[np.searchsorted(unique, rows)]


class CurrentPredictor:
    """The panel's present predictions of a quantity column on the held-out molecules, each
    source on its own scale: the head's, or its booster's (as `hybrid` scored it)."""

    def __init__(self, run, out: Path, panel: Panel, held: dict, model, rows: np.ndarray,
                 progress: bool):
        """``rows``: the held-out molecules it will be asked about (their features only)."""
        from .boosters import read_bundle
        from .readouts import CorpusFeatures

        self.held = held
        self.boosters = read_bundle(out, panel, run.spec.descriptors) \
            if panel.booster_tasks() else {}
        backbone = any(b["features"] != "morgan" for b in self.boosters.values())
        self.features = CorpusFeatures(run, rows, progress, model if backbone else None, held) \
            if self.boosters else None

    def __call__(self, e, t: int, have: np.ndarray, offset: float) -> np.ndarray:
        """Source ``t``'s labelled held-out molecules ``have``: the head's output ``t``, or the
        booster's prediction (the reference's scale; a binary column's logit) moved by the
        source's ``offset``."""
        if not e.by_booster:
            return self.held["pred"][have, t]
        from graphnorm.baselines.booster_store import decode

        from .boosters import booster_estimator, logit_of

        stored = self.boosters[e.task]
        x = self.features.of(self.held["rows"][have], stored["own"], stored["features"])
        p = booster_estimator(e.binary, stored["transform"],
                              model=decode(stored["model"])).predict(x)
        return (logit_of(p) if e.binary else p) + offset


def related_panel(run, out, progress: bool = True) -> Panel:
    """Score every candidate (module docstring), write ``related.jsonl`` and the panel with
    the chosen ones; returns the panel."""
    from graphnorm.data.build import stage
    from graphnorm.quantities import PREFIX, related_quantities
    from graphnorm.stats.bootstrap import metric_of, score

    from .build import endpoint, held_out_predictions
    from .networks import load_networks
    from .readouts import pooled_held, quantity_sources, training_labels

    out = Path(out)
    panel = Panel.read(out)
    blends = [e.task for e in panel.endpoints if e.by_blend]
    if blends:  # its present predictor is the head or a booster (`CurrentPredictor`)
        raise ValueError(f"{out / 'panel.json'}: {blends[:3]} are blends already; `panel "
                         "related` comes before `panel blend` (run `panel readouts` again, "
                         "then related, then blend)")
    by_task = {e.task: e for e in panel.endpoints}
    targets = [e for e in panel.endpoints if e.is_quantity and e.judged and not e.binary
               and any(PREFIX + r in by_task for r in related_quantities(e.task[len(PREFIX):]))]
    stage(progress, f"related: {len(targets)} quantity columns with a related one")
    model = load_networks(out).model
    held = held_out_predictions(run, model)
    sources_of = {e.task: quantity_sources(run, held, e) for e in targets}
    asked = np.zeros(len(held["rows"]), dtype=bool)  # labelled for some target's source
    for t, _ in (s for sources in sources_of.values() for s in sources):
        asked |= ~np.isnan(held["y"][:, t])
    current = CurrentPredictor(run, out, panel, held, model, held["rows"][asked], progress)
    index = {n: t for t, n in enumerate(run.corpus.task_names)}
    corpus, rows_out, chosen = run.corpus, [], {}
    for e in targets:
        sources = sources_of[e.task]
        mol_of, labelled = training_labels(run, {e.task: sources})
        parts = labelled[e.task]
        y = np.concatenate([corpus.value[m] for m, _ in parts])
        source = np.concatenate([np.full(len(m), k) for k, (m, _) in enumerate(parts)])
        molecules = mol_of[np.concatenate([m for m, _ in parts])]
        ref = [t for t, _ in sources].index(index[e.output])
        y_h, cur_h, select = pooled_held(held, sources, lambda t, have, d: current(e, t, have, d))
        values = None  # the head's values of the training molecules, once a candidate asks
        said = e.score_select
        got = score(metric_of(False), y_h[select], cur_h[select]) if select.sum() > 1 else None
        if said is not None and got is not None and abs(got - said) > 1e-4:
            raise RuntimeError(f"{e.task}: its predictor scores {got:.5f} on S, its panel says "
                               f"{said:.5f}: {out / 'panel.json'} is not these networks' panel")
        for r in related_quantities(e.task[len(PREFIX):]):
            other = by_task.get(PREFIX + r)
            if other is None:
                continue
            via = index[other.output]
            values = head_values(run, model, molecules) if values is None else values
            b, a = fit_map(values[:, via], y, source, len(sources))
            a = np.where(np.isnan(a), a[ref] + np.array([d for _, d in sources]) - sources[ref][1],
                         a)
            at = {t: k for k, (t, _) in enumerate(sources)}
            _, cand_h, _ = pooled_held(held, sources, lambda t, have, d: a[at[t]] + b * held[
                "pred"][have, via])
            row = {"task": e.task, "via": PREFIX + r, "output": other.output,
                   "n_train": int(len(y)), "slope": b, "intercept": float(a[ref]),
                   "select": halves_scores(y_h, cand_h, cur_h, select),
                   "report": halves_scores(y_h, cand_h, cur_h, ~select)}
            s = row["select"]
            row["chosen"] = s["lo"] is not None and s["lo"] > 0
            rows_out.append(row)
            stage(progress, f"related: {e.task} through {r}: S current {s['current']} "
                            f"candidate {s['candidate']}{' (chosen)' if row['chosen'] else ''}")
            best = chosen.get(e.task)
            if row["chosen"] and (best is None or s["candidate"] > best[0]["select"]["candidate"]):
                chosen[e.task] = (row, endpoint(e.task, False, y_h, cand_h, select, e.units))
    (out / ROWS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows_out))
    new = _with_chosen(panel, chosen)
    new.write(out)
    return new


def _with_chosen(panel: Panel, chosen: dict) -> Panel:
    """``panel`` with each chosen column read through its related one; a column shown for the
    first time hides its sources, as `build.quantity_endpoints` folds them."""
    entries, folded = [], set()
    for e in panel.endpoints:
        if e.task not in chosen:
            entries.append(e)
            continue
        row, new = chosen[e.task]
        head = e.head if e.by_booster else {"score_select": e.score_select, "score": e.score,
                                            "shown": e.shown}
        entries.append(dataclasses.replace(new, readout=RELATED, quantity=e.quantity,
                                           output=e.output, via=row["output"],
                                           affine=(row["intercept"], row["slope"]), head=head))
        if new.shown and not e.shown:
            folded.add(e.task.split("/", 1)[1])
    entries = [dataclasses.replace(e, shown=False) if not e.is_quantity and e.quantity in folded
               else e for e in entries]
    rule = "graphnorm.panel.related: a related quantity's column where it beats the column on S"
    return panel.replace(endpoints=entries, readout_rule="; ".join(
        r for r in (panel.readout_rule, rule) if r))
