"""Prediction from SMILES with a trained checkpoint.

    >>> from graphnorm import load_predictor
    >>> load_predictor("runs/x/best.ckpt").predict(["CCO", "c1ccccc1"])

Each input row gets a prediction or an error message, never both; one bad row never costs
the others their predictions. ``checkpoint`` may be a file, a run directory or an ensemble
directory (``model_<k>/best.ckpt``, and ``gbm/gbm.json`` or ``forest/forest.skops`` when a tree
model is one of its members): an ensemble predicts what `graphnorm.ensemble.Ensemble.combine`
makes of its members (their weighted mean, or of their log-odds) and adds ``<column>_std``,
their population standard deviation (model disagreement, not a calibrated interval). Messages name rows as the user counts them (``row 1`` is the first SMILES; files
read with :func:`read_input` say ``line N``, the header being line 1). A prediction for a molecule larger than every training
molecule (when the checkpoint records the training domain) is extrapolation: it is still
made, and an :class:`ExtrapolationWarning` names the rows (also kept in
``df.attrs["warnings"]``). The model runs in eval mode, so BatchNorm/SepNorm use running
statistics and a molecule's prediction does not depend on its batch mates.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence
from warnings import warn

import numpy as np
import pandas as pd
import torch

from graphnorm.checkpoints import CheckpointError, LoadedModel, load_member
from graphnorm.chem import featurize_many, graph_data
from graphnorm.chem.descriptor_values import shared_by_smiles
from graphnorm.data.table import MoleculeTable, read_table
from graphnorm.graph import collate_graphs
from graphnorm.ensemble import Ensemble
from graphnorm.tasks import resolve_task


class ExtrapolationWarning(UserWarning):
    """A molecule lies outside what the checkpoint was trained on (e.g. larger)."""


@dataclass
class RowPredictions:
    """Per input row: ``mean`` and ``std`` [rows, targets] (NaN where the row failed), its
    error message ("" when predicted) and extrapolation flag ("" when none)."""
    mean: np.ndarray
    std: np.ndarray
    errors: list
    flags: list


def _same(members: Sequence[LoadedModel], what: str, get) -> None:
    first = get(members[0])
    for m in members[1:]:
        if get(m) != first:
            raise CheckpointError(f"ensemble members disagree on {what}: {members[0].path} has "
                                  f"{first!r}, {m.path} has {get(m)!r}; train them in one run")


class Predictor:
    """Predictions of one checkpoint, or an ensemble's (``ensemble.combine`` of its members'
    predictions) plus the members' standard deviation (``<target>_std``: how much the models
    disagree, not a calibrated error bar). A member may be a tree model (``kind.tree``): it
    predicts from the same rows' SMILES, and is one member of the ensemble.
    ``ensemble``: the members' weights and average (`graphnorm.ensemble.Ensemble`, as
    `load_predictor` reads it from an ensemble folder); None: each member once, the mean."""

    def __init__(self, loaded: LoadedModel | Sequence[LoadedModel], batch_size: int = 128,
                 rows_per_pass: int = 20_000, ensemble: Optional[Ensemble] = None):
        from graphnorm.chem import FeaturizerConfig

        self.members = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
        ensemble = ensemble or Ensemble.of_files([m.path for m in self.members])
        if len(ensemble) != len(self.members):
            raise CheckpointError(f"an ensemble of {len(ensemble)} members for "
                                  f"{len(self.members)} loaded models")
        self.ensemble = ensemble.for_task(self.members[0].task)  # logodds: classification only
        self.batch_size = batch_size
        self.rows_per_pass = max(1, rows_per_pass)  # molecules featurized and held at a time
        self.graph_members = [m for m in self.members if not m.kind.tree]  # registry entries
        # the first graph model speaks for the ensemble (featurizer, training domain)
        self.loaded = (self.graph_members or self.members)[0]
        _same(self.graph_members or self.members, "the featurizer", lambda m: m.featurizer)
        _same(self.members, "the task", lambda m: (m.task["task_type"], m.targets))
        # as the graph checkpoints were trained; a forest alone reads SMILES through the
        # default featurizer, which rejects what it could not read either
        self.featurizer = self.loaded.featurizer or FeaturizerConfig()
        self.featurizer.check_current(f"checkpoint {self.loaded.path}")

    @property
    def task(self) -> dict:
        return self.loaded.task

    @property
    def columns(self) -> list[str]:
        """Output column per target: ``prediction`` for one target, else the target names."""
        names = self.loaded.targets
        return ["prediction"] if len(names) == 1 else names

    @property
    def is_ensemble(self) -> bool:
        return len(self.members) > 1

    def featurize(self, smiles: Sequence[str], errors: Optional[list] = None):
        """([(row, MoleculeGraph)] sorted by size, per-row error messages). Rows that already carry an
        error in ``errors`` (e.g. unreadable bytes) are not featurized."""
        errors = list(errors) if errors is not None else [""] * len(smiles)
        clean = [None if x is None else str(x).strip() for x in smiles]
        for i, x in enumerate(clean):
            if not x and not errors[i]:
                errors[i] = "ValueError: empty SMILES"
        todo = [i for i in range(len(smiles)) if not errors[i]]
        # one batched pass (shortest paths of many molecules at once) with per-row messages
        result = featurize_many([clean[i] for i in todo], self.featurizer)
        graphs = []
        for i, arrays, err in zip(todo, result.graphs, result.errors):
            if err is not None:
                errors[i] = f"FeaturizationError: {err}"
            else:
                graphs.append((i, graph_data(arrays, clean[i])))
        graphs.sort(key=lambda t: int(t[1].num_nodes))  # similar sizes together: less padding
        return graphs, errors

    def batches(self, graphs):
        for start in range(0, len(graphs), self.batch_size):
            chunk = graphs[start:start + self.batch_size]
            yield chunk, collate_graphs([g for _, g in chunk])

    def predict_rows(self, smiles: Sequence[str], errors: Optional[Sequence[str]] = None
                     ) -> RowPredictions:
        """Every member's prediction of one slice of rows, featurized together (the unit a
        `graphnorm predict --jobs N` worker computes). Graph members read the featurized
        batches; tree members (``kind.tree``) ``predict_smiles`` of the same rows.
        RDKit descriptors that several members read are computed once per row
        (`shared_by_smiles`)."""
        with shared_by_smiles():
            return self._predict_rows(smiles, errors)

    def _predict_rows(self, smiles: Sequence[str], errors: Optional[Sequence[str]]) -> RowPredictions:
        graphs, errors = self.featurize(smiles, errors)
        n, cols = len(errors), self.columns
        per_member = torch.full((len(self.members), n, len(cols)), float("nan"))
        flags: list = [""] * n
        max_atoms = self.loaded.meta.get("train_domain", {}).get("max_atoms")
        for chunk, batch in self.batches(graphs):
            rows = [i for i, _ in chunk]
            for k, m in enumerate(self.members):
                if not m.kind.tree:
                    per_member[k, rows] = m.predict_batch(batch).float()
            for i, g in chunk:
                flags[i] = extrapolation_flag(g, max_atoms)
        done = [i for i, _ in graphs]
        for k, m in enumerate(self.members):
            if m.kind.tree and done:  # one call per slice: trees vectorize
                per_member[k, done] = m.predict_smiles([str(g.smiles) for _, g in graphs]).float()
        mean, std = np.full((n, len(cols)), np.nan), np.full((n, len(cols)), np.nan)
        if done:  # a chunk where every row failed has nothing to average (torch warns on it)
            mean[done] = self.ensemble.combine(per_member[:, done].double().numpy())
            std[done] = self.ensemble.spread(per_member[:, done]).double().numpy()
        return RowPredictions(mean, std, errors, flags)

    def prediction_frame(self, smiles: Sequence[str], rows: RowPredictions) -> pd.DataFrame:
        """``smiles``, a column per target, ``<column>_std`` for an ensemble, ``error``;
        ``attrs["warnings"]``: {position: extrapolation flag}."""
        data = {"smiles": list(smiles)}
        for j, c in enumerate(self.columns):
            data[c] = rows.mean[:, j]
        if self.is_ensemble:
            for j, c in enumerate(self.columns):
                data[f"{c}_std"] = rows.std[:, j]
        data["error"] = list(rows.errors)
        df = pd.DataFrame(data)
        df.attrs["warnings"] = {i: w for i, w in enumerate(rows.flags) if w}
        return df

    def predict(self, smiles: Sequence[str], labels: Optional[Sequence[str]] = None,
                errors: Optional[Sequence[str]] = None, progress: bool = False) -> pd.DataFrame:
        """One row per input, in order: ``smiles``, a column per target (``prediction`` for
        one target), ``<column>_std`` for an ensemble, ``error``.

        ``labels`` name the rows in warnings as the user counts them (default ``row 1``,
        ``row 2``, ...); ``errors`` pre-set an error for rows that cannot be read.
        ``progress``: a bar on stderr when it is a terminal, else a line per slice of
        ``rows_per_pass`` rows when the input has several.
        """
        from tqdm.auto import tqdm

        from graphnorm.data.build import bar_enabled, stage

        smiles = list(smiles)
        labels = list(labels) if labels is not None else [f"row {i + 1}" for i in range(len(smiles))]
        errors = list(errors) if errors is not None else [""] * len(smiles)
        parts = []
        # featurized graphs (all-pairs paths) take ~100x the memory of a result row: hold one
        # slice of a huge input at a time, not the whole file
        bar_on, lines = bar_enabled(progress), progress and len(smiles) > self.rows_per_pass
        bar = tqdm(total=len(smiles), desc="predicting", unit="mol", disable=not bar_on)
        for start in range(0, len(smiles), self.rows_per_pass):
            stop = min(len(smiles), start + self.rows_per_pass)
            parts.append(self.predict_rows(smiles[start:stop], errors[start:stop]))
            bar.update(stop - start)
            if lines and not bar_on:
                stage(True, f"predicted {stop:,}/{len(smiles):,} rows")
        bar.close()
        rows = RowPredictions(*(np.concatenate([getattr(r, f) for r in parts]) if parts
                                else np.zeros((0, len(self.columns)))
                                for f in ("mean", "std")),
                              sum((r.errors for r in parts), []), sum((r.flags for r in parts), []))
        df = self.prediction_frame(smiles, rows)
        if df.attrs["warnings"]:
            warn(extrapolation_message([(labels[i], smiles[i], w)
                                        for i, w in list(df.attrs["warnings"].items())[:5]],
                                       len(df.attrs["warnings"])),
                 ExtrapolationWarning, stacklevel=2)
        return df

    def interval_halfwidths(self, level: float) -> dict[str, float]:
        """Regression: target -> q, the split-conformal half-width at coverage ``level``
        fitted on the validation predictions of the run(s) the model came from
        (graphnorm/stats/calibration.py); fitted once, applied to any number of rows."""
        from graphnorm.stats.calibration import interval_halfwidths

        if resolve_task(self.task).binary:
            raise ValueError("--interval is for regression models; calibrate a classifier's "
                             "probabilities with --calibrate platt|isotonic")
        val = self.ensemble.combined_predictions("val")
        q = interval_halfwidths(val, level)
        for target, width in q.items():
            if not np.isfinite(width):
                n = int(val[f"y:{target}"].notna().sum())
                raise ValueError(f"a {level:g} interval for {target} needs at least "
                                 f"{int(np.ceil(round(level / (1 - level), 9)))} labelled validation "
                                 f"molecules; the run has {n}: lower --interval or validate on more")
        return q

    def with_intervals(self, df: pd.DataFrame, q: dict[str, float]) -> pd.DataFrame:
        """``<column>_lo`` / ``<column>_hi`` after each prediction column (q from
        `interval_halfwidths`)."""
        out = df.copy()
        for column, target in zip(self.columns, self.loaded.targets):
            at = out.columns.get_loc(column) + 1
            out.insert(at, f"{column}_lo", out[column] - q[target])
            out.insert(at + 1, f"{column}_hi", out[column] + q[target])
        out.attrs = df.attrs
        return out

    def add_intervals(self, df: pd.DataFrame, level: float) -> pd.DataFrame:
        """Regression: `with_intervals` at coverage ``level`` (`interval_halfwidths`)."""
        return self.with_intervals(df, self.interval_halfwidths(level))

    def calibrators(self, method: str) -> dict:
        """Binary: prediction column -> a Platt or isotonic calibrator fitted on the
        validation predictions (graphnorm/stats/calibration.py)."""
        from graphnorm.stats.calibration import ProbabilityCalibrator

        if not resolve_task(self.task).binary:
            raise ValueError("--calibrate is for classification models; regression models "
                             "take --interval LEVEL")
        val = self.ensemble.combined_predictions("val")
        return {column: ProbabilityCalibrator(method).fit(val[f"pred:{target}"].to_numpy(float),
                                                          val[f"y:{target}"].to_numpy(float))
                for column, target in zip(self.columns, self.loaded.targets)}

    def with_calibration(self, df: pd.DataFrame, calibrators: dict) -> pd.DataFrame:
        out = df.copy()
        for column, cal in calibrators.items():
            out[column] = cal.transform(out[column].to_numpy(float))
        out.attrs = df.attrs
        return out

    def calibrate(self, df: pd.DataFrame, method: str) -> pd.DataFrame:
        """Binary: each probability column mapped by a Platt or isotonic calibrator fitted
        on the validation predictions (graphnorm/stats/calibration.py)."""
        return self.with_calibration(df, self.calibrators(method))

    def predict_table(self, table: MoleculeTable, progress: bool = False) -> pd.DataFrame:
        """Predictions for every row of a read table, keeping its other columns (e.g. ``id``);
        an input column named like an output column is kept as ``<name>_input``."""
        errors = row_errors(table.bad_rows, len(table))
        df = self.predict(table.smiles, table.labels, errors, progress=progress)
        return join_input_columns(table, df)


def row_errors(bad_rows: dict[int, str], n: int) -> list[str]:
    """The error column's start: a table's unreadable rows say why, the others are ""."""
    errors = [""] * n
    for k, why in bad_rows.items():
        errors[k] = f"UnicodeDecodeError: {why}" if "UTF-8" in why else why
    return errors


# OGB's atom vocabulary ends in "misc": where an atomic number outside 1-118 lands (a
# wildcard `*`: an attachment point or a polymer end)
OGB_MISC_ELEMENT = 118


def extrapolation_flag(graph, max_atoms: Optional[int], wildcards: bool = False) -> str:
    """Why a featurized molecule lies outside what a model learned ("" when it does not):
    more atoms than ``max_atoms`` (the largest training molecule), or, with ``wildcards``
    (a model whose training molecules had practically none, e.g. the ADMET panel's; an OGB
    featurizer), an atom outside the elements. Own tables of polymer units train on `*`, so
    `predict` does not flag it. The row is still predicted; the flag travels with it."""
    n = int(graph.num_nodes)
    if max_atoms is not None and n > max_atoms:
        return (f"{n} atoms, more than any training molecule ({max_atoms}): the prediction is "
                "an extrapolation")
    if wildcards and bool((graph.x[:, 0] == OGB_MISC_ELEMENT).any()):
        return ("an atom outside the elements (a wildcard *, or beyond atomic number 118): "
                "the prediction is an extrapolation")
    return ""


def extrapolation_message(shown: Sequence[tuple[str, str, str]], total: int) -> str:
    """One warning for many rows: (label, SMILES, flag) of the first few, then a count."""
    text = "; ".join(f"{label} {smiles[:40]!r}: {flag}" for label, smiles, flag in shown)
    more = total - len(shown)
    return f"{text}{f'; and {more} more rows' if more > 0 else ''}"


def join_input_columns(table, df: pd.DataFrame) -> pd.DataFrame:
    """The table's columns first (SMILES as read), then ``df``'s other columns; ``table``
    has a ``frame`` (a `MoleculeTable` or a chunk of one)."""
    keep = table.frame.copy()
    out_cols = [c for c in df.columns if c != "smiles"]
    keep.columns = [f"{c}_input" if c in out_cols else c for c in keep.columns]
    merged = pd.concat([keep.reset_index(drop=True), df[out_cols]], axis=1)
    merged.attrs = df.attrs
    return merged


def resolve_device(device: str = "auto", jobs: int = 1) -> str:
    """Where the graph models run: ``auto`` is a GPU when PyTorch sees one and the models run
    in this process (``jobs`` 1), else the CPU; ``cuda[:k]`` or ``cpu`` as asked, refused
    with a reason where it cannot run."""
    if device == "auto":
        return "cuda" if jobs == 1 and torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"--device {device}: this PyTorch ({torch.__version__}) sees no GPU; "
                             "use --device cpu")
        if jobs > 1:
            raise ValueError(f"--device {device} runs the models in this process: use --jobs 1 "
                             "(each --jobs worker runs its own copy on one CPU core)")
    elif device != "cpu":
        raise ValueError(f"--device {device!r}: use auto, cpu, cuda or cuda:N")
    return device


def load_predictor(checkpoint: str | Path | Sequence[str | Path], batch_size: int = 128,
                   device: str = "cpu") -> Predictor:
    """A file, a run directory (its best.ckpt) or an ensemble directory (model_<k>/best.ckpt);
    several of them pool into one ensemble (e.g. every seed of a benchmark variant, or runs of
    different models trained on the same data and featurizer). The graph models run on
    ``device`` (`resolve_device`); tree members on the CPU."""
    # one ensemble folder: the member weights it fitted on validation and its average
    # (ensemble.json); pooled runs: the equal mean
    ensemble = Ensemble.load(checkpoint)
    members = [load_member(f) for f in ensemble.files]
    device = resolve_device(device)
    for m in members:
        if not m.kind.tree:
            m.to(device)
    return Predictor(members, batch_size=batch_size, ensemble=ensemble)


def read_input(path: str | Path, smiles_column: Optional[str] = None) -> MoleculeTable:
    """A predict/embed input file: .smi, .csv, .tsv, .sdf, .parquet (see graphnorm.data.table);
    a line that is not UTF-8 becomes that row's error, the others are read."""
    return read_table(path, smiles_column, strict_encoding=False)


def read_smiles_file(path: str | Path, smiles_column: Optional[str] = None) -> list[str]:
    """SMILES of an input file, one per row (see :func:`read_input`)."""
    return read_input(path, smiles_column).smiles
