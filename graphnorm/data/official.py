"""Official loaders (need internet once): PyG ``ZINC`` and OGB ``PygGraphPropPredDataset``,
converted into graphnorm's featurized format (Contract 2, docs/design.md).

- PyG ``ZINC`` (benchmarking-gnns pickles): ``x`` [N, 1] is already the 28-entry atom
  dictionary index; ``edge_attr`` [E] is 1/2/3 = single/double/triple (0 = no bond), so it
  becomes ``edge_attr - 1`` shaped [E, 1]; ``y`` [1] becomes [1, 1]. The pickles carry no
  SMILES, so ``smiles`` is rebuilt with RDKit from the atom and bond dictionaries (canonical,
  without stereo; "" if RDKit rejects the graph).
- OGB ``ogbg-molhiv``: ``x`` [N, 9] / ``edge_attr`` [E, 3] are ``ogb.utils.smiles2graph``
  features (0-based) as they are; ``y`` long [1, 1] becomes float; ``smiles`` comes from
  ``mapping/mol.csv.gz``; splits from ``get_idx_split()`` ("valid" is our "val").
- ``spd`` / ``path`` are computed with ``graphnorm.chem.paths`` on the official edge order.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data

from .info import SPLITS

# benchmarking-gnns bond dictionary after the -1 shift (0 was "NONE").
ZINC_BONDS = ["SINGLE", "DOUBLE", "TRIPLE"]


def _hash_files(paths: list[Path]) -> str:
    from .files import sha256_file

    lines = [f"{p.name}:{sha256_file(p)}" for p in sorted(paths)]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def zinc_graph_to_smiles(x: torch.Tensor, edge_index: torch.Tensor,
                         edge_attr: torch.Tensor) -> str:
    """Canonical SMILES of a ZINC graph (x: dictionary ids [N, 1], edge_attr: 0-based)."""
    from rdkit import Chem

    from graphnorm.chem import ZINC_ATOM_DICT

    atoms = {v: k for k, v in ZINC_ATOM_DICT.items()}
    mol = Chem.RWMol()
    for a in x.view(-1).tolist():
        parts = atoms[a].split()
        atom = Chem.Atom(parts[0])
        for p in parts[1:]:
            if p.startswith("H"):
                atom.SetNumExplicitHs(int(p[1:]))
            else:
                atom.SetFormalCharge(1 if p == "+" else -1)
        mol.AddAtom(atom)
    for (i, j), b in zip(edge_index.t().tolist(), edge_attr.view(-1).tolist()):
        if i < j:
            mol.AddBond(i, j, getattr(Chem.BondType, ZINC_BONDS[b]))
    try:
        Chem.SanitizeMol(mol)
        return Chem.MolToSmiles(mol)
    except Exception:  # RDKit raises several C++ exception types
        return ""


def convert(graphs: list[Data], smiles: list[str], featurizer, zinc: bool) -> tuple:
    """Official PyG graphs -> (featurizer arrays per graph, smiles, y float [G, T]), with
    spd/path batched by size on the official edge order."""
    from graphnorm.chem.paths import shortest_paths_many

    pairs = shortest_paths_many([(g.edge_index.numpy(), int(g.num_nodes)) for g in graphs],
                                featurizer.max_hops, featurizer.max_dist)
    arrays = []
    for g, (spd, path) in zip(graphs, pairs):
        edge_attr = g.edge_attr.long()
        edge_attr = (edge_attr - 1).view(-1, 1) if zinc else edge_attr.view(-1, edge_attr.size(-1))
        arrays.append({"x": g.x.long().view(int(g.num_nodes), -1).numpy(),
                       "edge_index": g.edge_index.long().numpy(), "edge_attr": edge_attr.numpy(),
                       "spd": np.asarray(spd), "path": np.asarray(path)})
    if featurizer.fingerprint_bits:  # molecule-level: from the SMILES the source gives
        from graphnorm.chem import FINGERPRINT
        from graphnorm.chem.molecule import mol_from_smiles, morgan_fingerprint

        for a, s in zip(arrays, smiles):
            if not s:
                raise ValueError("fingerprints need each molecule's SMILES, and the official "
                                 "source gave none for one; use the raw source (raw_dir)")
            a[FINGERPRINT] = morgan_fingerprint(mol_from_smiles(s, "benchmark"),
                                                featurizer.fingerprint_bits, s)
    y = np.stack([g.y.float().view(-1).numpy() for g in graphs]) if graphs else np.zeros((0, 1))
    return arrays, list(smiles), y


def _pyg_safe_globals():
    """Let ``torch.load(weights_only=True)`` (torch >= 2.6 default) read OGB 1.3.6's processed
    file, a pickled ``(Data, slices)``: PyG allowlists ``Data`` but not the storage classes
    inside it. Only these PyG container classes are allowed, nothing else."""
    from torch_geometric.data.data import DataEdgeAttr, DataTensorAttr
    from torch_geometric.data.storage import GlobalStorage

    return torch.serialization.safe_globals([DataEdgeAttr, DataTensorAttr, GlobalStorage])


def open_official(name: str, root: Path) -> tuple[dict, str]:
    """Download (once) and open the official dataset: (handle, sha256 of its processed files)."""
    if name == "ogbg-molhiv":
        from ogb.graphproppred import PygGraphPropPredDataset

        with _pyg_safe_globals():
            ds = PygGraphPropPredDataset(name="ogbg-molhiv", root=str(root / "ogb"))
        droot = Path(ds.root)
        files = [Path(p) for p in ds.processed_paths] + [droot / "mapping" / "mol.csv.gz"]
        split_dir = droot / "split" / "scaffold"
        files += sorted(p for p in split_dir.iterdir() if p.is_file())
        return {"ogb": ds}, _hash_files(files)
    from torch_geometric.datasets import ZINC

    subset = name == "zinc-subset"
    handle = {s: ZINC(str(root / "zinc"), subset=subset, split=s) for s in SPLITS}
    files = [Path(handle["train"].processed_dir) / f"{s}.pt" for s in SPLITS]
    return handle, _hash_files(files)


def convert_official(name: str, handle: dict, featurizer, progress: bool) -> dict[str, tuple]:
    """{split: (arrays, smiles, y)} in graphnorm's format from an `open_official` handle."""
    from tqdm.auto import tqdm

    from .build import bar_enabled

    progress = bar_enabled(progress)  # load_dataset prints the stage lines
    if name == "ogbg-molhiv":
        import pandas as pd

        ds = handle["ogb"]
        mapping = Path(ds.root) / "mapping" / "mol.csv.gz"
        smiles = pd.read_csv(mapping)["smiles"].astype(str).tolist()
        if len(smiles) != len(ds):
            raise ValueError(f"{mapping} has {len(smiles)} SMILES for {len(ds)} graphs")
        idx = ds.get_idx_split()
        out = {}
        for split, key in zip(SPLITS, ("train", "valid", "test")):
            rows = [int(i) for i in idx[key]]
            graphs = [ds[i] for i in tqdm(rows, desc=f"{name} {split}", disable=not progress)]
            out[split] = convert(graphs, [smiles[i] for i in rows], featurizer, False)
        return out
    out = {}
    for split in SPLITS:
        ds = handle[split]
        graphs = [ds[i] for i in range(len(ds))]
        smiles = [zinc_graph_to_smiles(g.x, g.edge_index, g.edge_attr.long() - 1)
                  for g in tqdm(graphs, desc=f"{name} {split}: SMILES", disable=not progress)]
        out[split] = convert(graphs, smiles, featurizer, zinc=True)
    return out
