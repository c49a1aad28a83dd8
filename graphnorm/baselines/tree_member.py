"""What a fitted tree model (``rf``, ``gbm``) is as an ensemble member: the interface of a
graph checkpoint (`graphnorm.checkpoints.LoadedModel`) that ``predict``, ``serve`` and
ensembles use -- ``task``, ``targets``, ``path``, ``predict_batch`` -- read from SMILES
instead of graphs; ``featurizer`` is None (no graph, no weights to explain or embed)."""
from __future__ import annotations

import torch

from graphnorm.tasks import target_names


class TreeFileError(RuntimeError):
    """A saved tree model that cannot be loaded (missing, other format, unsafe, damaged)."""


class TreeMember:
    featurizer = None  # reads SMILES, not graphs
    task: dict
    path: object

    @property
    def targets(self) -> list[str]:
        return target_names(self.task)

    def predict_smiles(self, smiles: list[str]) -> torch.Tensor:
        raise NotImplementedError

    def predict_batch(self, batch) -> torch.Tensor:
        """[B, T] from the batch's SMILES (every graphnorm batch carries them)."""
        if batch.smiles is None or any(s is None for s in batch.smiles):
            raise TreeFileError(f"{self.path}: a tree model predicts from SMILES, and this "
                                "batch carries none")
        return self.predict_smiles(list(batch.smiles))
