"""Prediction from SMILES with a trained checkpoint.

    >>> from graphnorm import load_predictor
    >>> load_predictor("runs/x/best.ckpt").predict(["CCO", "c1ccccc1"])

Each input row gets a prediction or an error message, never both; one bad row never costs
the others their predictions. A prediction for a molecule larger than every training
molecule (when the checkpoint records the training domain) is extrapolation: it is still
made, and an :class:`ExtrapolationWarning` names the rows (also kept in
``df.attrs["warnings"]``). The model runs in eval mode, so BatchNorm/SepNorm use running
statistics and a molecule's prediction does not depend on its batch mates.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence
from warnings import warn

import pandas as pd
import torch

from graphnorm.checkpoint import LoadedModel, load_checkpoint
from graphnorm.graph import collate_graphs
from graphnorm.graph.featurize import FEATURIZER_VERSION, smiles_to_data, smiles_to_data_many


class ExtrapolationWarning(UserWarning):
    """A molecule lies outside what the checkpoint was trained on (e.g. larger)."""


class Predictor:
    def __init__(self, loaded: LoadedModel, batch_size: int = 128):
        self.loaded, self.batch_size = loaded, batch_size
        feat = loaded.featurizer
        if str(feat.get("version")) != str(FEATURIZER_VERSION):
            raise ValueError(
                f"checkpoint was trained with featurizer version {feat.get('version')!r}, "
                f"this graphnorm has {FEATURIZER_VERSION!r}; retrain or install the matching version")
        self.vocab, self.max_hops, self.max_dist = feat["vocab"], feat["max_hops"], feat["max_dist"]

    @property
    def task(self) -> dict:
        return self.loaded.task

    def _featurize(self, smiles: str):
        if smiles is None or not str(smiles).strip():
            raise ValueError("empty SMILES")
        return smiles_to_data(str(smiles).strip(), vocab=self.vocab, max_hops=self.max_hops,
                              max_dist=self.max_dist)

    def predict(self, smiles: Sequence[str]) -> pd.DataFrame:
        """One row per input, in order: ``smiles, prediction, error``."""
        smiles = list(smiles)
        preds: list = [None] * len(smiles)
        errors: list = [""] * len(smiles)
        flags: list = [""] * len(smiles)
        max_atoms = self.loaded.meta.get("train_domain", {}).get("max_atoms")
        # batched featurization (shortest paths of many molecules at once); a row it cannot
        # featurize is redone alone to get its own error message
        clean = [None if x is None else str(x).strip() for x in smiles]
        todo = [i for i, x in enumerate(clean) if x]
        done = smiles_to_data_many([clean[i] for i in todo], vocab=self.vocab, max_hops=self.max_hops,
                                   max_dist=self.max_dist, errors="none") if todo else []
        got = dict(zip(todo, done))
        graphs = []
        for i in range(len(smiles)):
            if got.get(i) is not None:
                graphs.append((i, got[i]))
                continue
            try:
                graphs.append((i, self._featurize(smiles[i])))
            except Exception as err:  # a bad row gets its message; the others go on
                errors[i] = f"{type(err).__name__}: {err}"
        graphs.sort(key=lambda t: int(t[1].num_nodes))  # similar sizes together: less padding
        for start in range(0, len(graphs), self.batch_size):
            chunk = graphs[start:start + self.batch_size]
            out = self.loaded.predict_batch(collate_graphs([g for _, g in chunk]))
            for (i, g), row in zip(chunk, out):
                preds[i] = float(row[0]) if row.numel() == 1 else row.tolist()
                if max_atoms is not None and int(g.num_nodes) > max_atoms:
                    flags[i] = (f"{int(g.num_nodes)} atoms, more than any training molecule "
                                   f"({max_atoms}): the prediction is an extrapolation")
        df = pd.DataFrame({"smiles": smiles, "prediction": preds, "error": errors})
        df.attrs["warnings"] = {i: w for i, w in enumerate(flags) if w}
        if df.attrs["warnings"]:
            shown = "; ".join(f"row {i} {smiles[i][:40]!r}: {w}"
                              for i, w in list(df.attrs["warnings"].items())[:5])
            more = len(df.attrs["warnings"]) - 5
            warn(f"{shown}{f'; and {more} more rows' if more > 0 else ''}",
                 ExtrapolationWarning, stacklevel=2)
        return df


def load_predictor(checkpoint: str | Path, batch_size: int = 128) -> Predictor:
    return Predictor(load_checkpoint(checkpoint), batch_size=batch_size)


def read_smiles_file(path: str | Path) -> list[str]:
    """SMILES from ``.smi`` (first whitespace field per line) or ``.csv`` (column 'smiles')."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    if path.stat().st_size == 0:
        raise ValueError(f"input file {path} is empty")
    if path.suffix.lower() in (".csv", ".gz") and ".csv" in path.name.lower():
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        cols = {c.lower(): c for c in df.columns}
        col = cols.get("smiles", df.columns[0])
        rows = df[col].tolist()
    else:
        rows = [line.split()[0] if line.split() else "" for line in path.read_text().splitlines()]
    if not rows:
        raise ValueError(f"input file {path} holds no rows")
    return rows
