"""Featurized arrays stay byte-identical across a refactoring of the featurizer.

Featurizes the first N ZINC-subset training molecules (raw directory: $GRAPHNORM_RAW_DIR,
e.g. ../shared/datasets) three ways -- ZINC vocab as the dataset build does it ("benchmark"
sanitization), OGB vocab as predict does it ("strict"), and packed into a dataset split as
the cache stores it -- and writes one sha256 per array field to a JSON file.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/check_featurize_equivalence.py \
        --out /tmp/featurize_hashes_before.json
    ... change the code ...
    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/check_featurize_equivalence.py \
        --out /tmp/featurize_hashes_after.json --compare /tmp/featurize_hashes_before.json

Works with the pre-refactoring API (graphnorm.graph.featurize) and with graphnorm.chem.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

FIELDS = ("x", "edge_index", "edge_attr", "spd", "path")
# inputs that must keep failing with the same messages (syntax, kekulization, valence,
# empty, outside the ZINC dictionary) and a hypervalent atom "benchmark" keeps
BAD = ["C1CC", "c1cccc1", "CC(C)(C)(C)(C)C", "", "[Xe]", "F[Si-2](F)(F)(F)(F)F", "[Al](C)(C)(C)C"]


def zinc_subset_smiles(n: int) -> list[str]:
    from graphnorm.data.raw import find_raw_files, read_lines, read_zinc_index

    files = find_raw_files("zinc-subset", os.environ["GRAPHNORM_RAW_DIR"])
    rows = read_lines(files["smiles_train"])
    index = read_zinc_index(files["index_train"], len(rows))
    return [rows[i] for i in index[:n]]


def featurize(smiles, vocab, sanitize):
    """[(dict of numpy arrays) or error message] per SMILES, with whichever API exists."""
    try:
        from graphnorm.chem import FeaturizerConfig, featurize_many
    except ImportError:  # before the refactoring
        from graphnorm.graph.featurize import FeaturizationError, smiles_to_data, smiles_to_data_many

        datas = smiles_to_data_many(smiles, vocab, 5, 20, errors="none", sanitize=sanitize)
        out = []
        for s, d in zip(smiles, datas):
            if d is None:
                try:
                    smiles_to_data(s, vocab, 5, 20, sanitize=sanitize)
                except FeaturizationError as e:
                    out.append(str(e))
                continue
            out.append({k: getattr(d, k).numpy() for k in FIELDS})
        return out
    result = featurize_many(smiles, FeaturizerConfig(vocab=vocab), sanitize=sanitize)
    return [err if err is not None else {k: g[k] for k in FIELDS}
            for g, err in zip(result.graphs, result.errors)]


def dataset_items(smiles, graphs):
    """Items of a split as the cache stores and serves it (y = row number, a stand-in label)."""
    try:
        from graphnorm.data.cache import pack_split, split_dataset
    except ImportError:  # before the refactoring: Data objects collated by PyG
        import torch
        from torch_geometric.data import Data

        from graphnorm.data.cache import collate_split, to_datasets

        datas = [Data(**{k: torch.from_numpy(g[k]) for k in FIELDS}, num_nodes=len(g["x"]),
                      smiles=s, y=torch.tensor([[float(i)]])) for i, (s, g) in enumerate(zip(smiles, graphs))]
        payload = collate_split(datas)
        return to_datasets({"train": payload, "val": payload, "test": payload}, "check")["train"]
    payload = pack_split(graphs, smiles, np.arange(len(graphs), dtype=np.float32).reshape(-1, 1))
    return split_dataset(payload, "check", "train")


def _sha(arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def hashes(n: int) -> dict:
    smiles = zinc_subset_smiles(n) + BAD
    out = {"molecules": len(smiles)}
    for vocab, sanitize in (("zinc", "benchmark"), ("ogb", "strict")):
        feats = featurize(smiles, vocab, sanitize)
        ok = [f for f in feats if isinstance(f, dict)]
        out[f"{vocab}/{sanitize}/errors"] = hashlib.sha256(
            json.dumps([f for f in feats if isinstance(f, str)]).encode()).hexdigest()
        out[f"{vocab}/{sanitize}/featurized"] = len(ok)
        for k in FIELDS:
            out[f"{vocab}/{sanitize}/{k}"] = _sha(f[k] for f in ok)
        if vocab == "zinc":
            ds = dataset_items(smiles, ok)
            items = [ds[i] for i in range(len(ds))]
            for k in FIELDS + ("y",):
                out[f"dataset/{k}"] = _sha(getattr(d, k).numpy() for d in items)
            out["dataset/num_nodes+smiles"] = hashlib.sha256(json.dumps(
                [(int(d.num_nodes), d.smiles) for d in items]).encode()).hexdigest()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=2000)
    p.add_argument("--out", required=True)
    p.add_argument("--compare", help="hashes written before the change")
    args = p.parse_args()
    got = hashes(args.n)
    Path(args.out).write_text(json.dumps(got, indent=1) + "\n")
    print(f"wrote {len(got)} hashes of {got['molecules']} molecules to {args.out}")
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        diff = sorted(k for k in set(before) | set(got) if before.get(k) != got.get(k))
        print("identical" if not diff else f"DIFFERENT: {diff}")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
