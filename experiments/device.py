"""How graphnorm uses a lent GPU (the device tool): the featurized corpus carried there, a
pre-training run continued there, and the seconds per step measured there.

The GPU machine has no RDKit and reaches no registry; the tool carries 64 MiB. The corpus cache
(`graphnorm.pretrain.data.featurized_corpus`) is 3.7 GB, 88 % of it the shortest-path arrays
(``spd``, ``path``) that follow from the bonds alone. So:

- ``pack`` (here) keeps the atoms, bonds and per-molecule strings in their smallest dtypes,
  compressed (18 MiB);
- ``unpack`` (there) recomputes ``spd``/``path`` with the package's own
  `chem.paths.shortest_paths_many` in a process pool and writes the cache where
  `featurized_corpus` finds it, under the same key: the run there reads the arrays the
  featurizer would have written;
- ``step-cost`` (there) times training steps by model size and batch: 4,096 corpus molecules
  drawn at random (seed 0), each batch collated once (collation is the loader processes' job,
  not timed), then per (size, batch) 5 warm-up and 20 synchronized steps of forward, masked
  multi-task loss, backward and AdamW (the median is reported).

``experiments/device_pretrain.sh`` is the one call that unpacks and trains there.

    python experiments/device.py pack --out .gpu/corpus.npz                               # here
    python3 experiments/device.py unpack --packed .gpu/corpus.npz                          # there
    python3 experiments/device.py step-cost --out $OUT/step_cost.json                      # there
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

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


def step_cost(out: str, sizes: str, batches: str) -> None:
    """Seconds per training step by model size and batch (see the module docstring)."""
    from graphnorm.data.cache import cache_root
    from graphnorm.data.table_dataset import table_featurizer
    from graphnorm.graph.collate import collate_graphs
    from graphnorm.models import build_model
    from graphnorm.pretrain.data import corpus_dataset
    from graphnorm.pretrain.objective import multitask_loss
    from graphnorm.pretrain.setup import model_config
    from graphnorm.pretrain.spec import PretrainSpec

    started = time.time()
    (data_file,) = (cache_root() / "pretrain").glob("*/data.pt")
    payload = torch.load(data_file, weights_only=False, mmap=True)
    rng = np.random.default_rng(0)
    pick = np.sort(rng.choice(len(payload["rows"]), 4096, replace=False))
    dataset = corpus_dataset(payload, pick, "timing")
    graphs = [dataset[i] for i in range(len(dataset))]
    featurizer, T = table_featurizer(), 802
    print(f"set-up {time.time() - started:.0f} s", flush=True)
    dev = torch.device("cuda")
    results = []
    for size in sizes.split(","):
        L, H = (int(v) for v in size.split("x"))
        spec = PretrainSpec(num_layers=L, hidden=H, ffn_hidden=2 * H)
        model = build_model(model_config(spec, T, featurizer)).to(dev).train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        params = sum(p.numel() for p in model.parameters())
        for B in (int(b) for b in batches.split(",")):
            batches = [collate_graphs(graphs[k:k + B]).to(dev)
                       for k in range(0, len(graphs) - B + 1, B)]
            y = torch.randn(B, T, device=dev).where(torch.rand(B, T, device=dev) < 0.01,
                                                    torch.tensor(float("nan"), device=dev))
            scaling_binary = torch.zeros(T, dtype=torch.bool, device=dev)
            from graphnorm.pretrain.objective import TaskScaling

            scaling = TaskScaling(scaling_binary, torch.zeros(T, device=dev),
                                  torch.ones(T, device=dev), torch.ones(T, dtype=torch.bool, device=dev))
            times = []
            for k in range(25):
                batch = batches[k % len(batches)]
                torch.cuda.synchronize()
                t = time.perf_counter()
                loss = multitask_loss(model(batch), y[:batch.num_graphs], scaling)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                torch.cuda.synchronize()
                if k >= 5:
                    times.append(time.perf_counter() - t)
            s = float(np.median(times))
            row = {"size": size, "params": params, "batch": B, "s_per_step": s,
                   "molecules_per_s": B / s, "peak_gib": torch.cuda.max_memory_allocated() / 2**30}
            results.append(row)
            print(f"{size:>7} {params:>9,} B={B:>5}: {s * 1e3:7.1f} ms/step, "
                  f"{B / s:8.0f} mol/s, peak {row['peak_gib']:.1f} GiB", flush=True)
            del batches
            torch.cuda.reset_peak_memory_stats()
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "results": results}, f, indent=2)



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
    c = sub.add_parser("step-cost")
    c.add_argument("--out", required=True)
    c.add_argument("--sizes", default="4x64,6x96,8x128")
    c.add_argument("--batches", default="128,512,2048")
    args = p.parse_args()
    if args.verb == "pack":
        pack(args.raw_dir, args.out)
    elif args.verb == "unpack":
        unpack(args.packed, args.raw_dir, args.workers)
    else:
        step_cost(args.out, args.sizes, args.batches)


if __name__ == "__main__":
    main()
