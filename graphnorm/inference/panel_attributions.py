"""Per-atom attributions of one ADMET panel endpoint (`AdmetPanel.explain`), by the methods
of graphnorm/explain on a one-output view of the panel's model.

Why a view: the pre-trained model has an output per corpus task (784 for the shipped one), and
integrated gradients takes one backward pass per output and step; the view hands the
Explainer the one column asked for, so its cost is that of a one-target model. It reads the
raw output (mean 0, std 1 in its task block): the standardized value of a regression
endpoint, the logit of a binary one; `AdmetPanel.explain` turns that into the scale the panel
shows.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
import pandas as pd
import torch

from graphnorm.tasks import REGRESSION

ATOM_COLUMNS = ["row", "smiles", "atom_index", "element", "endpoint", "score"]


class OneOutput(torch.nn.Module):
    """``model`` with only output ``column`` ([B, 1]). Anything else it is asked for (the
    atom encoder, the transformer blocks, the config the attribution sites look up) is the
    wrapped model's own, so hooks land on the shared model's modules."""

    def __init__(self, model: torch.nn.Module, column: int):
        super().__init__()
        self.inner, self.column = model, column

    def forward(self, *args, **kwargs):
        return self.inner(*args, **kwargs)[:, self.column:self.column + 1]

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.inner, name)


def raw_output_view(loaded, column: int, name: str):
    """A LoadedModel of output ``column`` alone, in raw units: a regression task block with
    mean 0 and std 1, so the Explainer's ``F`` is the output itself for either kind."""
    task = {"task_type": REGRESSION.stored, "name": f"panel endpoint {name}", "targets": [name]}
    return replace(loaded, model=OneOutput(loaded.model, column), task=task,
                   target_mean=torch.zeros(1), target_std=torch.ones(1))


@dataclass
class PanelAttributions:
    """Atom scores of one endpoint, one entry per input row in order."""
    endpoint: str
    method: str
    meaning: str  # what a score is a change of, in which units
    smiles: list  # the inputs, stripped
    scores: list  # per row: float [atoms] in RDKit's atom order, or None where it failed
    errors: list  # per row: "" or what went wrong
    atoms: pd.DataFrame  # one row per (molecule, atom): ATOM_COLUMNS

    @classmethod
    def of(cls, ex, endpoint: str, meaning: str, scale: float) -> "PanelAttributions":
        """From the Explainer's `Explanation` of a one-output view, scores times ``scale``."""
        n = len(ex.molecules)
        scores: list[Optional[np.ndarray]] = [
            ex.scores[k][:, 0] * scale if k in ex.scores else None for k in range(n)]
        atoms = ex.atoms.rename(columns={"target": "endpoint"}).drop(columns="std")
        atoms["score"] = atoms["score"] * scale
        return cls(endpoint, ex.method, meaning, list(ex.molecules.smiles), scores,
                   list(ex.molecules.error), atoms[ATOM_COLUMNS])
