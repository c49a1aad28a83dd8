"""The ADMET panel behind ``graphnorm serve --admet FOLDER``: `AdmetPanel`
(graphnorm/inference/admet_panel.py) in slices on the server's turns, as `PredictionService`
serves a trained model (service.py: per-molecule limits first, one slice on the model at a
time), and its atom-attribution drawings of one endpoint (`graphnorm.explain.panel_attributions`)."""
from __future__ import annotations

import math
from typing import Optional, Sequence

from .limits import Limits
from .scheduler import SliceScheduler
from .service import drawn_in_turns, screen


def _json(x):
    """A JSON-safe cell: finite numbers, booleans, text; None for the rest."""
    if x is None or isinstance(x, (bool, str)):
        return x
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


class PanelService:
    def __init__(self, panel, limits: Limits = Limits(), slice_rows: int = 64,
                 scheduler: Optional[SliceScheduler] = None, method: Optional[str] = None,
                 slice_drawn: int = 2):
        from graphnorm.explain.methods import DEFAULT_METHOD, check_method

        if slice_rows < 1 or slice_drawn < 1:
            raise ValueError(f"slices must hold at least one molecule, got {slice_rows}, "
                             f"{slice_drawn}")
        self.panel, self.limits, self.slice_rows = panel, limits, slice_rows
        # drawings: a few molecules a turn, as PredictionService draws (occlusion: one
        # forward per atom position)
        self.method, self.slice_drawn = method or DEFAULT_METHOD, slice_drawn
        check_method(self.method, panel.loaded)  # e.g. rollout on a GNN: refused at start
        self.scheduler = scheduler or SliceScheduler()  # shared with a model served beside it

    def endpoints(self) -> list[dict]:
        """Per endpoint: task, kind, units, held-out metric, score, n, half-width / ECE, and
        its predictor (the network's head, or a one-table booster)."""
        return [{k: _json(v) for k, v in row.items()}
                for row in self.panel.endpoints().to_dict("records")]

    def predict(self, smiles: Sequence[Optional[str]]) -> dict:
        """``{"columns", "rows"}``: one row per SMILES in order; a molecule the model cannot
        read or over a limit gets its ``error``, the others every endpoint."""
        smiles = ["" if s is None else str(s) for s in smiles]
        rows, columns = [], None
        for served, start in enumerate(range(0, len(smiles), self.slice_rows)):
            part = smiles[start:start + self.slice_rows]
            with self.scheduler.turn(served):
                frame = self.panel.predict(part, screen(part, self.limits))
            columns = list(frame.columns)
            for rec in frame.to_dict("records"):
                row = {c: _json(rec[c]) for c in columns}
                row["error"] = rec["error"] or None
                rows.append(row)
        if columns is None:
            columns = list(self.panel.predict([]).columns)
        return {"columns": columns, "rows": rows}

    def draw(self, smiles: Sequence[Optional[str]], endpoint: str) -> dict:
        """Attribution drawings (SVG) of each SMILES for one shown endpoint, in order; a
        PanelError (before any work) for an endpoint the panel does not show."""
        from graphnorm.explain.panel_attributions import explain_endpoint, method_for, score_scale

        meaning, _ = score_scale(self.panel, endpoint, self.method)

        def attribute(part: list[str]) -> tuple[list, list]:
            got = explain_endpoint(self.panel, part, endpoint, self.method,
                                   errors=screen(part, self.limits))
            return got.errors, got.scores

        drawings = drawn_in_turns(self.scheduler, smiles, self.slice_drawn, attribute)
        return {"method": method_for(self.panel, endpoint, self.method), "target": endpoint,
                "score": meaning, "drawings": drawings}
