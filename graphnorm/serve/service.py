"""The model behind ``graphnorm serve``: loaded once, one request on it at a time.

Predictions go through :class:`graphnorm.inference.predict.Predictor`, which featurizes ``rows_per_pass``
molecules at a time; a lock keeps a single request on the model, so the server holds at most
one featurized slice whatever the requests' sizes. Per-molecule limits are checked before
featurization (a 5,000-atom molecule would need ~1 GB of shortest-path arrays).
"""
from __future__ import annotations

import math
import threading
import warnings
from typing import Optional, Sequence

from graphnorm.inference.predict import Predictor

from .limits import Limits


def _number(x) -> Optional[float]:
    """JSON-safe float (None for missing or non-finite values)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


class PredictionService:
    def __init__(self, predictor: Predictor, limits: Limits = Limits(),
                 method: Optional[str] = None, rows_per_pass: int = 1_000):
        from graphnorm.explain.explainer import Explainer
        from graphnorm.explain.methods import DEFAULT_METHOD

        predictor.rows_per_pass = rows_per_pass
        self.predictor, self.limits = predictor, limits
        # a forest alone predicts but has no atoms to attribute: no drawings then
        self.explainer = (Explainer(predictor, method or DEFAULT_METHOD)
                          if predictor.graph_members else None)
        self.lock = threading.Lock()

    @property
    def columns(self) -> list[str]:
        """Response columns: smiles, a prediction per target, ``<target>_std`` (ensembles),
        error, warning."""
        cols = list(self.predictor.columns)
        std = [f"{c}_std" for c in cols] if self.predictor.is_ensemble else []
        return ["smiles", *cols, *std, "error", "warning"]

    def info(self) -> dict:
        members = self.predictor.members
        return {"status": "ok", "targets": list(self.predictor.loaded.targets),
                "columns": self.columns, "task": members[0].task["task_type"],
                "models": len(members),
                "attribution_method": self.explainer.method if self.explainer else None,
                "attribution_note": (self.explainer.note if self.explainer else
                                     "a random forest has no per-atom attribution") or None,
                "limits": self.limits.to_dict()}

    def screen(self, smiles: Sequence[str], errors: Optional[Sequence[str]] = None) -> list[str]:
        """Per-row errors for SMILES over the per-molecule limits (and already-known errors)."""
        from rdkit import Chem, rdBase

        lim = self.limits
        errors = list(errors) if errors is not None else [""] * len(smiles)
        with rdBase.BlockLogs():
            for i, s in enumerate(smiles):
                if errors[i] or not isinstance(s, str):
                    continue
                if len(s) > lim.max_smiles_chars:
                    errors[i] = (f"ValueError: SMILES of {len(s):,} characters, more than the "
                                 f"server's limit of {lim.max_smiles_chars:,}")
                    continue
                mol = Chem.MolFromSmiles(s, sanitize=False)  # atom count only: cheap
                if mol is not None and mol.GetNumAtoms() > lim.max_atoms:
                    errors[i] = (f"ValueError: {mol.GetNumAtoms()} atoms, more than the "
                                 f"server's limit of {lim.max_atoms} per molecule")
        return errors

    def predict(self, smiles: Sequence[str], labels: Optional[Sequence[str]] = None,
                errors: Optional[Sequence[str]] = None) -> dict:
        """``{"columns", "rows"}``: one row per SMILES, in order (``row`` first when labels
        are given, e.g. ``line 7`` of an upload)."""
        smiles = ["" if s is None else str(s) for s in smiles]
        errors = self.screen(smiles, errors)
        with self.lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # extrapolation flags go into each row instead
            df = self.predictor.predict(smiles, labels, errors)
        flagged = df.attrs.get("warnings", {})
        columns = (["row"] if labels is not None else []) + self.columns
        values = [c for c in self.columns if c not in ("smiles", "error", "warning")]
        rows = []
        for i, rec in enumerate(df.to_dict("records")):
            row = {"row": labels[i]} if labels is not None else {}
            row["smiles"] = smiles[i]
            row.update({c: _number(rec.get(c)) for c in values})
            row["error"] = rec["error"] or None
            row["warning"] = flagged.get(i)
            rows.append(row)
        return {"columns": columns, "rows": rows}

    def draw(self, smiles: Sequence[str], target: Optional[str] = None) -> dict:
        """Attribution drawings (SVG) of each SMILES for one target (default the first)."""
        from graphnorm.explain.draw import draw_attributions

        if self.explainer is None:
            raise ValueError("this model is a random forest: it scores fingerprint counts, "
                             "so there are no atom attributions to draw")
        targets = self.explainer.targets
        if target is None:
            target = targets[0]
        if target not in targets:
            raise ValueError(f"unknown target {target!r}; this model predicts {', '.join(targets)}")
        t = targets.index(target)
        smiles = ["" if s is None else str(s) for s in smiles]
        errors = self.screen(smiles)
        with self.lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ex = self.explainer.explain(smiles, errors=errors)
        out = []
        for i, s in enumerate(smiles):
            err = ex.molecules.error[i]
            svg = None
            if not err:
                svg = draw_attributions(s.strip(), ex.scores[i][:, t], "svg", size=(260, 210))
            out.append({"smiles": s, "svg": svg, "error": err or None})
        return {"method": self.explainer.method, "target": target, "drawings": out}
