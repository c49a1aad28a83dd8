"""Build featurized splits of a benchmark from its raw files.

One pass of the featurizer's pool (`graphnorm.chem.featurize_many`, "benchmark" sanitization
so that the official split sizes hold) over all molecules, with the per-molecule extra the
dataset needs computed in the workers: the ZINC label (`labels.zinc_label`) or the Murcko
scaffold for the MolHIV split (`scaffold.murcko_scaffold`). A split comes back as
``(graphs, smiles, y)``: the featurizer's arrays, ready for `cache.pack_split`.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Optional, Sequence

import numpy as np

from .info import SPLITS, DatasetError

CHUNK = 256  # SMILES per task: large enough to amortise IPC, small enough for a smooth bar


class FeaturizeFailed(DatasetError):
    """Molecules of a benchmark that the featurizer rejects (dropping them would change
    the benchmark, so this is an error)."""


def stage(progress: bool, message: str) -> None:
    """One plain line per dataset-building stage, on stderr beside the bars."""
    if progress:
        print(f"[graphnorm] {message}", file=sys.stderr, flush=True)


def bar_enabled(progress: bool) -> bool:
    """A redrawing bar only on a terminal; a log file gets a few `stage` lines instead."""
    return progress and sys.stderr.isatty()


def featurize_with_progress(smiles: Sequence[str], featurizer, sanitize: str,
                            extra: Optional[Callable] = None, workers: int = 2,
                            progress: bool = True, desc: Optional[str] = None,
                            chunk_size: int = CHUNK):
    """`graphnorm.chem.featurize_many` with a tqdm bar (terminal) or a stage line at
    25/50/75/100 % (log file)."""
    from tqdm.auto import tqdm

    from graphnorm.chem import featurize_many

    bar_on, state = bar_enabled(progress), {"done": 0, "quarter": 0}
    total = max(1, len(smiles))
    with tqdm(total=len(smiles), desc=desc or "featurizing", unit="mol", disable=not bar_on) as bar:
        def on_chunk(n: int) -> None:
            bar.update(n)
            state["done"] += n
            if progress and not bar_on and 4 * state["done"] // total > state["quarter"]:
                state["quarter"] = 4 * state["done"] // total
                prefix = f"{desc}: " if desc else ""
                stage(True, f"{prefix}featurized {state['done']:,}/{len(smiles):,} molecules")

        workers = max(1, min(workers, os.cpu_count() or 1))
        return featurize_many(smiles, featurizer, sanitize, extra, workers, chunk_size, on_chunk)


def _raise_failures(name: str, smiles: Sequence[str], failures: list) -> None:
    if failures:
        shown = "; ".join(f"row {i} {smiles[i]!r}: {msg}" for i, msg in failures[:5])
        raise FeaturizeFailed(f"{name}: the featurizer rejected {len(failures)} molecule(s) "
                              f"that the benchmark keeps: {shown}")


def _split(result, smiles: list[str], rows: Sequence[int], y: np.ndarray) -> tuple:
    return [result.graphs[i] for i in rows], [smiles[i] for i in rows], y[list(rows)]


def build_zinc(name: str, rows: dict[str, list[str]], index: Optional[dict[str, list[int]]],
               featurizer, workers: int, progress: bool) -> dict[str, tuple]:
    """ZINC splits: rows (JT-VAE SMILES per split), picked by `index` for the subset.
    One pass over all splits, so one pool and one progress bar."""
    from .labels import zinc_label

    picked = {s: [rows[s][i] for i in index[s]] if index else rows[s] for s in SPLITS}
    smiles = [m for s in SPLITS for m in picked[s]]
    result = featurize_with_progress(smiles, featurizer, "benchmark", zinc_label, workers,
                                     progress, name)
    _raise_failures(name, smiles, result.failures())
    y = np.array(result.extras, dtype=np.float32).reshape(-1, 1)
    out, start = {}, 0
    for split in SPLITS:
        end = start + len(picked[split])
        out[split] = _split(result, smiles, range(start, end), y)
        start = end
    return out


def build_molhiv(smiles: list[str], active: list[int], featurizer, workers: int,
                 progress: bool) -> dict[str, tuple]:
    """ogbg-molhiv from MoleculeNet HIV rows: featurize all, then OGB's scaffold split."""
    from .scaffold import murcko_scaffold, scaffold_split

    result = featurize_with_progress(smiles, featurizer, "benchmark", murcko_scaffold, workers,
                                     progress, "ogbg-molhiv")
    _raise_failures("ogbg-molhiv", smiles, result.failures())
    split = scaffold_split(smiles, result.extras)
    y = np.array(active, dtype=np.float32).reshape(-1, 1)
    return {s: _split(result, smiles, split[s], y) for s in SPLITS}


def label_stats(y: np.ndarray) -> dict:
    """Mean / std / finite fraction of a split's labels (a sanity record in the manifest)."""
    import torch

    y = torch.as_tensor(np.asarray(y)).double().reshape(-1)
    finite = torch.isfinite(y)
    yf = y[finite]
    return {"n": int(y.numel()), "finite": int(finite.sum()),
            "mean": float(yf.mean()) if yf.numel() else float("nan"),
            "std": float(yf.std()) if yf.numel() > 1 else float("nan"),
            "ones": int((yf == 1).sum())}  # actives of a binary task
