"""Why one MapLight gbm per endpoint beats the panel's readout boosters: the features or the
size? A diagnostic on the selection half S of a built panel (issue 68, the 60 % target).

`graphnorm panel readouts` fits a compact LightGBM (200 trees, 15 leaves: it ships in the
wheel) on Morgan counts and the run's fast descriptors; `panel versus-gbm` sets the panel
against a full gbm (500 trees) on MapLight's features (Morgan and Avalon counts, ErG and
RDKit's whole 2D list, ~12 ms a molecule: more than the whole panel spends today). Each
judged endpoint (default: the quantity columns) is fitted here on its training labels as both
commands fit it (a quantity's sources pooled on one scale), in six variants -- features
{readout, lite = MapLight without the 2D list + the fast descriptors, maplight} x size
{compact, gbm} -- and scored on **S only** (the report half R stays the panel's reported
numbers; a lever found here is then chosen per endpoint on S by `panel readouts` as its
boosters are). Each row also records each variant's fit CPU-s; what a feature set costs per
molecule at predict time is measured apart (MapLight's 2D list dominates it).

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/readout_features.py RUN \
        --out experiments/results/panel/readout_features [--all]

Resumable (rows land in OUT/rows.jsonl one endpoint at a time). The training molecules'
MapLight features come from `versus-gbm`'s cache when RUN's versus-gbm ran first (the same
molecule list, so the same cache key); S's are computed once and cached beside them.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

FEATURES, SIZES = ("readout", "lite", "maplight"), ("compact", "gbm")
VARIANTS = ("head", *(f"{a}/{b}" for a in FEATURES for b in SIZES))
LITE_COLUMNS = 1024 + 1024 + 315  # MapLight's Morgan, Avalon and ErG columns, before the 2D list


class Maplight:
    """MapLight features of corpus rows: versus-gbm's cached molecules, and S's."""

    def __init__(self, run, needed, s_rows, cache, progress):
        from graphnorm.panel.versus_gbm import maplight_rows

        self.rows = [needed, np.unique(s_rows)]
        self.x = [maplight_rows(run.corpus.smiles, r, cache, 1, progress) for r in self.rows]

    def of(self, rows):
        out = np.empty((len(rows), self.x[0].shape[1]), np.float32)
        done = np.zeros(len(rows), bool)
        for have, x in zip(self.rows, self.x):
            at = np.clip(np.searchsorted(have, rows), 0, len(have) - 1)
            hit = ~done & (have[at] == rows)
            out[hit], done[hit] = x[at[hit]], True
        if not done.all():
            raise RuntimeError(f"{(~done).sum()} molecules without MapLight features")
        return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run")
    p.add_argument("--out", required=True)
    p.add_argument("--all", action="store_true", help="every judged endpoint, not only quantities")
    p.add_argument("--raw-dir")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)

    from graphnorm.baselines.boosted import boosted_trees
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.data.cache import cache_root
    from graphnorm.panel import PANEL_FILE, Panel
    from graphnorm.panel.boosters import booster_estimator, logit_of
    from graphnorm.panel.build import held_out_predictions
    from graphnorm.panel.readouts import CorpusFeatures, pooled_held, pooled_labels
    from graphnorm.panel.versus_gbm import gbm_molecules
    from graphnorm.pretrain.cli import open_run
    from graphnorm.pretrain.folder import BEST_FILE
    from graphnorm.stats.bootstrap import metric_of, score
    from graphnorm.tasks import CLASSIFICATION, REGRESSION, target_transforms

    folder, out = Path(args.run), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "rows.jsonl"
    done = {json.loads(line)["task"] for line in rows_file.read_text().splitlines()} \
        if rows_file.is_file() else set()
    judged = [e for e in Panel.read(folder / PANEL_FILE).endpoints if e.judged]
    wanted = [e for e in judged if (args.all or e.is_quantity) and e.task not in done]
    print(f"{len(wanted)} endpoints to fit ({len(done)} done)", file=sys.stderr)
    if wanted:
        run = open_run(folder, args.raw_dir, None, 1, True)
        held = held_out_predictions(run, load_checkpoint(folder / BEST_FILE).model)
        index = {n: t for t, n in enumerate(run.corpus.task_names)}
        sources, mol_of, labelled, needed = gbm_molecules(run, held, judged, index)
        maplight = Maplight(run, needed, held["rows"][held["select"]],
                            cache_root(None) / "versus_gbm", True)
        train_rows = np.concatenate([mol_of[m] for e in wanted for m, _ in labelled[e.task]])
        readout = CorpusFeatures(run, np.concatenate([train_rows, held["rows"]]), True)
        for e in wanted:
            t = index[e.output] if e.is_quantity else index[e.task]
            binary = bool(run.scaling.binary[t])
            rows = mol_of[np.concatenate([m for m, _ in labelled[e.task]])]
            y, margin = pooled_labels(run.corpus, labelled[e.task], binary)
            s_mask = held["select"]

            def features(kind, at):
                if kind == "readout":
                    return readout.of(at)
                full = maplight.of(at)
                if kind == "maplight":
                    return full
                return np.concatenate([full[:, :LITE_COLUMNS], readout.of(at)[:, 2048:]], 1)

            row = {"task": e.task, "kind": e.kind, "n_train": int(len(rows))}
            for kind in FEATURES:
                x = features(kind, rows)
                for size in SIZES:
                    start = time.process_time()
                    if size == "compact":
                        transform = None if binary else (target_transforms(REGRESSION, y[:, None])
                                                         or [None])[0]
                        est = booster_estimator(binary, transform, args.threads)
                    else:
                        task = CLASSIFICATION if binary else REGRESSION
                        est = boosted_trees(task, 0, args.threads,
                                            transforms=target_transforms(task, y[:, None])).make(0)
                    est.fit(x, y, init_score=margin)

                    def theirs(u, have, d, est=est, kind=kind):
                        pred = est.predict(features(kind, held["rows"][have & s_mask]))
                        full = np.full(have.sum(), np.nan)
                        full[s_mask[have]] = (logit_of(pred) if binary else pred) + d
                        return full

                    y_h, pred_h, select = pooled_held(held, sources[e.task], theirs)
                    row[f"{kind}/{size}"] = score(metric_of(binary), y_h[select], pred_h[select])
                    row[f"{kind}/{size}/cpu_s"] = round(time.process_time() - start, 1)
            _, head_h, select = pooled_held(held, sources[e.task],
                                            lambda u, have, d: held["pred"][have, u])
            row["head"] = score(metric_of(binary), y_h[select], head_h[select])
            with open(rows_file, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"{e.task}: " + ", ".join(f"{k} {row[k]:.3f}" for k in VARIANTS),
                  file=sys.stderr)
    (out / "summary.md").write_text(summary([json.loads(line) for line in
                                             rows_file.read_text().splitlines()]))
    print((out / "summary.md").read_text())
    return 0


def summary(rows: list[dict]) -> str:
    """Per variant: median S score minus the full MapLight gbm's, and how often above it."""
    lines = [f"{len(rows)} endpoints; scores on the selection half S; against maplight/gbm "
             "(what versus-gbm fits).", "", "| variant | above maplight/gbm | median difference |",
             "|---|---|---|"]
    for name in VARIANTS:
        d = [r[name] - r["maplight/gbm"] for r in rows]
        lines.append(f"| {name} | {sum(x > 0 for x in d)} of {len(d)} | {np.median(d):+.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
