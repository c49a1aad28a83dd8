"""The one-table boosters of a hybrid ADMET panel (experiments/results/pretrain/RULE.md, J
and K): the endpoints where a booster on Morgan counts and the head's descriptors (J) -- and,
for some, also the network's [VNode] embedding and outputs (K) -- beat the panel's predictor
on the selection half are predicted by it (graphnorm/pretrain/readout.py fits them;
``readouts.json.gz`` beside the checkpoint holds them).

A booster reads exactly what it was fitted on, so the bundle names its columns (Morgan bits
and radius, the descriptor set and its count, RDKit's version; per booster its variant and
the output it leaves out) and a panel whose featurizer differs is refused, as is a bundle
other than the one the panel names by its sha256. The network's columns come from the same
checkpoint, which the panel names by its sha256 too.
"""
from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Optional

import numpy as np

from graphnorm.pretrain.readout_panel import BUNDLE_FILE, predicted_by_booster
from graphnorm.tasks import CLASSIFICATION


class PanelBoosters:
    """``predict(view)`` -> {task: logit (binary) or value in its units}, where ``view`` is
    the molecules as the panel's network saw them (`MoleculeView`)."""

    def __init__(self, bundle: dict, tasks: list[str]):
        from graphnorm.pretrain.readout import MORGAN, booster_estimator, stored_model

        self.signature = bundle["features"]
        self.estimators, self.reads = {}, {}
        for task in tasks:
            stored = bundle["boosters"][task]
            binary = stored["kind"] == CLASSIFICATION.stored
            self.estimators[task] = (binary, booster_estimator(
                binary, stored["transform"], model=stored_model(stored["model"])))
            # (variant, own output); bundles of J's first runs hold Morgan boosters only
            self.reads[task] = (stored.get("features", MORGAN), stored.get("own"))

    @property
    def needs_backbone(self) -> bool:
        """Whether some booster reads the network's embedding and outputs (RULE.md K)."""
        from graphnorm.pretrain.readout import BACKBONE

        return any(variant == BACKBONE for variant, _ in self.reads.values())

    @classmethod
    def load(cls, folder: Path, panel: dict, descriptors, error) -> Optional["PanelBoosters"]:
        """The boosters of ``panel``'s booster entries (None when it has none); ``error``:
        the exception class to raise, naming the file, when the bundle is missing, foreign
        or fitted on other columns than ``descriptors`` (the checkpoint's descriptor set)."""
        tasks = [e["task"] for e in panel["endpoints"] if predicted_by_booster(e)]
        if not tasks:
            return None
        path = Path(folder) / BUNDLE_FILE
        if not path.is_file():
            raise error(f"{folder}: the panel predicts {len(tasks)} endpoints with boosters "
                        f"but {BUNDLE_FILE} is missing (rebuild with `graphnorm pretrain --out "
                        "<run> --readouts`)")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != panel.get("readouts_sha256"):
            raise error(f"{path} is not the bundle this panel was built with: rebuild both "
                        "(`graphnorm pretrain --out <run> --readouts`)")
        try:
            bundle = json.loads(gzip.decompress(data))
            bundle["boosters"], bundle["features"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise error(f"{path}: not a readout bundle ({type(err).__name__}: {err})") from err
        from graphnorm.pretrain.readout_panel import bundle_signature

        if descriptors is None or bundle["features"] != bundle_signature(descriptors):
            raise error(f"{path}: its boosters read {bundle['features']}, this model's "
                        f"featurizer gives descriptors={descriptors!r} under this RDKit: "
                        "refit them (`graphnorm pretrain --out <run> --readouts`)")
        missing = [t for t in tasks if t not in bundle["boosters"]]
        if missing:
            raise error(f"{path}: no booster for {missing[:3]}")
        return cls(bundle, tasks)

    def features(self, task: str, view: "MoleculeView") -> np.ndarray:
        """What ``task``'s booster reads of the molecules of ``view``."""
        from graphnorm.pretrain.readout import BACKBONE, with_backbone

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
        """Each booster's prediction of the molecules of ``view``."""
        from graphnorm.pretrain.readout import logit_of

        out = {}
        for task, (binary, est) in self.estimators.items():
            if not len(view.smiles):
                out[task] = np.empty(0)
                continue
            p = est.predict(self.features(task, view))
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
        from graphnorm.pretrain.readout import morgan_counts, readout_features

        join = (lambda parts: np.concatenate(parts) if parts else None)
        self.descriptors = join(self._descriptors)
        self.embedding, self.outputs = join(self._embedding), join(self._outputs)
        self.morgan = morgan_counts(self.smiles) if self.smiles else None
        self.base = (readout_features(self.morgan, self.descriptors) if self.smiles
                     else None)
        return self
