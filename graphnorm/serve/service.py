"""The model behind ``graphnorm serve``: loaded once, one slice of one request on it at a time.

Predictions go through :class:`graphnorm.inference.predict.Predictor`. A request runs in slices
of ``slice_rows`` molecules (``slice_drawn`` for drawings), each on its own turn on the model
(scheduler.py): the server holds at most one featurized slice whatever the requests' sizes, and
a small request waits for one slice of a large one, not for all of it. Per-molecule limits are
checked before featurization (a 5,000-atom molecule would need ~1 GB of shortest-path arrays).
"""
from __future__ import annotations

import math
import warnings
from typing import Callable, Optional, Sequence

from graphnorm.inference.predict import Predictor

from .limits import Limits
from .scheduler import SliceScheduler


def _number(x) -> Optional[float]:
    """JSON-safe float (None for missing or non-finite values)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


class PredictionService:
    def __init__(self, predictor: Predictor, limits: Limits = Limits(),
                 method: Optional[str] = None, slice_rows: int = 64, slice_drawn: int = 2):
        from graphnorm.explain.explainer import Explainer
        from graphnorm.explain.methods import DEFAULT_METHOD

        if slice_rows < 1 or slice_drawn < 1:
            raise ValueError(f"slices must hold at least one molecule, got {slice_rows}, "
                             f"{slice_drawn}")
        # 64 rows: ~0.15 s of a 4 x 64 Graphormer on one thread, what a small request may
        # wait for; larger slices predict ~10 % faster (less padding) but hold the model longer.
        # Occlusion drawings cost ~0.1 s per molecule: 2 per turn
        self.slice_rows, self.slice_drawn = slice_rows, slice_drawn
        predictor.rows_per_pass = slice_rows
        self.predictor, self.limits = predictor, limits
        # a forest alone predicts but has no atoms to attribute: no drawings then
        self.explainer = (Explainer(predictor, method or DEFAULT_METHOD)
                          if any(m.kind.explain for m in predictor.members) else None)
        self.scheduler = SliceScheduler()

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
        return screen(smiles, self.limits, errors)

    def predict(self, smiles: Sequence[str], labels: Optional[Sequence[str]] = None,
                errors: Optional[Sequence[str]] = None) -> dict:
        """``{"columns", "rows"}``: one row per SMILES, in order (``row`` first when labels
        are given, e.g. ``line 7`` of an upload)."""
        smiles = ["" if s is None else str(s) for s in smiles]
        errors = list(errors) if errors is not None else [""] * len(smiles)
        columns = (["row"] if labels is not None else []) + self.columns
        values = [c for c in self.columns if c not in ("smiles", "error", "warning")]
        rows = []
        for served, start in enumerate(range(0, len(smiles), self.slice_rows)):
            stop = start + self.slice_rows
            part = None if labels is None else list(labels[start:stop])
            # screening (RDKit parsing) runs in the turn too: outside, it would compete for
            # the GIL with the request that holds the model
            with self.scheduler.turn(served), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # extrapolation flags go into each row instead
                screened = self.screen(smiles[start:stop], errors[start:stop])
                df = self.predictor.predict(smiles[start:stop], part, screened)
            flagged = df.attrs.get("warnings", {})  # keys: positions in this slice
            for k, rec in enumerate(df.to_dict("records")):
                row = {"row": part[k]} if part is not None else {}
                row["smiles"] = smiles[start + k]
                row.update({c: _number(rec.get(c)) for c in values})
                row["error"] = rec["error"] or None
                row["warning"] = flagged.get(k)
                rows.append(row)
        return {"columns": columns, "rows": rows}

    def draw(self, smiles: Sequence[str], target: Optional[str] = None) -> dict:
        """Attribution drawings (SVG) of each SMILES for one target (default the first)."""
        if self.explainer is None:
            raise ValueError("this model is a random forest: it scores fingerprint counts, "
                             "so there are no atom attributions to draw")
        targets = self.explainer.targets
        if target is None:
            target = targets[0]
        if target not in targets:
            raise ValueError(f"unknown target {target!r}; this model predicts {', '.join(targets)}")
        t = targets.index(target)

        def attribute(part: list[str]) -> tuple[list, list]:
            ex = self.explainer.explain(part, errors=self.screen(part))
            return list(ex.molecules.error), [ex.scores[k][:, t] if k in ex.scores else None
                                              for k in range(len(part))]

        drawings = drawn_in_turns(self.scheduler, smiles, self.slice_drawn, attribute)
        return {"method": self.explainer.method, "target": target, "drawings": drawings}


def drawn_in_turns(scheduler: SliceScheduler, smiles: Sequence[Optional[str]], per_turn: int,
                   attribute: Callable[[list], tuple[list, list]]) -> list[dict]:
    """``{"smiles", "svg", "error"}`` per SMILES, in order: ``per_turn`` molecules a turn on
    the model, ``attribute(part)`` giving each row's error ("" when none) and atom scores."""
    from graphnorm.explain.draw import draw_attributions

    smiles = ["" if s is None else str(s) for s in smiles]
    out = []
    for served, start in enumerate(range(0, len(smiles), per_turn)):
        part = smiles[start:start + per_turn]
        # RDKit's parsing and drawing hold the GIL: in the turn, like the model
        with scheduler.turn(served), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            errors, scores = attribute(part)
            for s, err, atom_scores in zip(part, errors, scores):
                svg = None if err else draw_attributions(s.strip(), atom_scores, "svg",
                                                         size=(260, 210))
                out.append({"smiles": s, "svg": svg, "error": err or None})
    return out


def screen(smiles: Sequence[str], lim: Limits, errors: Optional[Sequence[str]] = None) -> list[str]:
    """Per-row errors for SMILES over the per-molecule limits ``lim`` (and already-known
    errors): checked before featurization, which costs atoms^2 x hops."""
    from rdkit import Chem, rdBase

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
