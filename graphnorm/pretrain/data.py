"""The corpus featurized once and cached: graphs, loose keys and scaffolds per molecule.

One pass of the featurizer's pool (`graphnorm.chem.featurize_many`, strict sanitization as
for users' tables) computes each molecule's arrays and, in the same workers, its loose key
(benchmark matching) and Murcko scaffold (validation split). Molecules the featurizer rejects
or larger than `MAX_ATOMS` heavy atoms are left out and counted: the batch's attention is
quadratic in its largest molecule, and pre-training needs drug-sized molecules. The cache,
``<cache root>/pretrain/<checksum16>-<featurizer tag>/``, is keyed by the corpus checksum and
the featurizer; a stale or corrupt one is rebuilt with a warning (`graphnorm.data.cache`).

A molecule's graph carries its corpus row as ``y`` ([1] float, exact below 2^24 rows); the
labels are looked up in the sparse `Corpus` per batch (`labels_of`), never stored densely.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from .corpus import Corpus, loose_key

MAX_ATOMS = 100
CACHE_FORMAT = 1


def key_and_scaffold(smiles: str) -> tuple[Optional[str], Optional[str]]:
    """Worker extra: (loose key, Murcko scaffold) of a featurized molecule."""
    from graphnorm.data.scaffold import murcko_scaffold

    return loose_key(smiles), murcko_scaffold(smiles)


def featurized_corpus(corpus: Corpus, featurizer, root=None, workers: int = 1,
                      progress: bool = True) -> dict:
    """{"graphs": packed graphs (`cache.pack_split`) of the kept molecules, "rows": their
    corpus rows, "keys", "scaffolds": per kept molecule, "failed": [(row, message)],
    "too_large": count}, from the cache when built before."""
    from graphnorm.data.build import featurize_with_progress, stage
    from graphnorm.data.cache import cache_root, load_cache, pack_split, save_cache

    key = {"format": CACHE_FORMAT, "corpus": corpus.checksum(), "max_atoms": MAX_ATOMS,
           "featurizer": featurizer.to_dict()}
    directory = cache_root(root) / "pretrain" / f"{corpus.checksum()[:16]}-{featurizer.tag}"
    cached = load_cache(directory, key, ("graphs", "rows", "keys", "scaffolds"))
    if cached is not None:
        return cached[0]
    stage(progress, f"admet_corpus: featurizing {len(corpus):,} molecules "
                    f"(once; cached in {directory})")
    result = featurize_with_progress(corpus.smiles, featurizer, "strict", key_and_scaffold,
                                     workers, progress, desc="corpus")
    failed = [(i, e) for i, e in result.failures()]
    rows = [i for i, g in enumerate(result.graphs)
            if g is not None and g["x"].shape[0] <= MAX_ATOMS]
    too_large = sum(1 for g in result.graphs if g is not None) - len(rows)
    payload = {"graphs": pack_split([result.graphs[i] for i in rows],
                                    [corpus.smiles[i] for i in rows]),
               "rows": rows, "keys": [result.extras[i][0] for i in rows],
               "scaffolds": [result.extras[i][1] for i in rows],
               "failed": failed, "too_large": too_large}
    save_cache(directory, key, payload, {"molecules": len(rows), "failed": len(failed),
                                         "too_large": too_large})
    return payload


def corpus_dataset(payload: dict, positions, split: str):
    """A `GraphDataset` of the featurized molecules at ``positions`` (indices into the
    payload), each carrying its corpus row as ``y``."""
    from graphnorm.data.cache import split_dataset

    positions = torch.as_tensor(np.asarray(positions, dtype=np.int64))
    packed = select_packed(payload["graphs"], positions)
    rows = torch.as_tensor(np.asarray(payload["rows"], dtype=np.float32))[positions]
    return split_dataset(packed, "admet_corpus", split, y=rows.view(-1, 1))


def select_packed(packed: dict, positions: torch.Tensor) -> dict:
    """The packed arrays of the molecules at ``positions``, in that order."""
    nodes, edges = packed["num_nodes"], packed["num_edges"]

    def gather(sizes: torch.Tensor, flat: torch.Tensor, dim: int = 0) -> torch.Tensor:
        starts = torch.cat([sizes.new_zeros(1), sizes.cumsum(0)])[:-1][positions]
        counts = sizes[positions]
        index = (torch.repeat_interleave(starts - torch.cat([counts.new_zeros(1),
                                                             counts.cumsum(0)])[:-1], counts)
                 + torch.arange(int(counts.sum())))
        return flat.index_select(dim, index)

    out = {"x": gather(nodes, packed["x"]),
           "edge_index": gather(edges, packed["edge_index"], dim=1),
           "edge_attr": gather(edges, packed["edge_attr"]),
           "spd": gather(nodes * nodes, packed["spd"]),
           "path": gather(nodes * nodes, packed["path"]),
           "num_nodes": nodes[positions], "num_edges": edges[positions],
           "smiles": [packed["smiles"][i] for i in positions.tolist()]}
    for key in ("fingerprint", "descriptors"):
        if key in packed:
            out[key] = packed[key][positions]
    return out


def labels_of(corpus: Corpus, batch_rows: torch.Tensor) -> torch.Tensor:
    """float32 [B, T]: the corpus labels of a batch (``batch.y``, corpus rows), NaN = none."""
    rows = batch_rows.view(-1).round().long().numpy()
    return torch.from_numpy(corpus.dense(rows))
