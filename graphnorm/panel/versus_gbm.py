"""One model for every table against one model per table (``graphnorm panel versus-gbm
RUN``), on the held-out scaffolds of a pre-training run.

For each endpoint the run's panel judged (`build.endpoint`), the backbone's prediction is set
against ``--model gbm``'s booster on MapLight features (`graphnorm.chem.tabular`) fitted on
that endpoint's labelled **training** molecules alone -- what a user with that one table would
train. Both are scored on the report half R of the held-out molecules (`build.halves`) with
the panel's metric (ROC-AUC of the logit; R² in the endpoint's units), and a 95 % paired
bootstrap over R's molecules (`bootstrap.paired_interval`) gives the verdict:

    backbone  if lo > 0,   single_table  if hi < 0,   tied  otherwise.

(The booster's score is stored as ``single_table``: what it is, not which model kind.)

The answer for each endpoint lands in ``RUN/versus_gbm.jsonl`` as it finishes (a rerun skips
those: resumable); ``RUN/versus_gbm.md`` counts the verdicts, over all endpoints, the shown
ones and by corpus (``versus_gbm.png`` draws the shown ones), and how often the predictor the panel ships (the head, or the one-table
booster `panel readouts` chose) scores above the gbm (a rerun after ``panel readouts``
counts the hybrid panel and fits nothing). MapLight features of the corpus molecules are
cached by chunk under the cache root (`graphnorm.data.cache`), since they cost more than the
fits. The gbm side depends only on the run's splits, so two runs of one spec get the same
gbm scores.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Optional

import numpy as np

from .plots import plot_versus_gbm, shipped_score  # one rule for the table and the picture

ROWS_FILE, SUMMARY_FILE, PLOT_FILE = "versus_gbm.jsonl", "versus_gbm.md", "versus_gbm.png"
CHUNK, SEED = 5000, 0


def _maplight(smiles: list[str]) -> np.ndarray:
    from graphnorm.chem.tabular import feature_matrix

    return feature_matrix("maplight", smiles)


def maplight_rows(smiles: list[str], rows: np.ndarray, cache: Path, workers: int = 1,
                  progress: bool = True) -> np.ndarray:
    """MapLight features of the corpus molecules ``rows`` (sorted, unique), computed in chunks
    of CHUNK and cached under ``cache/maplight-<key>`` (a rerun reads them). The key is what
    the features depend on -- the molecules, the feature set's signature, the chemistry
    code -- as `graphnorm.data.feature_cache.table_features` keys a table's. That cache is not
    called: it writes once, when every molecule is done, and these are ~190k molecules
    (~0.6 CPU-hours), so an interrupt would lose them all; chunks land one by one."""
    from multiprocessing import get_context

    from graphnorm.chem.code import chem_code_sha
    from graphnorm.chem.tabular import signature
    from graphnorm.data.build import stage

    wanted = [smiles[r] for r in rows]
    key = hashlib.sha256("\n".join([json.dumps(signature("maplight")), chem_code_sha(), *wanted])
                         .encode()).hexdigest()[:12]
    folder = Path(cache) / f"maplight-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    starts = list(range(0, len(rows), CHUNK))
    todo = [s for s in starts if not (folder / f"{s:07d}.npy").is_file()]
    chunks = [wanted[s:s + CHUNK] for s in todo]

    def store(parts) -> None:
        for n, (s, x) in enumerate(zip(todo, parts), 1):
            tmp = folder / f"{s:07d}.tmp.npy"  # a chunk is whole or absent after an interrupt
            np.save(tmp, x)
            tmp.replace(folder / f"{s:07d}.npy")
            stage(progress, f"versus gbm: MapLight features, chunk {n}/{len(todo)}")

    if workers > 1 and len(todo) > 1:
        with get_context("fork").Pool(workers) as pool:
            store(pool.imap(_maplight, chunks))
    else:
        store(map(_maplight, chunks))
    return np.concatenate([np.load(folder / f"{s:07d}.npy") for s in starts])


def summarize(rows: list[dict], total: int, panel: Optional[dict] = None) -> str:
    """Markdown: verdict counts over all endpoints done, the shown ones, and by corpus. The
    verdict sets the network's head against the gbm; ``panel`` (task -> its `Endpoint` in the
    panel as it stands: a one-table booster predicts it where `panel readouts` chose one,
    else the head) adds how often the panel as a user gets it scores above the gbm on the
    same R molecules -- a comparison of means (the boosters' per-molecule predictions are not
    kept), and which endpoints are shown now, not when the row was written."""
    panel = panel or {}
    shown = {r["task"]: panel[r["task"]].shown if r["task"] in panel else r["shown"]
             for r in rows}

    def line(name, part):
        if not part:
            return f"| {name} | 0 | | | | | | | |"
        v = [r["verdict"] for r in part]
        diff = np.median([r["backbone"] - r["single_table"] for r in part])
        higher = sum(r["backbone"] > r["single_table"] for r in part)
        ours = [(shipped_score(r, panel), r["single_table"]) for r in part]
        return (f"| {name} | {len(part)} | {v.count('backbone')} | {v.count('single_table')} | "
                f"{v.count('tied')} | {higher} | {diff:+.3f} | {sum(a > b for a, b in ours)} | "
                f"{np.median([a - b for a, b in ours]):+.3f} |")

    by_corpus = defaultdict(list)
    for r in rows:
        by_corpus[r["task"].split("/")[0]].append(r)
    def count(kind) -> int:
        return sum(r["task"] in panel and getattr(panel[r["task"]], kind) for r in rows)

    lines = [f"{len(rows)} of {total} judged endpoints done; scores on the report half R of "
             "the held-out scaffolds; verdict = 95 % paired bootstrap over R's molecules of "
             "the head against the gbm. \"panel\": the predictor the panel ships (a one-table "
             f"booster for {count('by_booster')} of these endpoints, the mean of the head and "
             f"a booster for {count('by_blend')}, a related column for {count('by_related')}, "
             "else the head), its R score against the gbm's.", "",
             "| endpoints | n | head better | gbm better | tied | head higher | median "
             "head − gbm | panel higher | median panel − gbm |",
             "|---|---|---|---|---|---|---|---|---|",
             line("all done", rows),
             line("shown in the panel", [r for r in rows if shown[r["task"]]])]
    lines += [line(f"`{c}`", part) for c, part in sorted(by_corpus.items())]
    return "\n".join(lines) + "\n"


def gbm_molecules(run, held: dict, endpoints: list, index: dict) -> tuple:
    """(sources, mol_of, labelled, needed) of ``endpoints``: each one's sources
    (`readouts.endpoint_sources`), `readouts.training_labels`, and the sorted corpus rows whose
    MapLight features the gbm reads -- the training molecules and R's labelled ones; that
    list keys the features' cache."""
    from .readouts import endpoint_sources, training_labels

    sources = {e.task: endpoint_sources(run, held, e, index) for e in endpoints}
    mol_of, labelled = training_labels(run, sources)
    columns = sorted({t for parts in sources.values() for t, _ in parts})
    on_r = ~held["select"] & ~np.isnan(held["y"][:, columns]).all(1)
    needed = np.unique(np.concatenate([mol_of[m] for parts in labelled.values()
                                       for m, _ in parts] + [held["rows"][on_r]]))
    return sources, mol_of, labelled, needed


def read_rows(out: Path) -> list[dict]:
    path = Path(out) / ROWS_FILE
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] \
        if path.is_file() else []


def versus_gbm(run, out: Path, raw_dir=None, endpoints: Optional[int] = None, threads: int = 1,
               workers: int = 1, cache=None, progress: bool = True) -> Path:
    """Fill ``out/versus_gbm.jsonl`` for the judged endpoints of ``out/panel.json`` (the first
    ``endpoints`` of them, if given) and write ``out/versus_gbm.md``; ``run``: the
    `setup.PretrainRun` of the folder's spec."""
    from graphnorm.baselines.boosted import boosted_trees
    from graphnorm.data.build import stage
    from graphnorm.data.cache import cache_root
    from graphnorm.tasks import CLASSIFICATION, REGRESSION, target_transforms

    from graphnorm.stats.bootstrap import metric_of, paired_interval, score
    from graphnorm.pretrain.folder import BEST_FILE
    from graphnorm.panel import PANEL_FILE, Panel

    from .build import held_out_predictions
    from .boosters import logit_of
    from .networks import load_networks
    from .readouts import pooled_labels

    out = Path(out)
    if not (out / PANEL_FILE).is_file():
        raise FileNotFoundError(f"{out / PANEL_FILE}: versus-gbm judges the panel's "
                                f"endpoints; build it first (graphnorm panel build {out})")
    # a quantity against one gbm on its sources' pooled labels, on `readouts`' scale
    judged = [e for e in Panel.read(out / PANEL_FILE).endpoints if e.judged][:endpoints]
    done = {r["task"] for r in read_rows(out)}
    todo = [e for e in judged if e.task not in done]
    stage(progress, f"versus gbm: {len(judged)} judged endpoints, {len(done)} done, "
                    f"{len(todo)} to go")
    if todo:
        held = held_out_predictions(run, load_networks(out).model)
        corpus, index = run.corpus, {n: t for t, n in enumerate(run.corpus.task_names)}
        report = ~held["select"]
        sources, mol_of, labelled, needed = gbm_molecules(run, held, todo, index)
        features = maplight_rows(corpus.smiles, needed, cache_root(cache) / "versus_gbm",
                                 workers, progress)
        for k, e in enumerate(todo, 1):
            t = index[e.output] if e.is_quantity else index[e.task]
            binary = bool(run.scaling.binary[t])
            task = CLASSIFICATION if binary else REGRESSION
            start = time.process_time()
            train_rows = mol_of[np.concatenate([m for m, _ in labelled[e.task]])]
            train_y, margin = pooled_labels(corpus, labelled[e.task], binary)
            # --model gbm's estimator (its one target's), log10 where its rule asks (a skewed
            # positive target); a binary quantity's sources start from their offsets
            gbm = boosted_trees(task, SEED, threads,
                                transforms=target_transforms(task, train_y[:, None])).make(0)
            gbm.fit(features[np.searchsorted(needed, train_rows)], train_y, init_score=margin)
            # R's labels of each source, the gbm's predictions moved to that source's scale
            # (a binary quantity's in log-odds, where its offsets are)
            to_scale = logit_of if binary and e.is_quantity else (lambda p: p)
            parts = []
            for u, d in sources[e.task]:
                r = report & ~np.isnan(held["y"][:, u])
                x_r = features[np.searchsorted(needed, held["rows"][r])]
                parts.append((held["y"][r, u], held["pred"][r, u],
                              to_scale(gbm.predict(x_r)) + d))
            y_r, ours, theirs = (np.concatenate(p) for p in zip(*parts))
            s_ours, s_gbm = score(metric_of(binary), y_r, ours), score(metric_of(binary), y_r, theirs)
            # an entry the head does not predict alone (a booster, a related column, a blend)
            # keeps the head's own scores under "head"
            panel_says = e.head["score"] if e.head is not None else e.score
            if panel_says is not None and abs(s_ours - panel_says) > 1e-4:
                raise RuntimeError(f"{e.task}: the backbone scores {s_ours:.5f} on R, its "
                                   f"panel says {panel_says:.5f}: {out / PANEL_FILE} is not "
                                   f"this {BEST_FILE}'s panel (build it again: graphnorm panel build)")
            lo, hi = paired_interval(metric_of(binary), y_r, ours, theirs,
                                     np.random.default_rng(SEED))
            row = {"task": e.task, "kind": e.kind, "metric": e.metric,
                   "n_train": int(len(train_rows)), "n_report": int(len(y_r)),
                   "backbone": s_ours, "single_table": s_gbm, "diff_lo": lo, "diff_hi": hi,
                   "verdict": "backbone" if lo > 0 else "single_table" if hi < 0 else "tied",
                   "shown": e.shown, "cpu_s": round(time.process_time() - start, 1)}
            with open(out / ROWS_FILE, "a") as f:
                f.write(json.dumps(row) + "\n")
            stage(progress, f"versus gbm: {k}/{len(todo)} {e.task}: backbone "
                            f"{s_ours:.3f}, gbm {s_gbm:.3f} ({row['verdict']})")
    path, rows, now = out / SUMMARY_FILE, read_rows(out), {e.task: e for e in judged}
    path.write_text(summarize(rows, len(judged), now))
    if any(e.shown for e in judged):
        plot_versus_gbm(rows, now, out / PLOT_FILE)
    return path
