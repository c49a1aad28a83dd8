"""Atom attributions of an ADMET panel endpoint that a one-table booster predicts
(`graphnorm panel readouts`): TreeSHAP on its Morgan counts, shared among the atoms of each bit's
substructures (`graphnorm.explain.tree_atoms`), in the scale the panel shows.

- binary: times the endpoint's Platt slope, so a score is a change of the calibrated logit,
  as for the network's endpoints;
- regression: a change of the value in the endpoint's units, or of its log10 where the booster
  was fitted in log10 units (skewed positive targets: clearances, half-lives).

The descriptors' share of the prediction is whole-molecule, and absent bits belong to no
atom: neither is in the atom scores.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from .panel_attributions import ATOM_COLUMNS, PanelAttributions

METHOD = "treeshap"


def booster_attributions(panel, j: int, smiles: Sequence[str], errors: Optional[list] = None,
                         labels: Optional[Sequence[str]] = None) -> PanelAttributions:
    """`AdmetPanel.explain` of its ``j``-th endpoint, a booster one."""
    from graphnorm.explain.explainer import atom_symbols
    from graphnorm.explain.tree_atoms import morgan_atom_scores
    from graphnorm.panel.boosters import MORGAN_BITS

    task = panel.entries[j].task
    clean = [str(s).strip() if s is not None else "" for s in smiles]
    labels = list(labels) if labels is not None else [f"row {i + 1}" for i in range(len(clean))]
    graphs, errors = panel.predictor.featurize(list(smiles), errors)
    view = panel.view(graphs, clean)
    meaning, scale = booster_scale(panel, j)
    scores: list = [None] * len(clean)
    if view.rows:
        phi = panel.boosters.contributions(task, view)
        for k, i in enumerate(view.rows):
            scores[i] = morgan_atom_scores(clean[i], phi[k, :MORGAN_BITS]) * scale
    parts = [pd.DataFrame({"row": labels[i], "smiles": clean[i], "atom_index": np.arange(len(s)),
                           "element": atom_symbols(clean[i]), "endpoint": task, "score": s})
             for i, s in enumerate(scores) if s is not None]  # in input order
    atoms = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=ATOM_COLUMNS)
    return PanelAttributions(task, METHOD, meaning, clean, scores, list(errors), atoms[ATOM_COLUMNS])


def booster_scale(panel, j: int) -> tuple[str, float]:
    """(what an atom score of the booster endpoint ``j`` is, the factor to it)."""
    entry = panel.entries[j]
    if panel.binary[j]:
        return "change of the calibrated logit (log-odds)", float(panel.platt_a[j])
    units = entry.units
    if panel.boosters.transform(entry.task):
        return "change of log10 of the value" + (f" ({units})" if units else ""), 1.0
    return "change of the value" + (f", in {units}" if units else ""), 1.0
