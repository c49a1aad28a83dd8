"""Molecule embeddings from a trained checkpoint: the final-norm [VNode] vector per molecule.

    >>> from graphnorm.inference.embed import embed_smiles
    >>> emb, errors = embed_smiles("runs/x/best.ckpt", ["CCO", "c1ccccc1"])   # [2, D]

The [VNode] token is the Graphormer's graph-level summary after the final norm (SepNorm
normalizes it apart from the atoms); ``atom_mean=True`` appends the mean of the final-norm
atom tokens. PyG baselines (GINE, GIN-VN) give their pooled graph vector instead. A row that
cannot be featurized gets NaN and its error message, as in ``predict``. An ensemble's members
embed into different spaces, so embeddings come from one checkpoint.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd
import torch

from graphnorm.checkpoints import CheckpointError, checkpoint_files, load_member
from graphnorm.inference.predict import Predictor

OUTPUT_FORMATS = (".npy", ".csv", ".parquet")


def load_embedder(checkpoint, batch_size: int = 128) -> Predictor:
    files = checkpoint_files(checkpoint)
    if len(files) > 1:
        raise CheckpointError(
            f"{checkpoint} is an ensemble of {len(files)} models, whose embeddings live in "
            f"different spaces; embed with one member, e.g. --checkpoint {files[0]}")
    member = load_member(files[0])
    if not member.kind.embed:  # what its registry entry (graphnorm.models) supports
        raise CheckpointError(f"{files[0]} is a {member.kind.label} model, which has no graph "
                              "embedding: embed takes a graph model; predict takes this one")
    return Predictor(member, batch_size=batch_size)


def embed_smiles(checkpoint, smiles: Sequence[str], errors: Optional[Sequence[str]] = None,
                 atom_mean: bool = False, batch_size: int = 128) -> tuple[np.ndarray, list[str]]:
    """(float32 [rows, D] or [rows, 2D] with ``atom_mean``; NaN rows where it failed,
    error message per row, "" when fine)."""
    predictor = checkpoint if isinstance(checkpoint, Predictor) else load_embedder(checkpoint, batch_size)
    model = predictor.loaded.model.eval()
    graphs, errors = predictor.featurize(list(smiles), errors)
    out: Optional[np.ndarray] = None
    for chunk, batch in predictor.batches(graphs):
        with torch.no_grad():
            emb = model.encode(batch)
        parts = [emb.vnode]
        if atom_mean:
            mask = emb.node_mask.unsqueeze(-1).to(emb.tokens.dtype)
            parts.append((emb.tokens * mask).sum(1) / mask.sum(1).clamp(min=1))
        vectors = torch.cat(parts, -1).float().numpy()
        if out is None:
            out = np.full((len(smiles), vectors.shape[1]), np.nan, dtype=np.float32)
        out[[i for i, _ in chunk]] = vectors
    if out is None:  # every row failed: width from the model
        dim = _embedding_dim(predictor) * (2 if atom_mean else 1)
        out = np.full((len(smiles), dim), np.nan, dtype=np.float32)
    return out, errors


def _embedding_dim(predictor: Predictor) -> int:
    cfg = predictor.loaded.meta["model_config"]
    return int(cfg["hidden"])


def column_names(width: int, atom_mean: bool) -> list[str]:
    half = width // 2 if atom_mean else width
    names = [f"vnode_{k}" for k in range(half)]
    return names + ([f"atom_mean_{k}" for k in range(half)] if atom_mean else [])


def write_embeddings(path, matrix: np.ndarray, errors: Sequence[str], inputs: pd.DataFrame,
                     atom_mean: bool = False) -> None:
    """.npy: the matrix alone (NaN rows = failed); .csv/.parquet: the input's columns, then
    ``error``, then one column per dimension. Written to a temporary file first, so a
    failure leaves no half-written output."""
    path = Path(path)
    fmt = path.suffix.lower()
    if fmt not in OUTPUT_FORMATS:
        raise ValueError(f"--output {path}: write .npy, .csv or .parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if fmt == ".npy":
            with open(tmp, "wb") as f:
                np.save(f, matrix)
        else:
            emb = pd.DataFrame(matrix, columns=column_names(matrix.shape[1], atom_mean))
            keep = inputs.reset_index(drop=True).copy()
            keep.columns = [f"{c}_input" if c == "error" else c for c in keep.columns]
            df = pd.concat([keep, pd.Series(list(errors), name="error"), emb], axis=1)
            if fmt == ".csv":
                df.to_csv(tmp, index=False)
            else:
                try:
                    df.to_parquet(tmp, index=False)
                except ImportError as err:
                    raise ValueError("writing .parquet needs pyarrow (pip install pyarrow); or "
                                     "write .npy or .csv") from err
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def input_graphs(path, loaded, smiles_column: Optional[str] = None) -> list:
    """The featurizable molecules of an input file, featurized as ``loaded`` was trained
    (its vocab and hops), for analyses over a user's own molecules (``analyze --data``)."""
    from graphnorm.inference.predict import read_input

    table = read_input(path, smiles_column)
    graphs, errors = Predictor(loaded).featurize(table.smiles)
    if not graphs:
        raise ValueError(f"{path}: no row could be featurized (first error: "
                         f"{next((e for e in errors if e), '?')})")
    return [g for _, g in sorted(graphs, key=lambda t: t[0])]  # file order
