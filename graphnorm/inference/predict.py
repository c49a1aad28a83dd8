"""Prediction from SMILES with a trained checkpoint.

    >>> from graphnorm import load_predictor
    >>> load_predictor("runs/x/best.ckpt").predict(["CCO", "c1ccccc1"])

Each input row gets a prediction or an error message, never both; one bad row never costs
the others their predictions. ``checkpoint`` may be a file, a run directory or an ensemble
directory (``model_<k>/best.ckpt``, and ``forest/forest.skops`` when a fingerprint forest is
one of its members): an ensemble predicts the members' mean and adds
``<column>_std``, their population standard deviation (model disagreement, not a calibrated
interval). Messages name rows as the user counts them (``row 1`` is the first SMILES; files
read with :func:`read_input` say ``line N``, the header being line 1). A prediction for a molecule larger than every training
molecule (when the checkpoint records the training domain) is extrapolation: it is still
made, and an :class:`ExtrapolationWarning` names the rows (also kept in
``df.attrs["warnings"]``). The model runs in eval mode, so BatchNorm/SepNorm use running
statistics and a molecule's prediction does not depend on its batch mates.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence
from warnings import warn

import numpy as np
import pandas as pd
import torch

from graphnorm.train.checkpoint import CheckpointError, LoadedModel, checkpoint_files, load_member
from graphnorm.chem import featurize_many, graph_data
from graphnorm.data.table import MoleculeTable, read_table
from graphnorm.graph import collate_graphs


class ExtrapolationWarning(UserWarning):
    """A molecule lies outside what the checkpoint was trained on (e.g. larger)."""


def _same(members: Sequence[LoadedModel], what: str, get) -> None:
    first = get(members[0])
    for m in members[1:]:
        if get(m) != first:
            raise CheckpointError(f"ensemble members disagree on {what}: {members[0].path} has "
                                  f"{first!r}, {m.path} has {get(m)!r}; train them in one run")


class Predictor:
    """Predictions of one checkpoint, or the mean of an ensemble's members plus their
    standard deviation (``<target>_std``: how much the models disagree, not a calibrated
    error bar). A member may be a fingerprint forest (`graphnorm.baselines.forest_file`):
    it predicts from the same rows' SMILES, and counts as one member in the mean."""

    def __init__(self, loaded: LoadedModel | Sequence[LoadedModel], batch_size: int = 128,
                 rows_per_pass: int = 20_000):
        from graphnorm.chem import FeaturizerConfig

        self.members = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
        self.batch_size = batch_size
        self.rows_per_pass = max(1, rows_per_pass)  # molecules featurized and held at a time
        self.graph_members = [m for m in self.members if m.featurizer is not None]
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
        """([(row, Data)] sorted by size, per-row error messages). Rows that already carry an
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
        cols = self.columns
        mean = np.full((len(smiles), len(cols)), np.nan)
        std = np.full_like(mean, np.nan)
        flags: list = [""] * len(smiles)
        max_atoms = self.loaded.meta.get("train_domain", {}).get("max_atoms")
        # featurized graphs (all-pairs paths) take ~100x the memory of a result row: hold one
        # slice of a huge input at a time, not the whole file
        bar_on, lines = bar_enabled(progress), progress and len(smiles) > self.rows_per_pass
        bar = tqdm(total=len(smiles), desc="predicting", unit="mol", disable=not bar_on)
        for start in range(0, len(smiles), self.rows_per_pass):
            stop = min(len(smiles), start + self.rows_per_pass)
            graphs, errors[start:stop] = self.featurize(smiles[start:stop], errors[start:stop])
            bar.update(stop - start - len(graphs))  # rows that failed are done
            for chunk, batch in self.batches(graphs):
                out = torch.stack([m.predict_batch(batch) for m in self.members])  # [M, B, T]
                rows = [start + i for i, _ in chunk]
                mean[rows] = out.mean(0).double().numpy()
                std[rows] = out.std(0, unbiased=False).double().numpy()
                for i, g in chunk:
                    if max_atoms is not None and int(g.num_nodes) > max_atoms:
                        flags[start + i] = (f"{int(g.num_nodes)} atoms, more than any training "
                                            f"molecule ({max_atoms}): the prediction is an extrapolation")
                bar.update(len(chunk))
            if lines and not bar_on:
                stage(True, f"predicted {stop:,}/{len(smiles):,} rows")
        bar.close()
        data = {"smiles": smiles}
        for j, c in enumerate(cols):
            data[c] = [None if errors[i] else float(mean[i, j]) for i in range(len(smiles))]
        if self.is_ensemble:
            for j, c in enumerate(cols):
                data[f"{c}_std"] = [None if errors[i] else float(std[i, j]) for i in range(len(smiles))]
        data["error"] = errors
        df = pd.DataFrame(data)
        df.attrs["warnings"] = {i: w for i, w in enumerate(flags) if w}  # keys: df positions
        if df.attrs["warnings"]:
            shown = "; ".join(f"{labels[i]} {smiles[i][:40]!r}: {w}"
                              for i, w in list(df.attrs["warnings"].items())[:5])
            more = len(df.attrs["warnings"]) - 5
            warn(f"{shown}{f'; and {more} more rows' if more > 0 else ''}",
                 ExtrapolationWarning, stacklevel=2)
        return df

    def add_intervals(self, df: pd.DataFrame, level: float) -> pd.DataFrame:
        """Regression: ``<column>_lo`` / ``<column>_hi`` after each prediction column, the
        split-conformal interval at coverage ``level`` fitted on the validation predictions
        of the run(s) the model came from (graphnorm/inference/conformal.py)."""
        from graphnorm.inference.conformal import interval_halfwidths, validation_predictions

        if self.task["task_type"] != "regression":
            raise ValueError("--interval is for regression models; calibrate a classifier's "
                             "probabilities with --calibrate platt|isotonic")
        val = validation_predictions([m.path for m in self.members])
        q = interval_halfwidths(val, level)
        for target, width in q.items():
            if not np.isfinite(width):
                n = int(val[f"y:{target}"].notna().sum())
                raise ValueError(f"a {level:g} interval for {target} needs at least "
                                 f"{int(np.ceil(round(level / (1 - level), 9)))} labelled validation "
                                 f"molecules; the run has {n}: lower --interval or validate on more")
        out = df.copy()
        for column, target in zip(self.columns, self.loaded.targets):
            at = out.columns.get_loc(column) + 1
            out.insert(at, f"{column}_lo", out[column] - q[target])
            out.insert(at + 1, f"{column}_hi", out[column] + q[target])
        out.attrs = df.attrs
        return out

    def calibrate(self, df: pd.DataFrame, method: str) -> pd.DataFrame:
        """Binary: each probability column mapped by a Platt or isotonic calibrator fitted
        on the validation predictions (graphnorm/inference/conformal.py)."""
        from graphnorm.inference.conformal import ProbabilityCalibrator, validation_predictions

        if self.task["task_type"] != "binary":
            raise ValueError("--calibrate is for classification models; regression models "
                             "take --interval LEVEL")
        val = validation_predictions([m.path for m in self.members])
        out = df.copy()
        for column, target in zip(self.columns, self.loaded.targets):
            cal = ProbabilityCalibrator(method).fit(val[f"pred:{target}"].to_numpy(float),
                                                    val[f"y:{target}"].to_numpy(float))
            out[column] = cal.transform(out[column].to_numpy(float))
        out.attrs = df.attrs
        return out

    def predict_table(self, table: MoleculeTable, progress: bool = False) -> pd.DataFrame:
        """Predictions for every row of a read table, keeping its other columns (e.g. ``id``);
        an input column named like an output column is kept as ``<name>_input``."""
        errors = [""] * len(table)
        for k, why in table.bad_rows.items():
            errors[k] = f"UnicodeDecodeError: {why}" if "UTF-8" in why else why
        df = self.predict(table.smiles, table.labels, errors, progress=progress)
        return join_input_columns(table, df)


def join_input_columns(table: MoleculeTable, df: pd.DataFrame) -> pd.DataFrame:
    """The table's columns first (SMILES as read), then ``df``'s other columns."""
    keep = table.frame.copy()
    out_cols = [c for c in df.columns if c != "smiles"]
    keep.columns = [f"{c}_input" if c in out_cols else c for c in keep.columns]
    merged = pd.concat([keep.reset_index(drop=True), df[out_cols]], axis=1)
    merged.attrs = df.attrs
    return merged


def load_predictor(checkpoint: str | Path | Sequence[str | Path], batch_size: int = 128) -> Predictor:
    """A file, a run directory (its best.ckpt) or an ensemble directory (model_<k>/best.ckpt);
    several of them pool into one ensemble (e.g. every seed of a benchmark variant, or runs of
    different models trained on the same data and featurizer)."""
    paths = [checkpoint] if isinstance(checkpoint, (str, Path)) else list(checkpoint)
    if not paths:
        raise CheckpointError("no checkpoint given")
    files = [f for p in paths for f in checkpoint_files(p)]
    return Predictor([load_member(f) for f in files], batch_size=batch_size)


def read_input(path: str | Path, smiles_column: Optional[str] = None) -> MoleculeTable:
    """A predict/embed input file: .smi, .csv, .tsv, .sdf, .parquet (see graphnorm.data.table);
    a line that is not UTF-8 becomes that row's error, the others are read."""
    return read_table(path, smiles_column, strict_encoding=False)


def read_smiles_file(path: str | Path, smiles_column: Optional[str] = None) -> list[str]:
    """SMILES of an input file, one per row (see :func:`read_input`)."""
    return read_input(path, smiles_column).smiles
