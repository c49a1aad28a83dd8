"""``graphnorm compare A B``: two sets of seeded runs paired by seed, across benchmark folders.

``benchmark`` pairs each variant with ``ln`` inside one ``--out`` folder. Recipes that differ in
more than the norm (batch size, norm slots, pre-training) live in different folders; this pairs
any two of them: each argument is a folder of ``seed<k>/metrics.json`` (``<out>/runs/<variant>``),
and seed k of A meets seed k of B (same seed, same split, same initial draw where the models
match), so the difference is not drowned by the seed-to-seed spread.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from graphnorm.bench.summary import paired_cell, paired_difference
from graphnorm.run_folder import METRICS_FILE, RunRecordError, read_record

def read_seeds(folder: Path, split: str = "test") -> tuple[pd.Series, dict]:
    """``{seed: <split>_<metric>}`` of every finished run in ``folder`` and the facts both sides
    must share (dataset, metric). Raises naming the folder or file when there is nothing to
    read, a metrics.json is malformed, or runs in one folder disagree on dataset or metric."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (expected <benchmark out>/runs/<variant>)")
    values, facts = {}, None
    for path in sorted(folder.glob(f"seed*/{METRICS_FILE}")):
        try:  # paired by the run's own seed, as the benchmark summary pairs them
            record = read_record(path)
            run_facts = {"dataset": record.dataset, "metric": record.metric}
            seed, value = record.seed, float(record.fields[f"{split}_{record.metric}"])
        except (RunRecordError, KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{path}: not a finished run's metrics.json ({err})") from err
        if facts is not None and run_facts != facts:
            raise ValueError(f"{path}: {run_facts} differs from the other runs in {folder} "
                             f"({facts})")
        facts = run_facts
        values[seed] = value
    if not values:
        raise FileNotFoundError(f"{folder}: no finished runs (seed<k>/metrics.json); give a "
                                "variant folder such as <benchmark out>/runs/ln")
    return pd.Series(values, dtype=float).sort_index(), facts


def compare(a: Path, b: Path, split: str = "test") -> dict:
    """A - B per common seed (`paired_difference`), both sides' per-seed values and means.
    Refuses runs on different datasets or metrics: their numbers are not comparable."""
    from graphnorm.tasks import HIGHER_IS_BETTER

    va, fa = read_seeds(a, split)
    vb, fb = read_seeds(b, split)
    if fa != fb:
        raise ValueError(f"{a} ({fa}) and {b} ({fb}) were not measured on the same thing")
    higher = HIGHER_IS_BETTER.get(fa["metric"], False)
    common = va.index.intersection(vb.index)
    if len(common) == 0:
        raise ValueError(f"{a} and {b} have no seed in common: nothing to pair")
    return {"a": str(a), "b": str(b), "split": split, **fa, "higher_is_better": higher,
            "seeds": [int(s) for s in common],
            "unpaired_seeds": sorted(int(s) for s in va.index.symmetric_difference(vb.index)),
            "a_values": [float(va[s]) for s in common], "b_values": [float(vb[s]) for s in common],
            "a_mean": float(va[common].mean()), "b_mean": float(vb[common].mean()),
            **paired_difference(va, vb, higher_is_better=higher)}


def format_comparison(r: dict, digits: int = 4) -> str:
    """Per-seed table and one line of paired Δ, for the terminal and for COMMAND files."""
    key = f"{r['split']} {r['metric']}"
    lines = [f"A = {r['a']}", f"B = {r['b']}", f"{r['dataset']}: {key}, "
             f"{'higher' if r['higher_is_better'] else 'lower'} is better", "",
             "seed   A        B        A - B"]
    for s, x, y in zip(r["seeds"], r["a_values"], r["b_values"]):
        lines.append(f"{s:<6} {x:.{digits}f}   {y:.{digits}f}   {x - y:+.{digits}f}")
    lines += [f"mean   {r['a_mean']:.{digits}f}   {r['b_mean']:.{digits}f}", "",
              f"A - B: {paired_cell(r, digits)}"]
    if r["unpaired_seeds"]:
        lines.append(f"left out (finished on one side only): seeds {r['unpaired_seeds']}")
    return "\n".join(lines)
