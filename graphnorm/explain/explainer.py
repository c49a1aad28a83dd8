"""Per-atom attributions for SMILES with a checkpoint, a run directory or an ensemble.

    >>> from graphnorm.explain import load_explainer
    >>> ex = load_explainer("runs/mine", method="occlusion").explain(["CCO", "c1ccccc1O"])
    >>> ex.atoms      # row, smiles, atom_index, element, target, score, std
    >>> ex.molecules  # row, smiles, a column per target, <column>_std (ensembles), error

An ensemble's score of an atom is the mean of its members' scores and ``std`` their population
standard deviation (how much the members disagree on the atom; NaN for one model). Rows that
cannot be featurized get their error in ``molecules`` and no atoms. Inputs are featurized one
slice of ``rows_per_pass`` molecules at a time, as :class:`graphnorm.inference.predict.Predictor` does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd
import torch

from graphnorm.inference.predict import Predictor, load_predictor

from .methods import DEFAULT_METHOD, DEFAULT_STEPS, check_method, method_function


@dataclass
class Explanation:
    method: str
    targets: list  # target names, one score per atom each
    molecules: pd.DataFrame  # one row per input, in order
    atoms: pd.DataFrame  # one row per (molecule, atom, target)
    scores: dict = field(default_factory=dict)  # input position -> float [atoms, T] (mean)
    spread: dict = field(default_factory=dict)  # input position -> float [atoms, T] (std)


def atom_symbols(smiles: str) -> list[str]:
    """Element of each heavy atom, in the featurizer's (RDKit's parse) order."""
    from rdkit import Chem, rdBase

    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smiles)
    return [a.GetSymbol() for a in mol.GetAtoms()]


class Explainer:
    """Attributions of one model, or of every member of an ensemble (mean and spread)."""

    def __init__(self, predictor: Predictor, method: str = DEFAULT_METHOD,
                 steps: int = DEFAULT_STEPS):
        from graphnorm.checkpoints import CheckpointError

        # the members whose registry entry (graphnorm.models) gives per-atom scores
        self.graph_members = [m for m in predictor.members if m.kind.explain]
        if not self.graph_members:
            raise CheckpointError(f"{predictor.loaded.path} is a tree model (random forest or "
                                  "boosted trees): it scores fingerprint counts, not atoms; "
                                  "explain takes graph models")
        for member in self.graph_members:
            check_method(method, member)
        self.predictor, self.method, self.steps = predictor, method, steps
        self.attribute = method_function(method, steps)
        self.targets = list(predictor.loaded.targets)
        forests = len(predictor.members) - len(self.graph_members)
        # the prediction stays the whole ensemble's (as `predict` gives it); say whose atoms
        self.note = "" if not forests else (
            "atom scores come from the graph model" + ("s" if len(self.graph_members) > 1 else "")
            + " only: the ensemble's tree member (in the predicted mean) has no per-atom "
            "attribution")

    def explain_batch(self, batch) -> tuple[torch.Tensor, ...]:
        """(prediction mean [B, T] and std over all members, score mean [B, N, T] and std
        over the graph members)."""
        preds = torch.stack([m.predict_batch(batch) for m in self.predictor.members])
        scores = torch.stack([self.attribute(m, batch).detach() for m in self.graph_members])
        return (preds.mean(0), preds.std(0, unbiased=False),
                scores.mean(0), scores.std(0, unbiased=False))

    def explain(self, smiles: Sequence[str], labels: Optional[Sequence[str]] = None,
                errors: Optional[Sequence[str]] = None, progress: bool = False) -> Explanation:
        """Attributions of every row; ``labels`` name rows as the user counts them (default
        ``row 1``, ...), ``errors`` pre-set the error of unreadable rows."""
        from tqdm.auto import tqdm

        from graphnorm.data.build import bar_enabled

        pred = self.predictor
        smiles = [str(s) if s is not None else "" for s in smiles]
        labels = list(labels) if labels is not None else [f"row {i + 1}" for i in range(len(smiles))]
        errors = list(errors) if errors is not None else [""] * len(smiles)
        T, ensemble = len(self.targets), len(self.graph_members) > 1  # a spread of atom scores
        mean = np.full((len(smiles), T), np.nan)
        std = np.full_like(mean, np.nan)
        scores, spread = {}, {}
        bar = tqdm(total=len(smiles), desc=f"explaining ({self.method})", unit="mol",
                   disable=not bar_enabled(progress))
        for start in range(0, len(smiles), pred.rows_per_pass):
            stop = min(len(smiles), start + pred.rows_per_pass)
            graphs, errors[start:stop] = pred.featurize(smiles[start:stop], errors[start:stop])
            bar.update(stop - start - len(graphs))
            for chunk, batch in pred.batches(graphs):
                p_mean, p_std, s_mean, s_std = self.explain_batch(batch)
                for b, (i, g) in enumerate(chunk):
                    row, n = start + i, int(g.num_nodes)
                    mean[row], std[row] = p_mean[b].double().numpy(), p_std[b].double().numpy()
                    scores[row] = s_mean[b, :n].double().numpy()
                    spread[row] = s_std[b, :n].double().numpy() if ensemble else np.full((n, T), np.nan)
                bar.update(len(chunk))
        bar.close()
        clean = [s.strip() for s in smiles]
        return Explanation(self.method, self.targets,
                           self._molecule_frame(clean, labels, errors, mean, std),
                           self._atom_frame(clean, labels, scores, spread), scores, spread)

    def _molecule_frame(self, smiles, labels, errors, mean, std) -> pd.DataFrame:
        data = {"row": labels, "smiles": smiles}
        cols = self.predictor.columns
        for j, c in enumerate(cols):
            data[c] = [None if errors[i] else float(mean[i, j]) for i in range(len(smiles))]
        if self.predictor.is_ensemble:
            for j, c in enumerate(cols):
                data[f"{c}_std"] = [None if errors[i] else float(std[i, j]) for i in range(len(smiles))]
        data["error"] = errors
        return pd.DataFrame(data)

    def _atom_frame(self, smiles, labels, scores, spread) -> pd.DataFrame:
        parts = []
        for row in sorted(scores):
            s, sd = scores[row], spread[row]
            n, T = s.shape
            symbols = atom_symbols(smiles[row])
            if len(symbols) != n:  # featurizer and RDKit disagree: never mislabel atoms
                raise RuntimeError(f"{labels[row]}: {n} featurized atoms but RDKit parses "
                                   f"{len(symbols)} in {smiles[row]!r}")
            parts.append(pd.DataFrame({
                "row": labels[row], "smiles": smiles[row],
                "atom_index": np.repeat(np.arange(n), T), "element": np.repeat(symbols, T),
                "target": np.tile(self.targets, n), "score": s.reshape(-1), "std": sd.reshape(-1)}))
        if not parts:
            return pd.DataFrame(columns=["row", "smiles", "atom_index", "element", "target",
                                         "score", "std"])
        return pd.concat(parts, ignore_index=True)


def load_explainer(checkpoint: str | Path | Sequence[str | Path], method: str = DEFAULT_METHOD,
                   steps: int = DEFAULT_STEPS, batch_size: int = 64,
                   rows_per_pass: int = 5_000) -> Explainer:
    """An :class:`Explainer` for a checkpoint, run directory or ensemble directory (or
    several, pooled into one ensemble, as :func:`graphnorm.inference.predict.load_predictor`)."""
    predictor = load_predictor(checkpoint, batch_size=batch_size)
    predictor.rows_per_pass = max(1, rows_per_pass)
    return Explainer(predictor, method, steps)
