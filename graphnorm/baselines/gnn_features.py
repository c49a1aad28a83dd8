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
name); a run keeps a copy (`RUN_BACKBONE`) so that its fitted model reads the same network
wherever the folder goes.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np

GNN = "+gnn"  # the suffix of a feature set that appends these columns
RUN_BACKBONE = "feature_backbone.ckpt"


class GnnFeaturesError(ValueError):
    pass


def backbone_file(backbone) -> Path:
    """The checkpoint behind ``backbone`` (a path, or a shipped backbone's name)."""
    from graphnorm.pretrained import resolve_init_from

    if backbone is None:
        raise GnnFeaturesError(f"the {GNN} feature sets read a pre-trained Graphormer: give "
                               "--feature-backbone FILE (a `graphnorm pretrain` checkpoint)")
    path = resolve_init_from(backbone)
    if path.is_dir():
        path = path / "best.ckpt"
    if not path.is_file():
        raise GnnFeaturesError(f"--feature-backbone {backbone}: no such checkpoint ({path})")
    return path


@lru_cache(maxsize=4)
def _loaded(path: str, stamp: float):
    """The backbone as a predictor (featurizer and model), loaded once per file version."""
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.inference.predict import Predictor

    loaded = load_checkpoint(path)
    if loaded.kind.tree or not loaded.kind.embed:
        raise GnnFeaturesError(f"{path}: a {loaded.kind.label} model has no graph embedding")
    loaded.model.eval()
    return Predictor(loaded, batch_size=128)


def _predictor(backbone):
    path = backbone_file(backbone)
    return _loaded(str(path.resolve()), path.stat().st_mtime)


def gnn_width(backbone) -> int:
    """Columns: the embedding's width plus one per head output."""
    loaded = _predictor(backbone).loaded
    return int(loaded.meta["model_config"]["hidden"]) + len(loaded.targets)


def gnn_signature(backbone) -> dict:
    """What the columns are: the backbone file's hash and the width (stored with a fitted
    model, which then refuses columns of another network)."""
    path = backbone_file(backbone)
    return {"gnn_backbone": hashlib.sha256(path.read_bytes()).hexdigest()[:16],
            "gnn_width": gnn_width(backbone)}


def gnn_matrix(smiles: list[str], backbone) -> np.ndarray:
    """float32 [N, `gnn_width`]: embedding and head outputs per molecule; a SMILES the
    backbone cannot featurize is raised, named (as the fingerprint sets do)."""
    import torch

    predictor = _predictor(backbone)
    graphs, errors = predictor.featurize(list(smiles))
    bad = [(s, e) for s, e in zip(smiles, errors) if e]
    if bad:
        raise GnnFeaturesError(f"{bad[0][0]!r}: {bad[0][1]}" + (
            f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
    out = np.zeros((len(smiles), gnn_width(backbone)), dtype=np.float32)
    model = predictor.loaded.model
    for chunk, batch in predictor.batches(graphs):
        with torch.no_grad():
            raw, emb = model(batch, return_embeddings=True)
        out[[i for i, _ in chunk]] = torch.cat([emb.vnode, raw], -1).float().numpy()
    return out
