"""Pre-trained backbones of one run's splits compared endpoint by endpoint, on the held-out
scaffolds (``graphnorm pretrain --compare REF RUN ... --out DIR``).

For every endpoint the reference run's panel judged (`build.endpoint`: enough labels on both
halves), each backbone's ``best.ckpt`` is scored with the panel's metric (ROC-AUC of the
logit; R² in the endpoint's units) on the choosing half S and the report half R of the
held-out molecules (`build.halves`). Against the reference, a paired bootstrap over the
half's labelled molecules gives the 95 % interval of score(run) - score(reference):

    better  if lo > 0,   worse  if hi < 0,   tied  otherwise.

The bootstrap is `bootstrap.paired_interval`, drawn all at once and scored row-wise.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from graphnorm.stats.bootstrap import BOOTSTRAP, SEED, metric_of, paired_interval, score, verdict

VERDICTS = ("better", "worse", "tied")


def same_splits(reference: dict, other: dict) -> list[str]:
    """The spec fields (pretrain.json) that would give another corpus, split or task set."""
    keys = ("seed", "val_percent", "corpora", "exclude_tdc", "held_out_tasks")
    return [k for k in keys if reference.get(k) != other.get(k)]


def _aligned(held: dict, rows: np.ndarray, name: str) -> dict:
    """``held`` (`panel.held_out_predictions`) reordered to the reference's molecules."""
    if np.array_equal(held["rows"], rows):
        return held
    where = {r: i for i, r in enumerate(held["rows"].tolist())}
    missing = [r for r in rows.tolist() if r not in where]
    if missing:
        raise ValueError(f"{name}: {len(missing)} of the reference's held-out molecules are "
                         "not among its own (featurized differently?)")
    idx = np.array([where[r] for r in rows.tolist()])
    return {k: v[idx] for k, v in held.items()}


def compare_backbones(runs: dict, folders: dict, endpoints: list[dict]) -> list[dict]:
    """Per endpoint: each backbone's S and R scores; for every backbone after the first (the
    reference), its interval and verdict against the reference on each half. ``runs``: name
    -> the `PretrainRun` whose featurized molecules that run folder's networks read (one with
    descriptors needs a run featurized with them; runs of the same data may be one object);
    ``folders``: name -> the run folder (its best.ckpt, or an ensemble's members)."""
    from .build import held_out_predictions
    from .networks import load_networks

    names = list(folders)
    ref = names[0]
    held = {n: held_out_predictions(runs[n], load_networks(p).model)
            for n, p in folders.items()}
    held = {n: _aligned(h, held[ref]["rows"], n) for n, h in held.items()}
    run = runs[ref]
    index = {name: t for t, name in enumerate(run.corpus.task_names)}
    select = held[ref]["select"]
    out = []
    for e in endpoints:
        t = index[e.task]
        binary = bool(run.scaling.binary[t])
        y_all = held[ref]["y"][:, t]
        row = {"task": e.task, "metric": "rocauc" if binary else "r2", "shown": e.shown}
        for half, mask in (("S", select), ("R", ~select)):
            m = mask & ~np.isnan(y_all)
            y = y_all[m]
            row[f"n_{half}"] = int(m.sum())
            preds = {n: held[n]["pred"][m, t] for n in names}
            for n in names:
                row[f"{n}_{half}"] = score(metric_of(binary), y, preds[n])
            for n in names[1:]:
                lo, hi = paired_interval(metric_of(binary), y, preds[n], preds[ref],
                                         np.random.default_rng(SEED))
                row[f"{n}_{half}_interval"] = [lo, hi]
                row[f"{n}_{half}_verdict"] = verdict(lo, hi)
        out.append(row)
    return out


def summary(rows: list[dict], names: list[str], gbm: dict | None = None) -> str:
    """Markdown: per compared backbone and half, the verdict counts against the reference;
    with ``gbm`` (endpoint -> one gbm's R score, `versus_gbm`), each backbone's R score
    against it too."""
    ref = names[0]
    lines = [f"{len(rows)} endpoints; reference `{ref}`; verdict = 95 % paired bootstrap "
             f"({BOOTSTRAP} resamples) of score(backbone) - score(`{ref}`).", "",
             "| backbone | half | better | worse | tied | higher in mean | median difference |",
             "|---|---|---|---|---|---|---|"]
    for n in names[1:]:
        for half in ("S", "R"):
            v = [r[f"{n}_{half}_verdict"] for r in rows]
            d = [r[f"{n}_{half}"] - r[f"{ref}_{half}"] for r in rows]
            lines.append(f"| `{n}` | {half} | {v.count('better')} | {v.count('worse')} | "
                         f"{v.count('tied')} | {sum(x > 0 for x in d)} | {np.median(d):+.4f} |")
    paired = [r for r in rows if gbm and r["task"] in gbm]
    if paired:
        lines += ["", f"Against one gbm per endpoint (the reference's versus_gbm.jsonl: "
                  f"{len(paired)} of {len(rows)} endpoints), on R:", "",
                  "| backbone | R above gbm's | median R − gbm |", "|---|---|---|"]
        for n in names:
            d = [r[f"{n}_R"] - gbm[r["task"]] for r in paired]
            lines.append(f"| `{n}` | {sum(x > 0 for x in d)} of {len(d)} | {np.median(d):+.4f} |")
    return "\n".join(lines) + "\n"


def write_comparison(run_dirs: list[Path], out: Path, raw_dir=None, progress: bool = True) -> Path:
    """Compare the ``best.ckpt`` of ``run_dirs`` (the first is the reference: its spec gives
    the splits, its panel.json the endpoints) and write OUT/compare.jsonl and compare.md."""
    from graphnorm.panel import PANEL_FILE, Panel

    from graphnorm.pretrain.setup import PretrainRun
    from graphnorm.pretrain.spec import PretrainSpec
    from .versus_gbm import read_rows

    specs = [json.loads((d / "pretrain.json").read_text()) for d in run_dirs]
    for d, spec in zip(run_dirs[1:], specs[1:]):
        differ = same_splits(specs[0], spec)
        if differ:
            raise ValueError(f"{d} was trained on other splits or tasks than {run_dirs[0]} "
                             f"(settings {differ} differ): its held-out molecules are not "
                             "the reference's")
    panel_path = run_dirs[0] / PANEL_FILE
    if not panel_path.is_file():
        raise FileNotFoundError(f"{panel_path}: the reference run needs its panel "
                                "(`graphnorm panel build REF`)")
    endpoints = [e for e in Panel.read(panel_path).endpoints if e.judged and not e.is_quantity]
    names = [d.name for d in run_dirs]
    if len(set(names)) != len(names):
        raise ValueError(f"the runs need distinct folder names, got {names}")
    # one PretrainRun per featurized data set: only the descriptors change what is featurized
    by_data, runs = {}, {}
    for name, spec in zip(names, specs):
        key = json.dumps(spec.get("descriptors", False))
        if key not in by_data:
            by_data[key] = PretrainRun(PretrainSpec.from_dict(spec), raw_dir, progress=progress)
        runs[name] = by_data[key]
    rows = compare_backbones(runs, dict(zip(names, run_dirs)), endpoints)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    gbm = {r["task"]: r["single_table"] for r in read_rows(run_dirs[0])}  # none: not run
    path = out / "compare.md"
    path.write_text(summary(rows, names, gbm))
    return path
