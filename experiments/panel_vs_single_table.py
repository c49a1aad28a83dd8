"""One model for every table against one model per table, on the corpus's held-out scaffolds.

RULE.md E (experiments/results/pretrain/RULE.md): for each endpoint the shipped panel judged,
the pre-trained multi-task backbone's prediction against `--model gbm`'s booster on MapLight
features fitted on that endpoint's labelled training molecules alone, both scored on the
report half R of the held-out scaffolds (the panel's metric: ROC-AUC, R² in units); the
verdict per endpoint is a paired bootstrap over R's molecules.

    python experiments/panel_vs_single_table.py --run experiments/results/pretrain/shipped-4x64 \\
        --out experiments/results/pretrain/rule_e

Resumable: each endpoint's scores land in OUT/endpoints.jsonl as it finishes, and a rerun
skips those; MapLight features are cached in chunks under --cache. ``--endpoints N``
takes the first N judged endpoints (a dry run). The backbone's R score is checked against the
panel's own (the same molecules and predictions, so they must agree).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

BOOTSTRAP, LEVEL, SEED = 1000, 0.95, 0
CHUNK = 5000


def score(binary: bool, y: np.ndarray, pred: np.ndarray) -> float:
    from graphnorm.pretrain.evaluate import _auroc, _r2

    return float(_auroc(y, pred) if binary else _r2(y, pred))


def paired_bootstrap(binary: bool, y, a, b, rng) -> tuple[float, float]:
    """The LEVEL interval of score(a) - score(b) over BOOTSTRAP resamples of the molecules
    (a resample with one class only, where ROC-AUC is undefined, is drawn again)."""
    diffs, n = [], len(y)
    while len(diffs) < BOOTSTRAP:
        i = rng.integers(0, n, n)
        if binary and len(np.unique(y[i])) < 2:
            continue
        diffs.append(score(binary, y[i], a[i]) - score(binary, y[i], b[i]))
    lo, hi = np.quantile(diffs, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


def _chunk(smiles: list[str]) -> np.ndarray:
    from graphnorm.chem.tabular import feature_matrix

    return feature_matrix("maplight", smiles)


def maplight_rows(smiles: list[str], rows: np.ndarray, cache: Path, workers: int) -> np.ndarray:
    """MapLight features of the corpus molecules ``rows`` (sorted, unique), computed in chunks
    of CHUNK cached under ``cache`` (a rerun reads what an earlier one computed)."""
    import hashlib
    from multiprocessing import get_context

    key = hashlib.sha256(rows.tobytes()).hexdigest()[:12]
    folder = cache / f"maplight-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    starts = list(range(0, len(rows), CHUNK))
    todo = [s for s in starts if not (folder / f"{s:07d}.npy").is_file()]
    with get_context("fork").Pool(workers) as pool:
        parts = pool.imap(_chunk, [[smiles[r] for r in rows[s:s + CHUNK]] for s in todo])
        for n, (s, x) in enumerate(zip(todo, parts), 1):
            np.save(folder / f"{s:07d}.npy", x)
            print(f"[rule E] MapLight features: chunk {n}/{len(todo)}", flush=True)
    return np.concatenate([np.load(folder / f"{s:07d}.npy") for s in starts])


def summarize(rows: list[dict], total: int) -> str:
    """The counts of RULE E, over all endpoints done, the shown ones, and by corpus."""
    from collections import defaultdict

    def line(name, part):
        v = [r["verdict"] for r in part]
        diff = np.median([r["backbone"] - r["gbm"] for r in part])
        higher = sum(r["backbone"] > r["gbm"] for r in part)
        return (f"| {name} | {len(part)} | {v.count('backbone')} | {v.count('gbm')} | "
                f"{v.count('tied')} | {higher} | {diff:+.3f} |")

    by_corpus = defaultdict(list)
    for r in rows:
        by_corpus[r["task"].split("/")[0]].append(r)
    lines = [f"{len(rows)} of {total} judged endpoints done.", "",
             "| endpoints | n | backbone better | gbm better | tied | backbone higher | median "
             "backbone - gbm |", "|---|---|---|---|---|---|---|",
             line("all done", rows), line("shown in the panel", [r for r in rows if r["shown"]])]
    lines += [line(f"`{c}`", part) for c, part in sorted(by_corpus.items())]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True, help="the shipped pre-training run folder")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=Path("data/cache/rule_e"),
                    help="MapLight features of the corpus molecules, by chunk")
    ap.add_argument("--endpoints", type=int, default=None, help="the first N judged (dry run)")
    ap.add_argument("--threads", type=int, default=1, help="LightGBM's and torch's")
    ap.add_argument("--summary", action="store_true",
                    help="only write OUT/summary.md from the endpoints done")
    ap.add_argument("--workers", type=int, default=2, help="processes computing features")
    args = ap.parse_args()

    import torch

    from graphnorm.baselines.boosted import boosted_trees
    from graphnorm.tasks import CLASSIFICATION, REGRESSION, target_transforms
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.pretrain.panel import PANEL_FILE, held_out_predictions
    from graphnorm.pretrain.setup import PretrainRun
    from graphnorm.pretrain.spec import PretrainSpec

    torch.set_num_threads(args.threads)
    spec = PretrainSpec.from_dict(json.loads((args.run / "pretrain.json").read_text()))
    panel = json.loads((args.run / PANEL_FILE).read_text())
    judged = [e for e in panel["endpoints"] if e["judged"]][:args.endpoints]
    args.out.mkdir(parents=True, exist_ok=True)
    done_path = args.out / "endpoints.jsonl"
    done = {json.loads(l)["task"] for l in done_path.read_text().splitlines()} \
        if done_path.is_file() else set()
    todo = [e for e in judged if e["task"] not in done]
    if args.summary or not todo:
        rows = [json.loads(l) for l in done_path.read_text().splitlines()] if done else []
        (args.out / "summary.md").write_text(summarize(rows, len(judged)))
        print(summarize(rows, len(judged)))
        return
    print(f"[rule E] {len(judged)} judged endpoints, {len(done)} done, {len(todo)} to go", flush=True)
    run = PretrainRun(spec, os.environ.get("GRAPHNORM_RAW_DIR"), workers=1, progress=True)
    held = held_out_predictions(run, load_checkpoint(args.run / "best.ckpt").model)
    corpus, index = run.corpus, {n: t for t, n in enumerate(run.corpus.task_names)}
    report = ~held["select"]
    # each label's molecule; the molecules the backbone trained on
    mol_of = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    is_train = np.zeros(len(corpus), dtype=bool)
    is_train[run.corpus_rows(run.train_positions)] = True
    # every judged endpoint's molecules (not only those to go: a resumed run finds the
    # same feature chunks), training ones and labelled ones of R
    # (label positions, not masks: 149 masks over 1.9 M labels would hold ~280 MB)
    labelled = {e["task"]: np.flatnonzero((corpus.task == index[e["task"]]) & is_train[mol_of])
                for e in judged}
    on_r = report & ~np.isnan(held["y"][:, [index[e["task"]] for e in judged]]).all(1)
    needed = np.unique(np.concatenate([mol_of[m] for m in labelled.values()]
                                      + [held["rows"][on_r]]))
    features = maplight_rows(corpus.smiles, needed, args.cache, args.workers)

    def x_of(rows):  # ``needed`` is sorted and holds every row asked for
        return features[np.searchsorted(needed, rows)]

    for k, e in enumerate(todo, 1):
        t = index[e["task"]]
        binary = bool(run.scaling.binary[t])
        task = CLASSIFICATION if binary else REGRESSION
        start = time.process_time()
        train_rows, train_y = mol_of[labelled[e["task"]]], corpus.value[labelled[e["task"]]]
        r = report & ~np.isnan(held["y"][:, t])
        y_r, ours = held["y"][r, t], held["pred"][r, t]
        # --model gbm's estimator, log10 where its rule asks (a skewed positive target)
        gbm = boosted_trees(task, SEED, args.threads,
                            transforms=target_transforms(task, train_y[:, None]))
        theirs = gbm.fit(x_of(train_rows), train_y[:, None]).predict(x_of(held["rows"][r]))[:, 0]
        s_ours, s_gbm = score(binary, y_r, ours), score(binary, y_r, theirs)
        if e["score"] is not None and abs(s_ours - e["score"]) > 1e-4:
            raise SystemExit(f"{e['task']}: backbone scores {s_ours:.5f} on R, the panel says "
                             f"{e['score']:.5f}: not the same molecules or predictions")
        lo, hi = paired_bootstrap(binary, y_r, ours, theirs, np.random.default_rng(SEED))
        verdict = "backbone" if lo > 0 else "gbm" if hi < 0 else "tied"
        row = {"task": e["task"], "kind": e["kind"], "metric": e["metric"],
               "n_train": int(len(train_rows)), "n_report": int(r.sum()), "backbone": s_ours,
               "gbm": s_gbm, "diff_lo": lo, "diff_hi": hi, "verdict": verdict,
               "shown": e["shown"], "cpu_s": round(time.process_time() - start, 1)}
        with open(done_path, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(f"[rule E] {k}/{len(todo)} {e['task']}: backbone {s_ours:.3f}, gbm {s_gbm:.3f} "
              f"({verdict}; {row['n_train']} train, {row['n_report']} on R)", flush=True)


if __name__ == "__main__":
    main()
