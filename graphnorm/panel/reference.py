"""Where a prediction stands among known drugs: each endpoint's predictions for a reference set
of molecules, kept as quantiles, so that ``graphnorm admet`` can add a percentile beside every
value (``<endpoint>_percentile``) -- "higher than 80 % of approved drugs" says more to a
chemist than a hERG probability of 0.31 or a CLint of 1.7 log units. ADMET-AI does the same
against DrugBank's approved drugs (Swanson et al. 2024, *ADMET-AI*, Bioinformatics 40(7),
https://doi.org/10.1093/bioinformatics/btae416).

The shipped reference: the FDA-approved drugs of ClinTox (MoleculeNet; MIT, the corpus's
``molnet_clintox``, ``FDA_APPROVED`` = 1) that the panel featurizes. A user may build one from
any molecules (their own compound library: "where does this compound stand in my project").

``reference.json`` beside ``panel.json`` holds, per shown endpoint, the 0th to 100th percentile
of the panel's predictions for those molecules (101 numbers, 4 significant digits) and the
sha256 of the panel file it was computed with: a panel rebuilt since (readouts, blend, ...)
makes it stale, and a stale reference is refused by name, never read against other columns.

A value's percentile is the piecewise-linear inverse of those quantiles; where several
quantiles are equal (a column of near-zero probabilities), a value equal to them takes the
middle of their range, and a value outside the range 0 or 100.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from .record import PanelFileError, panel_file_sha256

REFERENCE_FILE, REFERENCE_FORMAT = "reference.json", 1
GRID = np.linspace(0.0, 100.0, 101)  # the percentiles each endpoint keeps
MIN_MOLECULES = 20  # fewer predictions than this give no percentile worth showing
APPROVED_TABLE = ("molnet_clintox", "FDA_APPROVED")  # corpus folder, its 0/1 column
APPROVED_NAME = "FDA-approved drugs (ClinTox, MoleculeNet; MIT)"


def approved_drugs(raw_dir=None) -> tuple[list[str], str]:
    """(SMILES, where from) of the corpus's ClinTox rows with FDA_APPROVED = 1."""
    from graphnorm.pretrain.corpus import corpus_root

    folder, column = APPROVED_TABLE
    path = corpus_root(raw_dir) / folder / "data.csv.gz"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such table (the approved drugs are read from the "
                                "corpus's ClinTox copy; or give --molecules FILE)")
    import pandas as pd

    table = pd.read_csv(path)
    if column not in table.columns or "smiles" not in table.columns:
        raise ValueError(f"{path}: no smiles and {column} columns")
    approved = pd.to_numeric(table[column], errors="coerce") == 1
    return table.loc[approved, "smiles"].astype(str).tolist(), f"{path} ({column} = 1)"


@dataclass(frozen=True)
class Reference:
    name: str  # what the molecules are, in words (shown by `admet --list` and the card)
    source: str  # where they came from (a file, a corpus table)
    molecules: int  # how many the panel predicted
    panel_sha256: str  # the panel file the quantiles were computed with
    quantiles: dict  # endpoint -> 101 predicted values at GRID's percentiles

    @functools.cached_property
    def _steps(self) -> dict:
        """Per endpoint (distinct quantile values, the percentile each stands for): a run of
        equal quantiles stands for its middle. Computed once; `percentile` runs per slice."""
        steps = {}
        for task, quantiles in self.quantiles.items():
            q = np.asarray(quantiles, dtype=float)
            levels, first = np.unique(q, return_index=True)
            last = len(q) - 1 - np.unique(q[::-1], return_index=True)[1]
            steps[task] = (levels, (GRID[first] + GRID[last]) / 2)
        return steps

    def percentile(self, task: str, values) -> np.ndarray:
        """The percentile (0-100) of each value among the reference's predictions of
        ``task``; NaN where a value is NaN."""
        levels, middle = self._steps[task]
        values = np.asarray(values, dtype=float)
        out = np.interp(values, levels, middle, left=0.0, right=100.0)
        return np.where(np.isnan(values), np.nan, out)

    def to_dict(self) -> dict:
        return {"format": REFERENCE_FORMAT, "name": self.name, "source": self.source,
                "molecules": self.molecules, "panel_sha256": self.panel_sha256,
                "percentiles": list(GRID), "quantiles": self.quantiles}

    def write(self, folder) -> Path:
        path = Path(folder) / REFERENCE_FILE
        path.write_text(json.dumps(self.to_dict(), separators=(",", ":")) + "\n")
        return path


def quantiles_of(frame, tasks) -> dict:
    """Per task the 101 quantiles of its predicted values in ``frame`` (rows with a
    prediction only), 4 significant digits; tasks with too few predictions are left out."""
    out = {}
    for task in tasks:
        values = np.asarray(frame[task], dtype=float)
        values = values[np.isfinite(values)]
        if len(values) >= MIN_MOLECULES:
            out[task] = [float(f"{v:.4g}") for v in np.percentile(values, GRID)]
    return out


def read_reference(folder) -> Optional[Reference]:
    """The reference beside ``folder``'s panel.json; None without one. A file that is not a
    reference, or that another panel file computed, is a PanelFileError naming it."""
    path = Path(folder) / REFERENCE_FILE
    if not path.is_file():
        return None
    rebuild = f"rebuild it: graphnorm panel reference {folder}"
    try:
        d = json.loads(path.read_text())
        if d.get("format") != REFERENCE_FORMAT or list(d["percentiles"]) != list(GRID):
            raise ValueError(f"format {d.get('format')!r}, this graphnorm reads "
                             f"{REFERENCE_FORMAT}")
        reference = Reference(str(d["name"]), str(d["source"]), int(d["molecules"]),
                              str(d["panel_sha256"]),
                              {str(t): [float(v) for v in q] for t, q in d["quantiles"].items()})
        if any(len(q) != len(GRID) for q in reference.quantiles.values()):
            raise ValueError(f"an endpoint without {len(GRID)} quantiles")
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise PanelFileError(f"{path}: not a reference of percentiles ({err}); {rebuild}") from err
    if reference.panel_sha256 != panel_file_sha256(folder):
        raise PanelFileError(f"{path} was computed with another panel.json than the one beside "
                             f"it (the panel was rebuilt since); {rebuild}")
    return reference
