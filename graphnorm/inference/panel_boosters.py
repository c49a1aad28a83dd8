"""The one-table boosters of a hybrid ADMET panel: the endpoints where a booster on Morgan
counts and the head's descriptors -- and, for some, also the network's [VNode] embedding and
outputs -- beat the panel's predictor on the selection half are predicted by it (graphnorm/panel/readouts.py fits them;
``readouts.json.xz`` beside the checkpoint holds them: `graphnorm.panel.boosters`).

A booster reads exactly what it was fitted on, so the bundle names its columns (Morgan bits
and radius, the descriptor set and its count, RDKit's version; per booster its variant and
the output it leaves out) and a panel whose featurizer differs is refused, as is a bundle
other than the one the panel names by its sha256. The network's columns come from the same
checkpoint, which the panel names by its sha256 too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from graphnorm.baselines.booster_store import decode
from graphnorm.panel.boosters import (BACKBONE, booster_estimator, logit_of, morgan_counts,
                                      read_bundle, readout_features, with_backbone)
from graphnorm.tasks import CLASSIFICATION


class PanelBoosters:
    """``predict(view)`` -> {task: logit (binary) or value in its units}, where ``view`` is
    the molecules as the panel's network saw them (`MoleculeView`)."""

    def __init__(self, stored: dict):
        """``stored``: {task: stored booster} (`graphnorm.panel.boosters.read_bundle`)."""
        self.estimators, self.reads = {}, {}
        for task, booster in stored.items():
            binary = booster["kind"] == CLASSIFICATION.stored
            self.estimators[task] = (binary, booster_estimator(
                binary, booster["transform"], model=decode(booster["model"])))
            self.reads[task] = (booster["features"], booster.get("own"))  # (variant, own output)

    @property
    def needs_backbone(self) -> bool:
        """Whether some booster reads the network's embedding and outputs."""
        return any(variant == BACKBONE for variant, _ in self.reads.values())

    @classmethod
    def load(cls, folder: Path, panel, descriptors, error) -> Optional["PanelBoosters"]:
        """The boosters of ``panel``'s booster entries (None when it has none); ``error``:
        the exception class to raise, naming the file, when the bundle is missing, foreign
        or fitted on other columns than ``descriptors`` (the checkpoint's descriptor set)."""
        if not panel.booster_tasks():
            return None
        return cls(read_bundle(folder, panel, descriptors, error))

    def features(self, task: str, view: "MoleculeView") -> np.ndarray:
        """What ``task``'s booster reads of the molecules of ``view``."""
        variant, own = self.reads[task]
        if variant != BACKBONE:
            return view.base  # built once per view, shared by every Morgan booster
        return with_backbone(view.base, view.embedding, view.outputs, own)

    def contributions(self, task: str, view: "MoleculeView") -> np.ndarray:
        """float [N, features + 1]: TreeSHAP contributions of each column to the booster's raw
        output (log-odds; a log10 value under a log10 target; the value otherwise), the base
        value last (LightGBM's ``pred_contrib``); zeros for a one-class rate. The Morgan
        counts are the first columns."""
        x = self.features(task, view)
        model = self.estimators[task][1].model  # a Log10Target's is its inner booster's
        if isinstance(model, float):
            return np.zeros((len(x), x.shape[1] + 1))
        return np.asarray(model.predict(x, pred_contrib=True))

    def transform(self, task: str):
        """The booster's target transform ("log10" or None)."""
        return getattr(self.estimators[task][1], "transform", None)

    def predict(self, view: "MoleculeView") -> dict[str, np.ndarray]:
        """Each booster's prediction of the molecules of ``view``. The Morgan boosters read
        the shared columns as a CSR matrix: ~95 % of them are zero counts, which LightGBM then
        skips instead of copying every row's ~2,200 columns once per booster (the same
        predictions, ~20 % less time in the boosters)."""
        out = {}
        sparse = None
        for task, (binary, est) in self.estimators.items():
            if not len(view.smiles):
                out[task] = np.empty(0)
                continue
            x = self.features(task, view)
            if x is view.base:
                if sparse is None:
                    from scipy.sparse import csr_matrix

                    sparse = csr_matrix(view.base)
                x = sparse
            p = est.predict(x)
            out[task] = logit_of(p) if binary else p
        return out


class MoleculeView:
    """Molecules the panel's network read: their SMILES, Morgan counts, the featurizer's
    descriptors and, where boosters need them, the network's embeddings and raw outputs --
    gathered batch by batch in the order the batches come (`add`)."""

    def __init__(self, backbone: bool):
        self.backbone, self.rows, self.smiles = backbone, [], []
        self._descriptors, self._embedding, self._outputs = [], [], []

    def add(self, rows: list, smiles: list, batch, raw=None, embedding=None) -> None:
        self.rows += rows
        self.smiles += smiles
        self._descriptors.append(batch.descriptors.float().numpy())
        if self.backbone:
            self._outputs.append(raw.float().numpy())
            self._embedding.append(embedding.float().numpy())

    def done(self) -> "MoleculeView":
        """The view, its parts joined; ``base``: the Morgan counts and descriptors every
        booster reads (`readout.readout_features`)."""
        join = (lambda parts: np.concatenate(parts) if parts else None)
        self.descriptors = join(self._descriptors)
        self.embedding, self.outputs = join(self._embedding), join(self._outputs)
        self.morgan = morgan_counts(self.smiles) if self.smiles else None
        self.base = (readout_features(self.morgan, self.descriptors) if self.smiles
                     else None)
        return self
