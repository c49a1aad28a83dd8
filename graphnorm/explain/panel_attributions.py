"""Per-atom attributions of one ADMET panel endpoint (`explain_endpoint`), by the methods of
graphnorm/explain on a one-output view of the panel's model (an `AdmetPanel`).

    explain_endpoint(AdmetPanel.load(), ["CCO"], "<corpus>/<task>").scores

Why a view: the pre-trained model has an output per corpus task (784 for the shipped one), and
integrated gradients takes one backward pass per output and step; the view hands the
Explainer the one column asked for, so its cost is that of a one-target model. It reads the
raw output (mean 0, std 1 in its task block): the standardized value of a regression
endpoint, the logit of a binary one; `explain_endpoint` turns that into the scale the panel
shows (`score_scale`).

An endpoint a one-table booster predicts (`graphnorm panel readouts`) is explained by
TreeSHAP on its Morgan counts, shared among the atoms of each bit's substructures
(`graphnorm.explain.tree_atoms`), in the scale the panel shows: binary times the endpoint's
Platt slope (a change of the calibrated logit, as for the network's endpoints); regression a
change of the value in the endpoint's units, or of its log10 where the booster was fitted in
log10 units (skewed positive targets: clearances, half-lives). The descriptors' share of the
prediction is whole-molecule, and absent bits belong to no atom: neither is in the atom
scores.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

import numpy as np
import pandas as pd
import torch

from graphnorm.tasks import REGRESSION

ATOM_COLUMNS = ["row", "smiles", "atom_index", "element", "endpoint", "score"]
BOOSTER_METHOD = "treeshap"  # what a booster endpoint is explained by


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


def explain_endpoint(panel, smiles: Sequence[str], endpoint: str, method: Optional[str] = None,
                     steps: Optional[int] = None, errors: Optional[list] = None,
                     labels: Optional[Sequence[str]] = None, head: bool = False
                     ) -> PanelAttributions:
    """Per-atom scores of one shown endpoint of ``panel`` (an `AdmetPanel`) for each SMILES,
    in input order (``scores[k]`` one per atom in RDKit's order, None where ``errors[k]``
    says why the row failed; ``atoms`` the long table).

    The methods are graphnorm.explain's (`Explainer`; default occlusion), run on the
    model's raw output of the endpoint: the standardized value (regression) or the logit
    (binary). The scores are then put in the scale the panel shows: regression x the
    endpoint's training std, so a score is a change of the value in the endpoint's units;
    binary x the Platt slope ``a`` of the endpoint (`Endpoint.platt_scale`), so a
    score is a change of the calibrated logit, log(p / (1 - p)) of the probability shown.
    Attention rollout is a share of attention flow, the same for every endpoint: not
    scaled. An endpoint predicted by a one-table booster is explained by TreeSHAP on its
    Morgan counts, whatever ``method`` says (`booster_attributions`); a blend of the head
    and a booster (`panel.blend`) by half of each's scores (``head``: the network's alone).
    ``errors`` pre-set rows' errors (not featurized); ``labels`` name the rows (default
    ``row 1``, ...)."""
    from graphnorm.inference.predict import Predictor

    from .explainer import Explainer
    from .methods import DEFAULT_METHOD, DEFAULT_STEPS

    j = panel.endpoint_position(endpoint)
    if panel.blend[j] and not head:  # half the network's, half the booster's: both linear
        return _blend_of(
            explain_endpoint(panel, smiles, endpoint, method, steps, errors, labels, head=True),
            booster_attributions(panel, j, smiles, errors, labels))
    if j in panel.by_booster and not head:  # TreeSHAP whatever ``method`` says
        return booster_attributions(panel, j, smiles, errors, labels)
    method = method or DEFAULT_METHOD
    # an ensemble's networks (graphnorm.panel.networks) each explained, the scores averaged:
    # the methods are linear in F, so that is the attribution of the members' mean output
    networks = getattr(panel.loaded.model, "members", None) or [panel.loaded.model]
    views = [raw_output_view(replace(panel.loaded, model=m), int(panel.index[j]), endpoint)
             for m in networks]
    predictor = Predictor(views, batch_size=panel.predictor.batch_size,
                          rows_per_pass=panel.predictor.rows_per_pass)
    steps = DEFAULT_STEPS if steps is None else steps
    ex = Explainer(predictor, method, steps).explain(smiles, labels, errors)
    return PanelAttributions.of(ex, endpoint, *score_scale(panel, endpoint, method))


def method_for(panel, endpoint: str, method: Optional[str]) -> str:
    """The attribution method `explain_endpoint` uses for ``endpoint`` when asked for
    ``method``: TreeSHAP for a booster endpoint, ``method`` (default occlusion) otherwise."""
    from .methods import DEFAULT_METHOD

    j = panel.endpoint_position(endpoint)
    if panel.blend[j]:
        return f"{method or DEFAULT_METHOD}+{BOOSTER_METHOD}"
    return BOOSTER_METHOD if j in panel.by_booster else (method or DEFAULT_METHOD)


def score_scale(panel, endpoint: str, method: str) -> tuple[str, float]:
    """(what an atom score of ``endpoint`` is, the factor from the raw output's scores to
    it): see `explain_endpoint`."""
    j = panel.endpoint_position(endpoint)
    if j in panel.by_booster and not panel.blend[j]:  # a blend's are the head's (`_blend_of`)
        return booster_scale(panel, j)
    if method == "rollout":
        return "share of attention flow from the readout token (no sign)", 1.0
    if panel.binary[j]:
        return "change of the calibrated logit (log-odds)", float(panel.platt_a[j])
    units = panel.entries[j].units
    return "change of the value" + (f", in {units}" if units else ""), float(panel.std[j])


def booster_attributions(panel, j: int, smiles: Sequence[str], errors: Optional[list] = None,
                         labels: Optional[Sequence[str]] = None) -> PanelAttributions:
    """`explain_endpoint` of the panel's ``j``-th endpoint, a booster one."""
    from graphnorm.panel.boosters import MORGAN_BITS

    from .explainer import atom_symbols
    from .tree_atoms import morgan_atom_scores

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
    return PanelAttributions(task, BOOSTER_METHOD, meaning, clean, scores, list(errors),
                             atoms[ATOM_COLUMNS])


def _blend_of(network: PanelAttributions, booster: PanelAttributions) -> PanelAttributions:
    """Half of each one's atom scores: a blend's value is half the head's and half the
    booster's, and both attributions are sums over atoms of changes of the value."""
    if network.meaning != booster.meaning:
        raise ValueError(f"{network.endpoint}: the head's atom scores are a {network.meaning} "
                         f"and the booster's a {booster.meaning}; they cannot be averaged")
    scores = [None if a is None or b is None else 0.5 * (a + b)
              for a, b in zip(network.scores, booster.scores)]
    atoms = network.atoms.copy()
    atoms["score"] = np.concatenate([s for s in scores if s is not None]) if len(atoms) else []
    errors = [a or b for a, b in zip(network.errors, booster.errors)]
    return PanelAttributions(network.endpoint, f"{network.method}+{booster.method}",
                             network.meaning, network.smiles, scores, errors, atoms)


def booster_scale(panel, j: int) -> tuple[str, float]:
    """(what an atom score of the booster endpoint ``j`` is, the factor to it)."""
    entry = panel.entries[j]
    if panel.binary[j]:
        return "change of the calibrated logit (log-odds)", float(panel.platt_a[j])
    units = entry.units
    if panel.boosters.transform(entry.task):
        return "change of log10 of the value" + (f" ({units})" if units else ""), 1.0
    return "change of the value" + (f", in {units}" if units else ""), 1.0
