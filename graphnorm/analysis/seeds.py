"""``graphnorm analyze --bench DIR``: the embedding geometry of every finished run of a
benchmark, per variant over its seeds, and paired against ``ln`` like the benchmark's metric.

One checkpoint per norm can mislead when seeds differ, so the metrics of ``graphnorm
analyze`` (uniformity L_U, seed paper Eq. 4; EV_k, IsoBN Sec. 5.3; effective rank; the
singular value spectrum, seed paper Fig. 4b/c) are computed on the best checkpoint of every
(variant, seed) run with a ``metrics.json``, on the same split, each featurized as it was
trained. Writes:

- ``analysis.json``: every run's full report, singular values included, so that tables and
  plots can be redrawn from it;
- ``per_seed.csv`` (one row per run, with its test metric) and ``summary.md``: mean ± std
  per variant, and the paired difference to ``ln`` on shared seeds with its 95 % t-interval;
- ``spectrum_{vnode,tokens}.png``: each variant's spectrum s_i / s_1, mean over its seeds.

For a baseline GNN the "[VNode]" row is its pooled graph embedding.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from graphnorm.bench.summary import load_runs, paired_cell, paired_columns, slug
from graphnorm.run_folder import BEST_CHECKPOINT, json_safe

KINDS = ("vnode", "tokens")
METRICS = ("uniformity", "ev_1", "effective_rank")
# which direction is "better" (more uniform, less collapsed) in the paired counts
HIGHER_IS_BETTER = {"uniformity": False, "ev_1": False, "effective_rank": True}


def analyze_benchmark(bench: Path, out: Path, dataset: Optional[str] = None,
                      raw_dir: Optional[str] = None, split: str = "test",
                      limit: Optional[int] = None, max_token_samples: int = 20000) -> dict:
    """The report of every finished run under ``bench`` (a ``graphnorm benchmark --out``)."""
    from torch.utils.data import Subset

    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.data import load_dataset
    from .analyze import checkpoint_dataset, collect_embeddings
    from .metrics import embedding_report

    runs = load_runs(Path(bench))
    metric = runs["metric"].iloc[0]
    report = {"bench": str(bench), "split": split, "metric": metric, "runs": {}}
    rows, loaded_data = [], {}  # (dataset, featurizer) -> splits: runs of a benchmark share one
    for i, r in enumerate(runs.to_dict(orient="records"), 1):
        path = Path(bench) / "runs" / slug(r["norm"]) / f"seed{r['seed']}" / BEST_CHECKPOINT
        if not path.is_file():
            raise FileNotFoundError(f"{path}: the run has a metrics.json but no best.ckpt")
        loaded = load_checkpoint(path)
        name = checkpoint_dataset(loaded, dataset)
        key = (name, loaded.featurizer)
        if key not in loaded_data:
            loaded_data[key] = load_dataset(name, raw_dir=raw_dir, featurizer=loaded.featurizer,
                                            progress=False)
        splits = loaded_data[key]
        data = splits[split]
        if limit:
            data = Subset(data, range(min(limit, len(data))))
        emb = collect_embeddings(loaded, data, max_token_samples=max_token_samples)
        label = f"{r['norm']} seed {r['seed']}"
        report["dataset"], report["graphs"] = name, len(data)
        report["runs"][label] = {"variant": r["norm"], "seed": int(r["seed"]),
                                 "checkpoint": str(path), "data_checksum": splits.checksum,
                                 f"test_{metric}": r[f"test_{metric}"],
                                 **{k: embedding_report(emb[k]) for k in KINDS}}
        row = {"variant": r["norm"], "seed": int(r["seed"]), f"test_{metric}": r[f"test_{metric}"]}
        row.update({f"{k}_{m}": report["runs"][label][k][m] for k in KINDS for m in METRICS})
        rows.append(row)
        print(f"[analyze] {i}/{len(runs)} {label}: [VNode] L_U {row['vnode_uniformity']:.3f}, "
              f"EV_1 {row['vnode_ev_1']:.3f}", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "analysis.json").write_text(json.dumps(json_safe(report), indent=2, allow_nan=False))
    table = pd.DataFrame(rows)
    table.to_csv(out / "per_seed.csv", index=False)
    (out / "summary.md").write_text(to_markdown(table, report))
    _plot_mean_spectra(report, out)
    return report


def paired_vs_ln(table: pd.DataFrame, variant: str, column: str,
                 higher_is_better: bool = False) -> dict:
    """``variant - ln`` of one metric column over shared seeds (`paired_difference`)."""
    return paired_columns(table, variant, column, higher_is_better, by="variant")


def to_markdown(table: pd.DataFrame, report: dict) -> str:
    metric = report["metric"]
    cols = [f"test_{metric}"] + [f"{k}_{m}" for k in KINDS for m in METRICS]
    heads = [f"test {metric}"] + [f"{'[VNode]' if k == 'vnode' else 'tokens'} {m}"
                                  for k in KINDS for m in METRICS]
    lines = [f"# Embedding geometry over seeds: {report['dataset']} {report['split']}, "
             f"{report['graphs']} graphs", "",
             "| variant | seeds | " + " | ".join(heads) + " |", "|---|---|" + "---|" * len(cols)]
    variants = list(dict.fromkeys(table["variant"]))
    for v in variants:
        mine = table[table["variant"] == v]
        cells = []
        for c in cols:
            vals = [float(x) for x in mine[c] if x is not None and np.isfinite(float(x))]
            cell = f"{statistics.mean(vals):.3f}" if vals else "—"
            if len(vals) > 1:  # one seed has no spread to show
                cell += f" ± {statistics.stdev(vals):.3f}"
            cells.append(cell)
        lines.append(f"| `{v}` | {len(mine)} | " + " | ".join(cells) + " |")
    if "ln" in variants and len(variants) > 1:
        lines += ["", "Paired difference to `ln` (variant − ln, same seeds; 'better' = more "
                  "uniform or less collapsed):", ""]
        for v in variants:
            if v == "ln":
                continue
            for m in METRICS:
                p = paired_vs_ln(table, v, f"vnode_{m}", HIGHER_IS_BETTER[m])
                if p["paired_seeds"]:
                    lines.append(f"- `{v}` [VNode] {m}: {paired_cell(p, 3)}")
    lines += ["", "Mean ± sample std over seeds. L_U: lower is more uniform. EV_1: share of "
              "variance along the first principal direction (high = collapsed). Per run: "
              "per_seed.csv; spectra and EV_k curves: analysis.json."]
    return "\n".join(lines) + "\n"


def _plot_mean_spectra(report: dict, out: Path) -> None:
    from .plots import plot_spectra

    for kind in KINDS:
        by_variant: dict[str, list[np.ndarray]] = {}
        for r in report["runs"].values():
            s = np.asarray(r[kind]["spectrum"], dtype=np.float64)
            by_variant.setdefault(r["variant"], []).append(s)
        spectra = {}
        for v, ss in by_variant.items():
            n = min(len(s) for s in ss)  # same width per variant; guard anyway
            spectra[f"{v} (mean of {len(ss)})"] = np.mean([s[:n] for s in ss], axis=0)
        plot_spectra(spectra, out / f"spectrum_{kind}.png",
                     title=f"{'[VNode]' if kind == 'vnode' else 'Token'} singular value spectrum, "
                           f"{report['dataset']} {report['split']}")
