"""Many SMILES -> per-molecule feature arrays (Contract 2) and error messages, in one pool.

Every caller -- dataset building, own-data tables, predict, embed, analyze -- goes through
`featurize_many`: a worker parses and featurizes a chunk of SMILES (`chem.molecule`), batches
the chunk's shortest paths (`chem.paths`), optionally computes a per-molecule extra (a label,
a scaffold), and sends back numpy arrays together with each failure's message, so no
molecule is featurized twice. Arrays, not tensors: torch's pickler would move every small
tensor through shared memory (one file descriptor each), which is slow and can run out of
descriptors.
"""
from __future__ import annotations

import multiprocessing as mp
import sys
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from rdkit import rdBase

from .config import FeaturizerConfig
from .molecule import FeaturizationError, check_sanitize, smiles_to_graph
from .paths import shortest_paths_many

FIELDS = ("x", "edge_index", "edge_attr", "spd", "path")  # the arrays of one molecule
FINGERPRINT = "fingerprint"  # uint8 [1, bits], only with FeaturizerConfig.fingerprint_bits
DESCRIPTORS = "descriptors"  # float32 [1, D], only with FeaturizerConfig.descriptors
MOLECULE_FIELDS = (FINGERPRINT, DESCRIPTORS)  # one row per molecule, when featurized


@dataclass
class Featurized:
    """Per input position: ``graphs[i]`` (dict of `FIELDS` numpy arrays) or None,
    ``errors[i]`` (None or the message naming the SMILES), ``extras[i]`` (``extra(smiles)``
    of a featurized molecule, else None)."""
    graphs: list
    errors: list
    extras: list

    def failures(self) -> list[tuple[int, str]]:
        return [(i, e) for i, e in enumerate(self.errors) if e is not None]


def _featurize_chunk(task: tuple) -> list[tuple]:
    """Worker: [(arrays | None, error | None, extra | None)] for one chunk of SMILES."""
    smiles, featurizer, sanitize, extra = task
    graphs, errors = [], []
    with rdBase.BlockLogs():  # failures become messages, not stderr noise (HIV: thousands)
        for s in smiles:
            try:
                graphs.append(smiles_to_graph(s, featurizer.vocab, sanitize,
                                              featurizer.fingerprint_bits, featurizer.descriptors))
                errors.append(None)
            except FeaturizationError as e:
                graphs.append(None)
                errors.append(str(e))
        ok = [g for g in graphs if g is not None]
        # batched: shortest paths of the whole chunk in one call (several times faster)
        paths = iter(shortest_paths_many([(g[1], g[0].shape[0]) for g in ok],
                                         featurizer.max_hops, featurizer.max_dist))
        out = []
        for s, g, err in zip(smiles, graphs, errors):
            if g is None:
                out.append((None, err, None))
                continue
            arrays = dict(zip(FIELDS, (*g[:3], *next(paths))))
            if featurizer.fingerprint_bits:
                arrays[FINGERPRINT] = g[3]
            if featurizer.descriptors:
                arrays[DESCRIPTORS] = g[4]
            out.append((arrays, None, extra(s) if extra is not None else None))
    return out


def _pool_context():
    # fork is cheapest (no re-import) and safe here: workers only run RDKit and numpy
    return mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def featurize_many(smiles: Sequence[str], featurizer: FeaturizerConfig,
                   sanitize: str = "strict", extra: Optional[Callable] = None,
                   workers: int = 1, chunk_size: int = 512,
                   on_chunk: Optional[Callable[[int], None]] = None) -> Featurized:
    """Featurize many SMILES in input order; never raises for a bad molecule.

    sanitize: "strict" (user input) or "benchmark" (dataset building, see chem.molecule).
    extra: a module-level function of one SMILES, run in the workers for featurized ones.
    workers > 1: a process pool over chunks. on_chunk(n): called with each chunk's size as it
    arrives (progress bars).
    """
    check_sanitize(sanitize)
    smiles = list(smiles)
    size = max(1, chunk_size)
    tasks = [(smiles[i:i + size], featurizer, sanitize, extra) for i in range(0, len(smiles), size)]
    workers = max(1, min(workers, len(tasks)))
    pool = _pool_context().Pool(workers) if workers > 1 else None
    result = Featurized([], [], [])
    try:
        for chunk in (pool.imap(_featurize_chunk, tasks) if pool else map(_featurize_chunk, tasks)):
            for arrays, err, ext in chunk:
                result.graphs.append(arrays)
                result.errors.append(err)
                result.extras.append(ext)
            if on_chunk is not None:
                on_chunk(len(chunk))
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return result


def featurize_smiles(smiles: str, featurizer: FeaturizerConfig, sanitize: str = "strict") -> dict:
    """The arrays of one SMILES; raises FeaturizationError naming it."""
    result = featurize_many([smiles], featurizer, sanitize)
    if result.errors[0] is not None:
        raise FeaturizationError(result.errors[0])
    return result.graphs[0]


class MoleculeGraph:
    """One featurized molecule as tensors (Contract 2): the `FIELDS` and whichever
    `MOLECULE_FIELDS` were featurized, ``num_nodes`` and ``smiles`` -- the attributes
    `graphnorm.graph.collate_graphs` reads, as from a PyG ``Data``.

    The predict path (``predict``, ``admet``, ``explain``, ``embed``, ``serve``) batches these
    instead of ``Data``: importing PyG costs ~3 s, a third of a one-molecule ``graphnorm
    admet`` call. The cached training sets stay PyG datasets; `to_pyg` gives the ``Data``.
    """

    def __init__(self, fields: dict, num_nodes: int, smiles: Optional[str] = None):
        for name, value in fields.items():
            setattr(self, name, value)
        self.num_nodes, self.smiles, self._fields = num_nodes, smiles, tuple(fields)

    def to_pyg(self):
        from torch_geometric.data import Data

        return Data(**{k: getattr(self, k) for k in self._fields}, num_nodes=self.num_nodes,
                    smiles=self.smiles)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}={list(getattr(self, k).shape)}" for k in self._fields)
        return f"MoleculeGraph({shapes}, num_nodes={self.num_nodes}, smiles={self.smiles!r})"


def graph_data(arrays: dict, smiles: Optional[str] = None) -> MoleculeGraph:
    """One molecule's arrays as the tensors `collate_graphs` batches."""
    import torch

    fields = {k: torch.from_numpy(arrays[k]) for k in FIELDS + MOLECULE_FIELDS if k in arrays}
    return MoleculeGraph(fields, int(arrays["x"].shape[0]), smiles)


def smiles_to_data(smiles: str, vocab: Optional[str] = None, sanitize: str = "strict",
                   **settings):
    """One SMILES -> Data(x, edge_index, edge_attr, spd, path, num_nodes, smiles), with
    FeaturizerConfig(vocab, **settings) (tests, notebooks; e.g. vocab="zinc", max_hops=3)."""
    featurizer = FeaturizerConfig(**({"vocab": vocab} if vocab else {}), **settings)
    return graph_data(featurize_smiles(smiles, featurizer, sanitize), smiles).to_pyg()
