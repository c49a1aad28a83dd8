"""`Ensemble`: an ensemble's members (model file, kind, weight) and the rule that averages
them, with the one `combine` that every place which averages members calls.

An ensemble folder (`train --ensemble N`, `--tree-member`) holds ``model_<k>/best.ckpt``
per graph member, a tree member's file (``gbm/gbm.json``, ``forest/forest.skops``) and
``ensemble.json``: the member weights fitted on validation and the average (`averaging`).
`Ensemble.read` is the one reader of that file; `Ensemble.load` turns what ``predict`` is
given (one folder, or several runs pooled) into an ensemble; training builds one from its
members' files (`Ensemble.of_files`) and records it with `Ensemble.record`.

    ensemble = Ensemble.load(["runs/admet"])       # members, weights, average
    mean = ensemble.combine(member_predictions)    # [M, N, T] -> [N, T]

`combine` is called by training (the ensemble's validation/test scores and the candidate
weights it fits), ``predict``/``serve``, the conformal intervals and calibration fitted on
validation, and a benchmark summary's seed and model-pair ensembles (runs pooled: the plain
mean, as ``predict`` pools several runs). `split_predictions` reads the members' own
prediction files of a split (``predictions_<split>.csv.gz``, written beside each model file).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Optional, Sequence

from graphnorm.ensemble.averaging import MEAN, average_for, average_members, check_average
from graphnorm.run_folder import ENSEMBLE_FILE, predictions_file


class MemberRowsError(ValueError):
    """Members whose prediction files of a split hold other molecules or labels: their
    predictions cannot be averaged row by row."""


@dataclass(frozen=True)
class Member:
    """One member: its file, its kind's name in the model registry (graphnorm.models) where
    the file says it (tree kinds; None for a graph checkpoint, whose kind is in its model
    config, or for a member known only by its predictions) and its weight in the mean (None:
    every member counts once). ``path`` is the model file (``model_0/best.ckpt``,
    ``gbm/gbm.json``) or, where only its predictions are read, a prediction file: the
    member's prediction files lie beside it (None: a member known only by the predictions
    handed to `Ensemble.combine`, as when training weighs candidate weights)."""
    path: Optional[Path]
    kind: Optional[str] = None
    weight: Optional[float] = None

    @classmethod
    def of_file(cls, path, weight: Optional[float] = None) -> "Member":
        from graphnorm.models import kind_of_file

        kind = kind_of_file(path)
        return cls(Path(path), None if kind is None else kind.name,
                   None if weight is None else float(weight))

    @property
    def tree(self) -> bool:
        """A tree kind's file (fitted on SMILES features; graphnorm.models)."""
        from graphnorm.models import kind_of_file

        return kind_of_file(self.path) is not None

    def predictions(self, split: str) -> Path:
        """Its predictions of ``split`` (val, test), written when it was scored."""
        return self.path.parent / predictions_file(split)


@dataclass(frozen=True)
class Ensemble:
    """Members and how they are averaged (``average``: `averaging.MEAN` or `LOGODDS`)."""
    members: tuple
    average: str = MEAN

    def __post_init__(self):
        object.__setattr__(self, "members", tuple(self.members))
        if not self.members:
            raise ValueError("an ensemble needs at least one member")
        check_average(self.average)
        given = [m.weight is not None for m in self.members]
        if any(given) and not all(given):
            raise ValueError("member weights: give every member one, or none (equal)")

    # --- making one ---

    @classmethod
    def of_files(cls, files: Sequence, weights: Optional[Sequence[float]] = None,
                 average: str = MEAN) -> "Ensemble":
        """Members from their files, in order; ``weights`` None: equal."""
        files = list(files)
        if weights is not None and len(weights) != len(files):
            raise ValueError(f"{len(weights)} member weights for {len(files)} members")
        return cls(tuple(Member.of_file(f, None if weights is None else weights[k])
                         for k, f in enumerate(files)), average)

    @classmethod
    def read(cls, folder) -> "Ensemble":
        """The ensemble in ``folder``: its members' files (`checkpoint_files`) with the weights
        and average its ``ensemble.json`` records. Equal weights where the file has none or
        a list that does not match the members; ``mean`` where it names no average (every
        ensemble before log-odds averaging). An average this version does not know is a
        CheckpointError naming the file."""
        from graphnorm.checkpoints import CheckpointError, checkpoint_files

        folder = Path(folder)
        files = checkpoint_files(folder)
        path = folder / ENSEMBLE_FILE
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            record = {}
        record = record if isinstance(record, dict) else {}
        weights, average = record.get("member_weights"), record.get("member_average")
        if not isinstance(weights, list) or len(weights) != len(files):
            weights = None
        try:
            return cls.of_files(files, weights, average if isinstance(average, str) else MEAN)
        except (TypeError, ValueError) as err:
            raise CheckpointError(f"{path}: {err}: written by a newer graphnorm?") from err

    @classmethod
    def load(cls, paths) -> "Ensemble":
        """What ``predict`` is given: one ensemble folder (`read`: its weights and average),
        or model files and run folders pooled into one ensemble, each member once, averaged
        by the plain mean (e.g. every seed of a benchmark variant)."""
        from graphnorm.checkpoints import CheckpointError, checkpoint_files

        paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
        if not paths:
            raise CheckpointError("no checkpoint given")
        files = [f for p in paths for f in checkpoint_files(p)]
        if len(paths) == 1 and len(files) > 1:
            return cls.read(paths[0])
        return cls.of_files(files)

    def for_task(self, task) -> "Ensemble":
        """The average a task takes (``logodds`` only on classification, `average_for`);
        ``task``: anything `graphnorm.tasks.resolve_task` reads."""
        from graphnorm.tasks import resolve_task

        return replace(self, average=average_for(resolve_task(task), self.average))

    def weighted(self, weights: Optional[Sequence[float]]) -> "Ensemble":
        """The same members with ``weights`` (None: equal)."""
        if weights is not None and len(weights) != len(self.members):
            raise ValueError(f"{len(weights)} member weights for {len(self.members)} members")
        return replace(self, members=tuple(
            replace(m, weight=None if weights is None else float(weights[k]))
            for k, m in enumerate(self.members)))

    # --- what it is ---

    def __len__(self) -> int:
        return len(self.members)

    @property
    def files(self) -> list[Path]:
        return [m.path for m in self.members]

    @property
    def weights(self) -> Optional[list[float]]:
        """The members' weights, or None: every member counts once (the plain mean)."""
        return None if self.members[0].weight is None else [m.weight for m in self.members]

    @property
    def tree(self) -> list[bool]:
        """Per member: a tree kind (what the tree weight of `train --tree-weight` weighs)."""
        return [m.tree for m in self.members]

    def record(self, folder) -> dict:
        """What ``ensemble.json`` says of the ensemble (`read` reads it back): the member
        files relative to ``folder``, the average and, unless equal, the weights (6 places)."""
        out = {"member_files": [str(Path(p).relative_to(folder)) for p in self.files],
               "member_average": self.average}
        if self.weights is not None:
            out["member_weights"] = [round(float(w), 6) for w in self.weights]
        return out

    # --- averaging ---

    def combine(self, member_predictions):
        """The ensemble's prediction: member_predictions [M, N, T] (torch tensor or numpy
        array, M = its members in order) -> [N, T] in the same library and dtype, averaged
        by its rule and weights (graphnorm/ensemble/averaging.py)."""
        if len(member_predictions) != len(self.members):
            raise ValueError(f"predictions of {len(member_predictions)} members for an "
                             f"ensemble of {len(self.members)}")
        return average_members(member_predictions, self.weights, self.average)

    @staticmethod
    def spread(member_predictions):
        """The members' population standard deviation [N, T] (how much they disagree; not a
        calibrated error bar), in the library and dtype given."""
        import numpy as np

        if isinstance(member_predictions, np.ndarray):
            return member_predictions.std(0)
        return member_predictions.std(0, unbiased=False)

    # --- the members' own prediction files ---

    def split_predictions(self, split: str, targets: Optional[Sequence[str]] = None,
                          read: Optional[Callable] = None):
        """(rows, preds) from each member's ``predictions_<split>.csv.gz``: ``rows`` the
        first file's ``smiles`` and ``y:<target>`` columns, ``preds`` [M, N, T] float64 in
        the order of ``targets`` (None: the first file's labels). A missing file is a
        FileNotFoundError naming it; files with other molecules or labels a `MemberRowsError`,
        a file without a target's columns a KeyError. ``read``: how a file is read
        (default pandas.read_csv)."""
        import numpy as np
        import pandas as pd

        read = read or pd.read_csv
        frames = []
        for member in self.members:
            path = member.predictions(split)
            if not path.is_file():
                what = "validation" if split == "val" else split
                raise FileNotFoundError(f"no {what} predictions {path}: an ensemble's "
                                        "intervals, calibration and scores read them (a run "
                                        "writes them when it finishes)")
            frames.append(read(path))
        names = (list(targets) if targets is not None else
                 [c[2:] for c in frames[0].columns if c.startswith("y:")])
        labels, preds = [f"y:{n}" for n in names], [f"pred:{n}" for n in names]
        for member, frame in zip(self.members, frames):
            missing = [c for c in ["smiles", *labels, *preds] if c not in frame]
            if missing:
                raise KeyError(f"{member.predictions(split)} has no column {', '.join(missing)}")
        rows = frames[0][["smiles", *labels]]
        for member, frame in zip(self.members[1:], frames[1:]):
            if not frame[["smiles", *labels]].equals(rows):
                raise MemberRowsError(f"{member.path} scored other molecules than "
                                      f"{self.members[0].path} on {split}: an ensemble's "
                                      "members need one split")
        return rows.copy(), np.stack([f[preds].to_numpy(dtype=float) for f in frames])

    def combined_predictions(self, split: str = "val"):
        """The ensemble's predictions of a split as it predicts (its members' files,
        `combine`d): ``smiles``, ``y:<target>``, ``pred:<target>`` -- what conformal intervals
        and probability calibration are fitted on (`graphnorm.stats.calibration`)."""
        out, stacked = self.split_predictions(split)
        out[[c.replace("y:", "pred:", 1) for c in out.columns if c.startswith("y:")]] = \
            self.combine(stacked)
        return out
