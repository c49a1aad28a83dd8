"""Carry the featurized pre-training corpus to a lent GPU machine, which has no RDKit.

The corpus cache (`graphnorm.pretrain.data.featurized_corpus`) is 3.7 GB, 88 % of it the
shortest-path arrays (``spd``, ``path``) that follow from the bonds alone; the device tool
carries 64 MiB. So ``pack`` (here) keeps the atoms, bonds and per-molecule strings in their
smallest dtypes, compressed, and ``unpack`` (there) recomputes ``spd``/``path`` with the
package's own `chem.paths.shortest_paths_many` (the featurizer's code) in a process pool and
writes the cache where `featurized_corpus` finds it, under the same key: the run there reads
byte-for-byte the arrays the featurizer would have written.

    python experiments/device_corpus.py pack --out .gpu/corpus.npz      # here
    python experiments/device_corpus.py unpack --packed .gpu/corpus.npz --raw-dir .gpu/raw  # there
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

SMALL = {"x": np.uint8, "edge_index": np.uint8, "edge_attr": np.uint8,
         "num_nodes": np.uint8, "num_edges": np.uint16}
TEXT = ("smiles", "keys", "scaffolds")


def _cache_dir_and_key(raw_dir):
    from graphnorm.data.cache import cache_root
    from graphnorm.data.table_dataset import table_featurizer
    from graphnorm.pretrain.corpus import load_corpus
    from graphnorm.pretrain.data import CACHE_FORMAT, MAX_ATOMS

    corpus = load_corpus(raw_dir)
    featurizer = table_featurizer()
    key = {"format": CACHE_FORMAT, "corpus": corpus.checksum(), "max_atoms": MAX_ATOMS,
           "featurizer": featurizer.to_dict()}
    directory = cache_root() / "pretrain" / f"{corpus.checksum()[:16]}-{featurizer.tag}"
    return directory, key, featurizer


def pack(raw_dir, out: Path) -> None:
    from graphnorm.data.cache import load_cache

    directory, key, _ = _cache_dir_and_key(raw_dir)
    cached = load_cache(directory, key, ("graphs", "rows", "keys", "scaffolds"))
    if cached is None:
        raise SystemExit(f"no corpus cache in {directory}: run `graphnorm pretrain` here first")
    payload, manifest = cached
    g = payload["graphs"]
    arrays = {}
    for name, dtype in SMALL.items():
        a = g[name].numpy()
        if a.size and (a.min() < np.iinfo(dtype).min or a.max() > np.iinfo(dtype).max):
            raise SystemExit(f"{name} does not fit {np.dtype(dtype).name}")
        arrays[name] = a.astype(dtype)
    arrays["rows"] = np.asarray(payload["rows"], dtype=np.int32)
    texts = {"smiles": g["smiles"], "keys": payload["keys"], "scaffolds": payload["scaffolds"]}
    for name in TEXT:
        arrays[name] = np.frombuffer("\n".join(v or "" for v in texts[name]).encode(), np.uint8)
        arrays[name + "_none"] = np.array([v is None for v in texts[name]])
    arrays["meta"] = np.frombuffer(json.dumps({
        "failed": payload["failed"], "too_large": payload["too_large"],
        "manifest_sha256": manifest["data_sha256"]}).encode(), np.uint8)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)
    print(f"packed {len(arrays['rows']):,} molecules -> {out} ({out.stat().st_size / 2**20:.1f} MiB)")


def _paths_of(task):
    from graphnorm.chem.paths import shortest_paths_many

    graphs, max_hops, max_dist = task
    return shortest_paths_many(graphs, max_hops, max_dist)


def unpack(packed: Path, raw_dir, workers: int) -> None:
    import torch
    from concurrent.futures import ProcessPoolExecutor

    from graphnorm.data.cache import save_cache

    started = time.time()
    directory, key, featurizer = _cache_dir_and_key(raw_dir)
    z = np.load(packed)
    nodes = z["num_nodes"].astype(np.int64)
    edges = z["num_edges"].astype(np.int64)
    ei = z["edge_index"].astype(np.int64)
    e_start = np.concatenate([[0], np.cumsum(edges)])
    graphs = [(ei[:, e_start[i]:e_start[i + 1]], int(nodes[i])) for i in range(len(nodes))]
    step = 2000
    tasks = [(graphs[s:s + step], featurizer.max_hops, featurizer.max_dist)
             for s in range(0, len(graphs), step)]
    spd, path = [], []
    with ProcessPoolExecutor(workers) as pool:
        for part in pool.map(_paths_of, tasks):
            for s, p in part:
                spd.append(s)
                path.append(p)
    texts = {}
    for name in TEXT:
        values = bytes(z[name]).decode().split("\n")
        texts[name] = [None if none else v for v, none in zip(values, z[name + "_none"])]
    meta = json.loads(bytes(z["meta"]).decode())
    graphs_packed = {
        "x": torch.from_numpy(z["x"].astype(np.int64)),
        "edge_index": torch.from_numpy(ei), "edge_attr": torch.from_numpy(z["edge_attr"].astype(np.int64)),
        "spd": torch.from_numpy(np.concatenate(spd)), "path": torch.from_numpy(np.concatenate(path)),
        "num_nodes": torch.from_numpy(nodes), "num_edges": torch.from_numpy(edges),
        "smiles": texts["smiles"]}
    payload = {"graphs": graphs_packed, "rows": z["rows"].astype(np.int64).tolist(),
               "keys": texts["keys"], "scaffolds": texts["scaffolds"],
               "failed": [tuple(f) for f in meta["failed"]], "too_large": meta["too_large"]}
    save_cache(directory, key, payload, {"molecules": len(nodes), "failed": len(meta["failed"]),
                                         "too_large": meta["too_large"]})
    print(f"unpacked {len(nodes):,} molecules into {directory} in {time.time() - started:.0f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="verb", required=True)
    a = sub.add_parser("pack")
    a.add_argument("--out", type=Path, required=True)
    b = sub.add_parser("unpack")
    b.add_argument("--packed", type=Path, required=True)
    b.add_argument("--workers", type=int, default=os.cpu_count())
    for q in (a, b):
        q.add_argument("--raw-dir", default=os.environ.get("GRAPHNORM_RAW_DIR"))
    args = p.parse_args()
    if args.verb == "pack":
        pack(args.raw_dir, args.out)
    else:
        unpack(args.packed, args.raw_dir, args.workers)


if __name__ == "__main__":
    main()
