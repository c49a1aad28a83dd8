"""A benchmark's results, rebuilt from its runs' files alone: ``summary.{csv,json,md,png}``
and ``curves.png`` in OGB leaderboard form.

Each row is a variant (a Graphormer's norm, or a baseline model) over its seeds: mean ± std
of the test and validation metric at the best validation epoch, the paired difference to
``ln`` on shared seeds with its 95 % t-interval, the test metric of the seeds' ensemble, and
how much the best validation metric still moved in the last 20 % of epochs (flat or not).
With several models (``--models``) each Graphormer variant + baseline pair is also scored as
a two-run ensemble per seed.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from graphnorm.bench.plots import plot_curves, plot_summary, val_curve
from graphnorm.models import DEFAULT_MODEL
from graphnorm.run_folder import METRICS_FILE, json_safe, predictions_file, read_record

_READS: dict | None = None  # path -> frame while `summarize` runs (None: no caching)


def slug(norm: str) -> str:
    return norm.replace(":", "-").replace("+", "-")


def variant(model: str | None, norm: str) -> str:
    """A run's row label: the norm for a Graphormer, the model name for a baseline GNN
    (baselines have their own fixed BatchNorms; ``--norms`` does not apply to them)."""
    return norm if _norm_variants(model) else model


def _norm_variants(model: str | None) -> bool:
    """Whether runs of ``model`` vary over --norms (a record without it: the default model);
    an unknown name (a record of another version) is named by itself."""
    from graphnorm.models import MODEL_KINDS, model_kind

    return (model is None or model in MODEL_KINDS) and model_kind(model).norm_variants


def load_runs(out: Path) -> pd.DataFrame:
    rows = [read_record(p).fields for p in sorted(out.glob(f"runs/*/seed*/{METRICS_FILE}"))]
    if not rows:
        raise FileNotFoundError(f"no finished runs (runs/*/seed*/metrics.json) under {out}")
    runs = pd.DataFrame(rows)
    if "model" not in runs:
        runs["model"] = DEFAULT_MODEL
    runs["model"] = runs["model"].fillna(DEFAULT_MODEL)
    # the summary's rows are variants: a Graphormer's norm, or a baseline's model name
    runs["norm"] = [variant(m, n) for m, n in zip(runs["model"], runs["norm"])]
    return runs


def summarize(out: Path, norms: Sequence[str] | None = None, baseline: str = "ln") -> pd.DataFrame:
    global _READS
    _READS = {}  # each prediction file read once per summary, never reused after it
    try:
        return _summarize(out, norms, baseline)
    finally:
        _READS = None


def _summarize(out: Path, norms: Sequence[str] | None, baseline: str = "ln") -> pd.DataFrame:
    runs = load_runs(out)
    metric = runs["metric"].iloc[0]
    # null test scores (runs on data without a test split: the TDC suite's selection runs)
    # are NaN here, and the paired differences then compare validation scores instead
    runs[f"test_{metric}"] = pd.to_numeric(runs[f"test_{metric}"])
    paired = "test" if runs[f"test_{metric}"].notna().any() else "val"
    norms = list(norms) if norms else list(dict.fromkeys(runs["norm"]))
    table = []
    for norm in norms:
        r = runs[runs["norm"] == norm]
        if r.empty:
            continue
        table.append({
            "norm": norm, "seeds": len(r),
            f"test_{metric}_mean": r[f"test_{metric}"].mean(), f"test_{metric}_std": r[f"test_{metric}"].std(ddof=0),
            f"val_{metric}_mean": r[f"val_{metric}"].mean(), f"val_{metric}_std": r[f"val_{metric}"].std(ddof=0),
            "params": int(r["params"].iloc[0]), "epochs": int(r["epochs"].max()),
            "wall_time_s_mean": r["wall_time_s"].mean(), "hardware": r["hardware"].iloc[0],
            "cpu_time_s_mean": r["cpu_time_s"].mean() if "cpu_time_s" in r else np.nan,
            **paired_vs_baseline(runs, norm, metric, baseline, paired),
            **seed_ensemble(out, norm, sorted(r["seed"]), metric),
            **late_gain(run_logs(out, r)[norm], metric),
            **interval_check(out, norm, sorted(r["seed"])),
        })
    df = pd.DataFrame(table)
    df.to_csv(out / "summary.csv", index=False)
    meta = {"dataset": runs["dataset"].iloc[0], "metric": metric,
            "git_sha": sorted(set(runs["git_sha"])), "data_checksum": sorted(set(map(str, runs["data_checksum"]))),
            "baseline": baseline, "variants": df.to_dict(orient="records"),
            "model_pair_ensembles": model_pair_ensembles(out, runs, metric)}
    # strict JSON: NaN (e.g. the reference variant's paired diff) becomes null
    (out / "summary.json").write_text(json.dumps(json_safe(meta), indent=2, allow_nan=False))
    (out / "summary.md").write_text(to_markdown(df, metric, meta["dataset"], meta["model_pair_ensembles"],
                                                baseline, paired))
    plot_summary(df, metric, out / "summary.png", title=plot_title(runs, meta["dataset"]))
    plot_curves(run_logs(out, runs), metric, out / "curves.png",
                title=plot_title(runs, meta["dataset"], stat=""))
    return df


def seed_ensemble(out: Path, name: str, seeds: Sequence[int], metric: str) -> dict:
    """Test metric of the seeds' mean prediction (an ensemble that costs the seeds' runs, not
    a per-run number), from each run's ``predictions_test.csv.gz``; NaN unless >= 2 runs have
    one and all scored the same molecules with the same labels."""
    score = ensemble_score([_predictions(out, name, s) for s in seeds], metric)
    if score is None:
        return {f"ensemble_test_{metric}": np.nan, "ensemble_seeds": 0}
    return {f"ensemble_test_{metric}": score, "ensemble_seeds": len(seeds)}


def interval_check(out: Path, name: str, seeds: Sequence[int], level: float = 0.9) -> dict:
    """How the calibration that ``predict`` offers holds on each run's test split (own
    tables): regression, the coverage and width of the split-conformal ``level`` interval
    fitted on the run's validation predictions (mean over runs and targets); binary, the ECE
    before and after Platt scaling. Empty when a run lacks its prediction files."""
    from graphnorm.bench.intervals import run_interval_report

    runs = [out / "runs" / slug(name) / f"seed{s}" for s in seeds]
    if not runs or not all((r / predictions_file("val")).is_file() and
                           (r / predictions_file("test")).is_file() for r in runs):
        return {}
    try:
        report = run_interval_report(runs, level)["runs"]
    except (ValueError, KeyError):  # e.g. a validation split with one class
        return {}
    cells = [v for r in report for k, v in r.items() if k != "run"]
    if cells and "coverage" in cells[0]:
        return {"interval_level": level,
                "interval_coverage_mean": float(np.nanmean([c["coverage"] for c in cells])),
                "interval_coverage_min": float(np.nanmin([c["coverage"] for c in cells])),
                "interval_width_mean": float(np.mean([c["width"] for c in cells]))}
    return {"ece_mean": float(np.nanmean([c["ece"] for c in cells])),
            "ece_platt_mean": float(np.nanmean([c["ece_platt"] for c in cells]))}


def model_pair_ensembles(out: Path, runs: pd.DataFrame, metric: str) -> list[dict]:
    """With several models in one benchmark (``--models``): for each Graphormer variant and
    each baseline, the test metric of the two runs' mean prediction on the same seed, as mean
    ± std over the seeds where both have predictions. Such an ensemble costs both runs: it
    is compared with a single run of twice the budget, not with one run. Beside it, the
    metric of the mean prediction of every run of both (all their seeds; NaN unless every
    one of those runs has its predictions): the most the campaign's runs give together."""
    by_norm = runs["model"].map(_norm_variants).astype(bool)
    graphormers = list(dict.fromkeys(runs.loc[by_norm, "norm"]))
    baselines = list(dict.fromkeys(runs.loc[~by_norm, "norm"]))
    seeds_of = {name: sorted(seeds) for name, seeds in runs.groupby("norm")["seed"]}
    pairs = []
    for a in graphormers:
        for b in baselines:
            seeds = sorted(set(seeds_of[a]) & set(seeds_of[b]))
            scores = [ensemble_score([_predictions(out, a, s), _predictions(out, b, s)], metric)
                      for s in seeds]
            scores = [v for v in scores if v is not None]
            if scores:
                every = [_predictions(out, name, s) for name in (a, b) for s in seeds_of[name]]
                together = ensemble_score(every, metric)
                pairs.append({"members": f"{a} + {b}", "seeds": len(scores),
                              f"test_{metric}_mean": float(np.mean(scores)),
                              f"test_{metric}_std": float(np.std(scores)),
                              "all_runs": len(every),
                              f"all_runs_test_{metric}": np.nan if together is None else together})
    return pairs


def _predictions(out: Path, name: str, seed: int) -> Path:
    return out / "runs" / slug(name) / f"seed{seed}" / predictions_file("test")


def _read_predictions(path: Path) -> pd.DataFrame:
    """A run's prediction file; inside `summarize` read once, although the summary scores each
    run in its seed ensemble, its model pairs and the every-run ensemble. Callers only read it."""
    if _READS is None:
        return pd.read_csv(path)
    if path not in _READS:
        _READS[path] = pd.read_csv(path)
    return _READS[path]


def ensemble_score(paths: Sequence[Path], metric: str, split: str = "test") -> float | None:
    """The metric of the runs pooled into one ensemble (`Ensemble.combine`; runs pooled take
    the plain mean, as ``predict`` pools several runs) from their prediction files of
    ``split``, ``paths``; None unless >= 2 files exist and all hold the same molecules with
    the same labels (else the mean would mix different rows)."""
    import torch

    from graphnorm.ensemble import Ensemble, MemberRowsError
    from graphnorm.tasks import compute_metric

    if len(paths) < 2 or not all(p.is_file() for p in paths):
        return None
    ensemble = Ensemble.of_files(paths)  # members known by their prediction files
    try:
        rows, preds = ensemble.split_predictions(split, read=_read_predictions)
    except (KeyError, MemberRowsError):
        return None
    labels = [c for c in rows.columns if c.startswith("y:")]
    if not labels:
        return None
    return float(compute_metric(metric, torch.tensor(ensemble.combine(preds)),
                                torch.tensor(rows[labels].to_numpy())))


def late_gain(logs: Sequence[Path], metric: str, fraction: float = 0.2) -> dict:
    """Has the validation curve flattened? Per run, how much the best validation metric
    improved during the last ``fraction`` of its epochs (>= 0, in the metric's units; near 0:
    flat, so a longer run would barely change the pick); mean and max over the runs with a
    log of >= 5 epochs, else NaN."""
    from graphnorm.tasks import HIGHER_IS_BETTER

    sign = -1.0 if HIGHER_IS_BETTER.get(metric, False) else 1.0  # as "lower is better"
    gains = []
    for log in logs:
        v = val_curve(log, metric)
        if v is None or len(v) < 5:
            continue
        cut = int(round(len(v) * (1 - fraction)))
        v = sign * v.to_numpy()
        gains.append(float(v[:cut].min() - v.min()))
    if not gains:
        return {"val_late_gain_mean": np.nan, "val_late_gain_max": np.nan}
    return {"val_late_gain_mean": float(np.mean(gains)), "val_late_gain_max": float(np.max(gains))}


def run_logs(out: Path, runs: pd.DataFrame) -> dict[str, list[Path]]:
    """Variant -> the CSV logs of its runs, seeds in order."""
    return {name: [_run_log(out / "runs" / slug(name) / f"seed{seed}")
                   for seed in sorted(runs.loc[runs["norm"] == name, "seed"])]
            for name in dict.fromkeys(runs["norm"])}


def _run_log(run: Path) -> Path:
    """A run's CSV log; an ensemble run's is its first member's (the others differ by seed)."""
    own, member = run / "logs" / "metrics.csv", run / "model_0" / "logs" / "metrics.csv"
    return member if not own.is_file() and member.is_file() else own


def plot_title(runs: pd.DataFrame, dataset: str, stat: str = ", mean ± std") -> str:
    """'<dataset>: <budget> per run, seeds 0-2 (n=3)'; the budget is a time when the runs
    had one (--max-time), else their epoch limit."""
    if "budget_s" in runs and runs["budget_s"].notna().any():
        budget = f"{float(runs['budget_s'].max()) / 60:g} min"
    else:
        configs = runs["config"] if "config" in runs else pd.Series(dtype=object)
        limits = {c.get("max_epochs") for c in configs if isinstance(c, dict)} - {None}
        epochs = max(limits) if limits else int(runs["epochs"].max())
        budget = f"{epochs} epochs"
    seeds = sorted({int(s) for s in runs["seed"]})
    span = (f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1))
            else ",".join(map(str, seeds)))
    return f"{dataset}: {budget} per run, seeds {span} (n={len(seeds)}){stat}"


def paired_vs_baseline(runs: pd.DataFrame, norm: str, metric: str, baseline: str = "ln",
                       split: str = "test") -> dict:
    """(variant - baseline) ``split`` metric over the seeds both have run, see `paired_difference`."""
    from graphnorm.tasks import HIGHER_IS_BETTER

    return paired_columns(runs, norm, f"{split}_{metric}", HIGHER_IS_BETTER.get(metric, False), baseline)


def paired_columns(table: pd.DataFrame, name: str, column: str, higher_is_better: bool = False,
                   baseline: str = "ln", by: str = "norm") -> dict:
    """`paired_difference` of ``column`` between the rows of ``name`` and of ``baseline``
    (matched by their ``seed``; rows told apart by column ``by``); none for the baseline."""
    def by_seed(value: str) -> pd.Series:
        return table[table[by] == value].set_index("seed")[column].astype(float)

    if name == baseline:
        return paired_difference(pd.Series(dtype=float), pd.Series(dtype=float))
    return paired_difference(by_seed(name), by_seed(baseline), higher_is_better)


def paired_difference(a: pd.Series, b: pd.Series, higher_is_better: bool = False) -> dict:
    """a - b over the seeds (index) both have: mean, std, a 95 % t-interval of the mean (what
    the spread supports: a CI that holds 0 is no verdict) and the number of seeds where ``a``
    did better. No common seed: NaNs and 0 seeds; one: no interval (NaN)."""
    from scipy import stats

    common = a.index.intersection(b.index)
    if len(common) == 0:
        return {"paired_diff_mean": np.nan, "paired_diff_std": np.nan, "paired_seeds": 0,
                "paired_ci95_low": np.nan, "paired_ci95_high": np.nan, "paired_wins": 0}
    d = (a[common] - b[common]).astype(float)
    n, low, high = len(d), np.nan, np.nan
    if n > 1:
        half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / np.sqrt(n)
        low, high = d.mean() - half, d.mean() + half
    wins = int((d > 0).sum() if higher_is_better else (d < 0).sum())
    return {"paired_diff_mean": float(d.mean()), "paired_diff_std": float(d.std(ddof=0)),
            "paired_seeds": int(n), "paired_ci95_low": float(low), "paired_ci95_high": float(high),
            "paired_wins": wins}


def paired_cell(r: dict, digits: int = 4) -> str:
    """'+0.0123 ± 0.0040, 95% CI [a, b], better on 4/5 (n=5)' from `paired_difference`."""
    def f(v: float, sign: str = "+") -> str:
        return format(v, f"{sign}.{digits}f")

    cell = f(r['paired_diff_mean'])
    if r["paired_seeds"] > 1:  # one pair has no spread to show
        cell += f" ± {f(r['paired_diff_std'], '')}"
    if np.isfinite(r["paired_ci95_low"]):  # NaN for a single pair
        cell += f", 95% CI [{f(r['paired_ci95_low'])}, {f(r['paired_ci95_high'])}]"
    return cell + f", better on {r['paired_wins']}/{r['paired_seeds']} (n={r['paired_seeds']})"


def _seconds(value) -> str:
    """'123 s', or '—' for runs from before CPU time was recorded."""
    return "—" if value is None or not np.isfinite(value) else f"{value:.0f} s"


def _spread(r: dict, column: str) -> str:
    """'0.7600 ± 0.0120' over seeds; one seed has no spread, so just '0.7600'; '—' for a
    split no run scored (the test split of a TDC selection run)."""
    if not np.isfinite(r[f"{column}_mean"]):
        return "—"
    mean = f"{r[f'{column}_mean']:.4f}"
    return mean if r["seeds"] == 1 else f"{mean} ± {r[f'{column}_std']:.4f}"


def to_markdown(df: pd.DataFrame, metric: str, dataset: str, pairs: Sequence[dict] = (),
                baseline: str = "ln", paired: str = "test") -> str:
    from graphnorm.tasks import HIGHER_IS_BETTER

    better = "higher" if HIGHER_IS_BETTER.get(metric, False) else "lower"
    lines = [f"# {dataset}: norm variants ({metric}, {better} is better)", "",
             f"| norm | test {metric} | val {metric} | Δ {paired} vs {baseline} (paired) | seeds | #params | epochs | wall time/run | CPU time/run | hardware |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in df.to_dict(orient="records"):
        diff = "—" if not r["paired_seeds"] else paired_cell(r)
        lines.append(
            f"| {r['norm']} | {_spread(r, f'test_{metric}')} | {_spread(r, f'val_{metric}')} | {diff} | {r['seeds']} "
            f"| {r['params']:,} | {r['epochs']} | {r['wall_time_s_mean']:.0f} s | {_seconds(r.get('cpu_time_s_mean'))} "
            f"| {r['hardware']} |")
    ens = df[df["ensemble_seeds"] > 0].to_dict(orient="records")
    every = [p for p in pairs if np.isfinite(p.get(f"all_runs_test_{metric}", np.nan))]
    late = df[np.isfinite(df["val_late_gain_mean"])].to_dict(orient="records")
    cover = (df[np.isfinite(df["interval_coverage_mean"])].to_dict(orient="records")
             if "interval_coverage_mean" in df else [])
    ece = df[np.isfinite(df["ece_mean"])].to_dict(orient="records") if "ece_mean" in df else []
    for head, items in (
        ("Ensemble of the seeds (mean prediction of every seed's best checkpoint; it costs all "
         "the seeds' training)", [f"{r['norm']} test {metric} {r[f'ensemble_test_{metric}']:.4f} "
                                  f"(n={r['ensemble_seeds']})" for r in ens]),
        ("Two-model ensembles (per seed, the mean prediction of one run of each; it costs both "
         "runs)", [f"{p['members']} test {metric} {p[f'test_{metric}_mean']:.4f} ± "
                   f"{p[f'test_{metric}_std']:.4f} (n={p['seeds']})" for p in pairs]),
        ("Every run of both models (mean prediction of all their seeds; it costs all those runs)",
         [f"{p['members']} test {metric} {p[f'all_runs_test_{metric}']:.4f} ({p['all_runs']} runs)"
          for p in every]),
        (f"Has the validation curve flattened? Gain of the best validation {metric} during the "
         "last 20 % of each run's epochs (mean / max over seeds; near 0 = flat)",
         [f"{r['norm']} {r['val_late_gain_mean']:.4f} / {r['val_late_gain_max']:.4f}" for r in late]),
        ("Split-conformal 90 % intervals (`predict --interval 0.9`, fitted on each run's "
         "validation predictions) on the test molecules: coverage mean (lowest run), mean width",
         [f"{r['norm']} {r['interval_coverage_mean']:.1%} ({r['interval_coverage_min']:.1%}), "
          f"width {r['interval_width_mean']:.3g}" for r in cover]),
        ("Calibration on the test molecules: ECE of the probabilities, before → after Platt "
         "scaling on the validation split (`predict --calibrate platt`)",
         [f"{r['norm']} {r['ece_mean']:.3f} → {r['ece_platt_mean']:.3f}" for r in ece]),
    ):
        if items:  # one sentence per kind of number the campaign has
            lines += ["", f"{head}: " + ", ".join(items) + "."]
    lines += ["", "Mean ± std over seeds, test and validation at the best validation epoch. "
              f"Δ: mean ± std of the per-seed differences to `{baseline}` on the same seeds, their 95 % "
              "t-interval, and on how many seeds the variant did better; an interval that "
              "holds 0 does not separate the two."]
    if paired == "val":
        lines[-1] += (" No run scored a test split (a TDC selection run: `benchmark --suite "
                      "tdc-admet --final` scores test).")
    return "\n".join(lines) + "\n"
