"""What a tree model kind is: `TreeKind`, the code of a tree entry of graphnorm.models (what
it reads, how it fits, predicts, saves and loads), and `TreeMember`, a fitted one as an
ensemble member: the interface of a graph checkpoint (`graphnorm.checkpoints.LoadedModel`)
that ``predict``, ``serve`` and ensembles use -- ``task``, ``targets``, ``meta``, ``path``, ``kind``,
``predict_batch`` -- read from SMILES instead of graphs; ``featurizer`` is None."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from graphnorm.tasks import target_names


class TreeFileError(RuntimeError):
    """A saved tree model that cannot be loaded (missing, other format, unsafe, damaged)."""


@dataclass(frozen=True)
class TreeKind:
    feature_set: str  # graphnorm.chem.tabular: what it reads unless told otherwise
    fit: Callable  # (task, x, y [N, T], seed, threads) -> (models, config, transforms)
    predict: Callable  # (task, models, x, transforms) -> [N, T]; task: graphnorm.tasks.Task
    save: Callable  # (out, models, task, features, config, seed, transforms) -> Path
    load: Callable  # (path) -> TreeMember
    also_reads: tuple = ()  # other feature sets it can be fitted on (--tree-features)

    def features(self, name, requested) -> str:
        """The set a run fits on: ``requested`` (--tree-features) or its own; a clear error
        for a set this kind cannot read (``name``: the kind's, for the message)."""
        if requested is None or requested == self.feature_set:
            return self.feature_set
        if requested not in self.also_reads:
            raise ValueError(f"--tree-features {requested}: {name} reads "
                             f"{', '.join((self.feature_set,) + self.also_reads)}")
        return requested


class TreeMember:
    featurizer = None  # reads SMILES, not graphs
    task: dict
    meta: dict  # what its file stores beside the model (predict reads train_domain if any)
    path: object

    @property
    def targets(self) -> list[str]:
        return target_names(self.task)

    @property
    def kind(self):
        """Its entry in the model registry (graphnorm.models), known by its file's name."""
        from graphnorm.models import kind_of_file

        kind = kind_of_file(self.path)
        if kind is None:
            raise TreeFileError(f"{self.path}: not the file name of a tree model kind")
        return kind

    def predict_smiles(self, smiles: list[str]) -> torch.Tensor:
        raise NotImplementedError

    def predict_batch(self, batch) -> torch.Tensor:
        """[B, T] from the batch's SMILES (every graphnorm batch carries them)."""
        if batch.smiles is None or any(s is None for s in batch.smiles):
            raise TreeFileError(f"{self.path}: a tree model predicts from SMILES, and this "
                                "batch carries none")
        return self.predict_smiles(list(batch.smiles))
