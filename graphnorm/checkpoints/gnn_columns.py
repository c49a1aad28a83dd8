"""``+gnn``: a pre-trained Graphormer's view of each molecule, as columns for the tree models.

MapLight + GNN (Notwell & Wood 2023, *ADMET property prediction through combinations of
molecular fingerprints*, arXiv:2310.00174) appends a pre-trained GIN's graph embedding to
MapLight's fingerprints for gradient-boosted trees. Here the network is the multi-task
Graphormer of ``graphnorm pretrain`` (trained on the ADMET corpus, every TDC molecule left
out), and the columns are

    [ h_VNode (its final norm) | y_1 … y_T (its head: one output per pre-training task) ],

the [VNode] embedding (SepNorm's global token) and what the network predicts for each of its
tasks -- logits for binary tasks, standardized values for regression ones; trees are blind to
monotone rescaling, so the outputs are kept as the head gives them. The head's outputs are
functions of the embedding, but precomputed directions that took 300k labelled molecules to
find are what a tree fitted on a few hundred cannot find alone.

The backbone is a graphnorm checkpoint (``--feature-backbone FILE``, or a shipped backbone's
name). `GnnColumns` is handed to the tree features (`graphnorm.baselines.tree_features`, a
layer below the model files, takes it as an argument); a run keeps a copy of the backbone
(``feature_backbone.ckpt``), which `attach_backbone` gives the fitted model on loading, so the
model reads the same network wherever the folder goes.
"""
from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path

import numpy as np


class GnnFeaturesError(ValueError):
    pass


def backbone_file(backbone) -> Path:
    """The checkpoint behind ``backbone`` (a path or run folder, or a shipped backbone's name)."""
    from graphnorm.pretrained import resolve_init_from

    path = resolve_init_from(backbone)
    if path.is_dir():
        path = path / "best.ckpt"
    if not path.is_file():
        raise GnnFeaturesError(f"--feature-backbone {backbone}: no such checkpoint ({path})")
    return path


class GnnColumns:
    """The columns of one backbone: ``width``, ``signature()`` (what a fitted model stores)
    and ``columns(smiles)`` -> float32 [N, width]."""

    def __init__(self, path: Path, loaded):
        """``loaded``: the checkpoint at ``path`` (`reader.load_gnn_columns` loads it)."""
        if loaded.kind.tree or not loaded.kind.embed:
            raise GnnFeaturesError(f"{path}: a {loaded.kind.label} model has no graph embedding")
        self.path, self.loaded = Path(path), loaded
        loaded.model.eval()

    @cached_property
    def width(self) -> int:
        """The embedding's width plus one per head output."""
        return int(self.loaded.meta["model_config"]["hidden"]) + len(self.loaded.targets)

    @cached_property
    def _sha(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]  # read once

    def signature(self) -> dict:
        """The backbone file's hash and the width: a fitted model refuses another network."""
        return {"gnn_backbone": self._sha, "gnn_width": self.width}

    def columns(self, smiles: list[str], batch_size: int = 128) -> np.ndarray:
        """Embedding and head outputs per molecule; a SMILES the backbone cannot featurize
        is raised, named (as the fingerprint sets do)."""
        import torch

        from graphnorm.chem import FeaturizerConfig, featurize_many, graph_data
        from graphnorm.graph import collate_graphs

        smiles = list(smiles)
        result = featurize_many(smiles, self.loaded.featurizer or FeaturizerConfig())
        bad = [(s, e) for s, e in zip(smiles, result.errors) if e is not None]
        if bad:
            raise GnnFeaturesError(f"{bad[0][0]!r}: {bad[0][1]}" + (
                f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
        graphs = sorted(((i, graph_data(a, s)) for i, (a, s) in enumerate(zip(result.graphs, smiles))),
                        key=lambda t: int(t[1].num_nodes))  # similar sizes together
        out = np.zeros((len(smiles), self.width), dtype=np.float32)
        for start in range(0, len(graphs), batch_size):
            chunk = graphs[start:start + batch_size]
            with torch.no_grad():
                raw, emb = self.loaded.model(collate_graphs([g for _, g in chunk]),
                                             return_embeddings=True)
            out[[i for i, _ in chunk]] = torch.cat([emb.vnode, raw], -1).float().numpy()
        return out


def attach_backbone(member, load):
    """A loaded tree member whose features include +gnn columns, given its folder's copy of
    the backbone (read by ``load``, `load_checkpoint`); a CheckpointError when that copy is
    missing or another network."""
    from .format import CheckpointError

    stored = getattr(member, "backbone_file", None)
    if stored is None:
        return member
    try:
        path = backbone_file(stored)
        columns = GnnColumns(path, load(path))
        here = columns.signature()["gnn_backbone"]
    except (GnnFeaturesError, CheckpointError) as err:
        raise CheckpointError(f"{member.path} reads the feature backbone of its folder: {err}") from err
    if here != member.meta["features"].get("gnn_backbone"):
        raise CheckpointError(f"{member.path} was fitted on the columns of another feature "
                              f"backbone ({member.meta['features'].get('gnn_backbone')}) than its "
                              f"folder holds ({here}): retrain it")
    member.gnn = columns
    return member
