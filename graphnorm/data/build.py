"""Build featurized splits from the raw directory (multiprocessing + tqdm).

Each worker featurizes a chunk of SMILES with ``graphnorm.graph.featurize.smiles_to_data_many``
(Contract 2; shortest paths batched per chunk) and computes the per-molecule extra the dataset
needs: the ZINC label (`labels.zinc_label`) or the Murcko scaffold for the MolHIV split
(`scaffold.murcko_scaffold`).
Workers send back numpy arrays, not tensors: torch's multiprocessing pickler would move every
small tensor through shared memory (one file descriptor each), which is slow and can run out
of descriptors.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import sys
from typing import Callable, Optional, Sequence

import torch
from torch_geometric.data import Data

from .info import SPLITS, DatasetError

CHUNK = 256  # SMILES per task: large enough to amortise IPC, small enough for a smooth bar


class FeaturizeFailed(DatasetError):
    """Molecules of a benchmark that the featurizer rejects (dropping them would change
    the benchmark, so this is an error)."""


def _featurizer():
    from graphnorm.graph import featurize

    return featurize


def _work(task: tuple) -> list[tuple]:
    """Worker: [(arrays | None, extra, error | None)] for one chunk of SMILES."""
    smiles, vocab, max_hops, max_dist, extra_kind = task
    featurize = _featurizer()
    extra_fn = _EXTRAS[extra_kind]
    # Batched: shortest paths of the whole chunk in one call (several times faster).
    # "benchmark": keep the molecules OGB keeps (odd valences), so split sizes hold.
    datas = featurize.smiles_to_data_many(smiles, vocab, max_hops, max_dist, workers=1,
                                          errors="none", sanitize="benchmark")
    out = []
    for s, d in zip(smiles, datas):
        arrays, err = None, None
        if d is None:  # featurize again for the message naming the SMILES
            try:
                featurize.smiles_to_data(s, vocab=vocab, max_hops=max_hops, max_dist=max_dist,
                                         sanitize="benchmark")
                err = f"SMILES {s!r} failed in a batch but not alone"
            except featurize.FeaturizationError as e:
                err = str(e)
        else:
            arrays = {k: v.numpy() for k, v in d.items() if torch.is_tensor(v)}
            arrays["num_nodes"] = int(d.num_nodes)
        out.append((arrays, extra_fn(s), err))
    return out


def _zinc_extra(s: str) -> float:
    from .labels import zinc_label

    return zinc_label(s)


def _scaffold_extra(s: str) -> Optional[str]:
    from .scaffold import murcko_scaffold

    return murcko_scaffold(s)


_EXTRAS: dict[str, Callable] = {"zinc_label": _zinc_extra, "scaffold": _scaffold_extra,
                                "none": lambda s: None}


def stage(progress: bool, message: str) -> None:
    """One plain line per dataset-building stage, on stderr beside the bars."""
    if progress:
        print(f"[graphnorm] {message}", file=sys.stderr, flush=True)


def bar_enabled(progress: bool) -> bool:
    """A redrawing bar only on a terminal; a log file gets a few `stage` lines instead."""
    return progress and sys.stderr.isatty()


def _init_worker() -> None:
    from rdkit import RDLogger

    torch.set_num_threads(1)  # the parallelism is across processes
    RDLogger.DisableLog("rdApp.*")  # HIV's odd valences would print thousands of lines


def _context():
    # fork is cheapest (no re-import of torch) and safe here: workers only run RDKit/numpy.
    if sys.platform.startswith("linux"):
        return mp.get_context("fork")
    return mp.get_context("spawn")


def featurize_all(smiles: Sequence[str], vocab: str, max_hops: int, max_dist: int,
                  extra: str = "none", workers: int = 2, progress: bool = True,
                  desc: str = "featurizing") -> tuple[list[Optional[dict]], list, list]:
    """(arrays per molecule, extra per molecule, errors as (row, message)) in input order."""
    from tqdm.auto import tqdm

    tasks = [(list(smiles[i:i + CHUNK]), vocab, max_hops, max_dist, extra)
             for i in range(0, len(smiles), CHUNK)]
    workers = max(1, min(workers, os.cpu_count() or 1, len(tasks)))
    arrays, extras, errors = [], [], []
    bar_on, quarter = bar_enabled(progress), 0
    with tqdm(total=len(smiles), desc=desc, unit="mol", disable=not bar_on) as bar:
        if workers == 1:
            from rdkit import rdBase

            quiet = rdBase.BlockLogs()  # noqa: F841  (silences RDKit while it lives)
            results = map(_work, tasks)
            pool = None
        else:
            pool = _context().Pool(workers, initializer=_init_worker)
            results = pool.imap(_work, tasks)
        try:
            for chunk in results:
                for arr, ext, err in chunk:
                    if err is not None:
                        errors.append((len(arrays), err))
                    arrays.append(arr)
                    extras.append(ext)
                bar.update(len(chunk))
                if progress and not bar_on and 4 * len(arrays) // len(smiles) > quarter:
                    quarter = 4 * len(arrays) // len(smiles)  # a line at 25/50/75/100 %
                    stage(True, f"{desc}: featurized {len(arrays):,}/{len(smiles):,} molecules")
        finally:
            if pool is not None:
                pool.close()
                pool.join()
    return arrays, extras, errors


def to_data(arrays: dict, smiles: str, y: Sequence[float]) -> Data:
    """Rebuild one PyG Data (Contract 2 fields + y float [1, T]) from worker arrays."""
    fields = {k: torch.from_numpy(v) for k, v in arrays.items() if k != "num_nodes"}
    return Data(**fields, num_nodes=arrays["num_nodes"], smiles=smiles,
                y=torch.tensor([list(y)], dtype=torch.float32))


def _raise_failures(name: str, smiles: Sequence[str], errors: list) -> None:
    if errors:
        shown = "; ".join(f"row {i} {smiles[i]!r}: {msg}" for i, msg in errors[:5])
        raise FeaturizeFailed(f"{name}: the featurizer rejected {len(errors)} molecule(s) "
                              f"that the benchmark keeps: {shown}")


def build_zinc(name: str, rows: dict[str, list[str]], index: Optional[dict[str, list[int]]],
               max_hops: int, max_dist: int, workers: int, progress: bool
               ) -> dict[str, list[Data]]:
    """ZINC splits: rows (JT-VAE SMILES per split), picked by `index` for the subset.
    One pass over all splits, so one pool and one progress bar."""
    picked = {s: [rows[s][i] for i in index[s]] if index else rows[s] for s in SPLITS}
    smiles = [m for s in SPLITS for m in picked[s]]
    arrays, labels, errors = featurize_all(smiles, "zinc", max_hops, max_dist, "zinc_label",
                                           workers, progress, name)
    _raise_failures(name, smiles, errors)
    out, start = {}, 0
    for split in SPLITS:
        end = start + len(picked[split])
        out[split] = [to_data(arrays[i], smiles[i], [labels[i]]) for i in range(start, end)]
        start = end
    return out


def build_molhiv(smiles: list[str], active: list[int], max_hops: int, max_dist: int,
                 workers: int, progress: bool) -> dict[str, list[Data]]:
    """ogbg-molhiv from MoleculeNet HIV rows: featurize all, then OGB's scaffold split."""
    from .scaffold import scaffold_split

    arrays, scaffolds, errors = featurize_all(smiles, "ogb", max_hops, max_dist, "scaffold",
                                              workers, progress, "ogbg-molhiv")
    _raise_failures("ogbg-molhiv", smiles, errors)
    split = scaffold_split(smiles, scaffolds)
    return {s: [to_data(arrays[i], smiles[i], [float(active[i])]) for i in split[s]]
            for s in SPLITS}


def label_stats(data_list: list[Data]) -> dict:
    """Mean / std / finite fraction of y (stored in the manifest as a sanity record)."""
    y = torch.cat([d.y for d in data_list]).double()
    finite = torch.isfinite(y)
    yf = y[finite]
    return {"n": int(y.numel()), "finite": int(finite.sum()),
            "mean": float(yf.mean()) if yf.numel() else float("nan"),
            "std": float(yf.std()) if yf.numel() > 1 else float("nan"),
            "ones": int((yf == 1).sum())}  # actives of a binary task
