"""The hybrid panel (`graphnorm panel readouts`): the endpoints where S chose a one-table booster
(`readout.fit_readouts`) take its predictions, scored, shown and calibrated exactly as the panel
scores the head's (`build.endpoint`); the rest keep the head. With ``backbone``, a second
booster that also reads the network is then set against that panel, endpoint by endpoint.

Files of a run folder:

- ``panel.head.json``: the head-only panel as ``panel build`` wrote it (kept on the first
  ``panel readouts``; every later one starts from it, so a rerun gives the same panel);
- ``panel.json``: the hybrid panel, each replaced entry marked ``"readout": "booster"`` with
  the head's own scores under ``"head"``, and ``"readouts_sha256"`` naming the bundle;
- ``readouts.json.xz``: the chosen boosters (LightGBM model strings) and what their features
  are, what `graphnorm admet` loads beside the checkpoint;
- ``readout.md``: the verdict counts.

The boosters chosen may add at most `MAX_BOOSTER_BYTES`; beyond it, those with the smallest
gain on S go back (J's to the head; K's, first, to what they replaced): the wheel's weights
stay within 15 MB.
"""
from __future__ import annotations

import dataclasses
import gzip
import shutil
from pathlib import Path

import numpy as np

from graphnorm.baselines.booster_store import decode
from graphnorm.panel import BOOSTER, PANEL_FILE, Panel
from graphnorm.panel.boosters import (BACKBONE, MORGAN, booster_estimator, logit_of,
                                      write_bundle)
from graphnorm.tasks import CLASSIFICATION

from .readouts import CorpusFeatures, booster_file, compact_model_text, fit_readouts, pooled_held

HEAD_PANEL, SUMMARY_FILE = "panel.head.json", "readout.md"
MAX_BOOSTER_BYTES = 6_000_000


def within_budget(rows: list[dict], budget: int = MAX_BOOSTER_BYTES,
                  shipped: list[dict] = ()) -> list[dict]:
    """The chosen ``rows`` that ship: by gain on S, largest first, while their bytes fit
    beside ``shipped`` (boosters already in the bundle); a row that replaces a shipped
    booster of its endpoint frees that booster's bytes (K's against J's)."""
    freed = {r["task"]: r["bytes"] for r in shipped}
    used, kept = sum(freed.values()), []
    for r in sorted((r for r in rows if r["chosen"]),
                    key=lambda r: r["select"]["booster"] - r["select"]["head"], reverse=True):
        delta = r["bytes"] - freed.get(r["task"], 0)
        if used + delta <= budget:
            kept.append(r)
            used += delta
    return kept


def write_readout_panel(run, out: Path, threads: int = 1, progress: bool = True,
                        backbone: bool = False) -> Path:
    """Fit what is missing (J's boosters, then, with ``backbone``, K's against J's panel),
    then write the hybrid ``panel.json``, its bundle and ``readout.md``; returns the
    summary's path."""
    from .build import endpoint, held_out_predictions
    from .networks import load_networks

    out = Path(out)
    if not (out / PANEL_FILE).is_file():
        raise FileNotFoundError(f"{out / PANEL_FILE}: readouts choose among the panel's "
                                f"endpoints; build it first (graphnorm panel build {out})")
    if Panel.read(out / PANEL_FILE).readouts_sha256 is None:  # panel build wrote it: the
        shutil.copyfile(out / PANEL_FILE, out / HEAD_PANEL)  # head's panel
    head = Panel.read(out / HEAD_PANEL)
    model = load_networks(out).model
    held = held_out_predictions(run, model)  # once: the fits and the panel read it
    j_rows = fit_readouts(run, out, threads, progress, MORGAN, held=held)
    features = CorpusFeatures(run, held["rows"], progress, model if backbone else None, held)
    index = {n: t for t, n in enumerate(run.corpus.task_names)}
    stored = {}  # (variant, task) -> (model text, held-out predictions)
    for r in (r for r in j_rows if r["chosen"]):
        stored[MORGAN, r["task"]] = _stored(out, r, MORGAN, features, held, index)
    j_kept = within_budget([_sized(r, stored[MORGAN, r["task"]]) for r in j_rows
                            if r["chosen"]])
    k_rows, k_kept = [], []
    if backbone:
        # K is set against the panel J made: its booster where J kept one, else the head
        k_rows = fit_readouts(run, out, threads, progress, BACKBONE,
                              {r["task"]: stored[MORGAN, r["task"]][1] for r in j_kept
                               if "sources" not in r}, held)
        for r in (r for r in k_rows if r["chosen"]):
            stored[BACKBONE, r["task"]] = _stored(out, r, BACKBONE, features, held, index)
        k_kept = within_budget([_sized(r, stored[BACKBONE, r["task"]]) for r in k_rows
                                if r["chosen"]], shipped=j_kept)
    final = {r["task"]: r for r in j_kept}
    final.update({r["task"]: r for r in k_kept})
    entries, boosters = [], {}
    for e in head.endpoints:
        r = final.get(e.task)
        if r is None:
            entries.append(e)
            continue
        binary = r["kind"] == CLASSIFICATION.stored
        t = index[e.output] if e.is_quantity else index[e.task]  # the output it stands for
        variant = r.get("variant", MORGAN)  # rows of J's first runs do not name it
        text, pred, (y, pooled, select) = stored[variant, e.task]
        new = endpoint(e.task, binary, y, pooled, select, e.units)
        entries.append(dataclasses.replace(
            new, readout=BOOSTER, features=variant, quantity=e.quantity, output=e.output,
            head={"score_select": e.score_select, "score": e.score, "shown": e.shown}))
        boosters[e.task] = {"model": text, "kind": r["kind"], "transform": r["transform"],
                            "features": variant, "own": t,
                            # a quantity's: its sources' offsets to the scale it predicts
                            **({"sources": r["sources"]} if "sources" in r else {})}
    sha = write_bundle(out, boosters, run.spec.descriptors)
    panel = head.replace(endpoints=entries, readouts_sha256=sha,
                         readout_rule="graphnorm.panel.readouts: a one-table booster where it "
                         "beats the head on S (95 % paired bootstrap)"
                         + ("; one reading the network too where that beats it" if backbone
                            else ""))
    panel.write(out)
    path = out / SUMMARY_FILE
    text = summarize([_sized(r, stored[MORGAN, r["task"]]) if r["chosen"] else r
                      for r in j_rows], j_kept, head, panel)
    if backbone:
        text += summarize_backbone(k_rows, k_kept, len(final), panel)
    path.write_text(text)
    return path


def _stored(out: Path, row: dict, variant: str, features, held: dict, index: dict) -> tuple:
    """(the compact model text of a chosen booster; its predictions of every held-out
    molecule labelled for its endpoint, logits or values, NaN elsewhere (None for a
    quantity); (labels, predictions, S mask) of the endpoint's held-out labels, a quantity's
    sources pooled, each source's predictions moved to its scale (`readouts.pooled_held`))."""
    binary = row["kind"] == CLASSIFICATION.stored
    # a quantity's booster predicts on its reference source's scale (sources: offsets to it)
    sources = [(index[name], d) for name, d in row.get("sources", [[row["task"], 0.0]])]
    t = index[row.get("output", row["task"])]
    have = ~np.isnan(held["y"][:, t]) if "sources" not in row else \
        np.any([~np.isnan(held["y"][:, u]) for u, _ in sources], axis=0)
    x = features.of(held["rows"][have], t, variant)
    # booster files written before the compact format shrink here (same predictions)
    text = compact_model_text(gzip.decompress(booster_file(out, row["number"], variant)
                                              .read_bytes()).decode(), x)
    pred = np.full(len(have), np.nan)
    pred[have] = booster_estimator(binary, row["transform"], model=decode(text)).predict(x)
    if binary:
        pred[have] = logit_of(pred[have])
    pooled = pooled_held(held, sources, lambda u, mask, d: pred[mask] + d)
    return text, (None if "sources" in row else pred), pooled


def _sized(row: dict, stored: tuple) -> dict:
    return dict(row, bytes=len(gzip.compress(stored[0].encode(), mtime=0)))


def _cells(part: list[dict], half: str) -> str:
    """n | better | worse | tied | higher | median difference, over the rows scored on
    ``half`` ("booster" against what it was set against, "head" in the rows)."""
    part = [r for r in part if r[half]["lo"] is not None]  # scored on that half
    better = sum(r[half]["lo"] > 0 for r in part)
    worse = sum(r[half]["hi"] < 0 for r in part)
    diff = [r[half]["booster"] - r[half]["head"] for r in part]
    med = f"{np.median(diff):+.3f}" if diff else ""
    return (f"{len(part)} | {better} | {worse} | {len(part) - better - worse} | "
            f"{sum(d > 0 for d in diff)} | {med}")


def _table(rows: list[dict], kept: list[dict]) -> list[str]:
    return [f"| all judged | S | {_cells(rows, 'select')} |",
            f"| all judged | R | {_cells(rows, 'report')} |",
            f"| replaced | S | {_cells(kept, 'select')} |",
            f"| replaced | R | {_cells(kept, 'report')} |"]


def _first_condition(kept: list[dict]) -> str:
    """'B against W: **met**' -- the rule's condition on R over the replaced endpoints."""
    scored = [r for r in kept if r["report"]["lo"] is not None]
    better = sum(r["report"]["lo"] > 0 for r in scored)
    worse = sum(r["report"]["hi"] < 0 for r in scored)
    return f"{better} against {worse}: **{'met' if better > worse else 'not met'}**"


def summarize(rows: list[dict], kept: list[dict], head: Panel, panel: Panel) -> str:
    """Markdown: what S chose, how it fell on R, and the panel before and after."""
    chosen = [r for r in rows if r["chosen"]]
    size = sum(r["bytes"] for r in kept)
    fit_cpu = sum(r["cpu_s"] for r in rows)
    lines = [f"{len(rows)} judged endpoints fitted ({fit_cpu / 3600:.2f} CPU-hours); the booster "
             f"chosen on S for {len(chosen)}, {len(kept)} within the size budget "
             f"({size / 1e6:.1f} MB).", "",
             "| endpoints | half | n | booster better | head better | tied | booster higher | "
             "median booster − head |", "|---|---|---|---|---|---|---|---|",
             *_table(rows, kept), "",
             f"Shown: {head.shown} endpoints with the head alone, {panel.shown} in the "
             "panel written (with the network-reading boosters too, when they ran).", "",
             "The readout rule's first condition (over the replaced, the booster better on R on more than "
             f"it is worse): {_first_condition(kept)}. The second (speed) is measured on the "
             "panel (`graphnorm admet`), not here."]
    return "\n".join(lines) + "\n"


def summarize_backbone(rows: list[dict], kept: list[dict], boosted: int, panel: Panel) -> str:
    """Markdown: the network-reading boosters against the Morgan boosters' panel, and the
    panel after both."""
    chosen = [r for r in rows if r["chosen"]]
    fit_cpu = sum(r["cpu_s"] for r in rows)
    return "\n".join([
        "", "## Boosters that also read the backbone (against the Morgan boosters' panel)", "",
        f"{len(rows)} judged endpoints fitted ({fit_cpu / 3600:.2f} CPU-hours); chosen on S "
        f"for {len(chosen)}, {len(kept)} within the size budget. {boosted} endpoints are now "
        f"predicted by boosters; {panel.shown} shown.", "",
        "| endpoints | half | n | +network better | current better | tied | +network higher | "
        "median +network − current |",
        "|---|---|---|---|---|---|---|---|", *_table(rows, kept), "",
        "Its first condition (over the replaced, +network better on R on more than it is worse): "
        f"{_first_condition(kept)}.", ""])
