"""The one-table boosters of a hybrid ADMET panel (experiments/results/pretrain/RULE.md, J):
the endpoints where a booster on Morgan counts and the head's descriptors beat the multi-task
head on the panel's selection half are predicted by it (graphnorm/pretrain/readout.py fits
them; ``readouts.json.gz`` beside the checkpoint holds them).

A booster reads exactly what it was fitted on, so the bundle names its columns (Morgan bits
and radius, the descriptor set and its count, RDKit's version) and a panel whose featurizer
differs is refused, as is a bundle other than the one the panel names by its sha256.
"""
from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Optional

import numpy as np

from graphnorm.pretrain.readout_panel import BUNDLE_FILE
from graphnorm.tasks import CLASSIFICATION


class PanelBoosters:
    """``predict(smiles, descriptors)`` -> {task: logit (binary) or value in its units}."""

    def __init__(self, bundle: dict, tasks: list[str]):
        from graphnorm.pretrain.readout import booster_estimator, stored_model

        self.signature = bundle["features"]
        self.estimators = {}
        for task in tasks:
            stored = bundle["boosters"][task]
            binary = stored["kind"] == CLASSIFICATION.stored
            self.estimators[task] = (binary, booster_estimator(
                binary, stored["transform"], model=stored_model(stored["model"])))

    @classmethod
    def load(cls, folder: Path, panel: dict, descriptors, error) -> Optional["PanelBoosters"]:
        """The boosters of ``panel``'s booster entries (None when it has none); ``error``:
        the exception class to raise, naming the file, when the bundle is missing, foreign
        or fitted on other columns than ``descriptors`` (the checkpoint's descriptor set)."""
        tasks = [e["task"] for e in panel["endpoints"] if e.get("readout") == "booster"]
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

    def contributions(self, task: str, smiles: list[str], descriptors: np.ndarray) -> np.ndarray:
        """float [N, features + 1]: TreeSHAP contributions of each column to the booster's raw
        output (log-odds; a log10 value under a log10 target; the value otherwise), the base
        value last (LightGBM's ``pred_contrib``); zeros for a one-class rate."""
        from graphnorm.pretrain.readout import morgan_counts, readout_features

        x = readout_features(morgan_counts(smiles), descriptors)
        model = self.estimators[task][1].model  # a Log10Target's is its inner booster's
        if isinstance(model, float):
            return np.zeros((len(x), x.shape[1] + 1))
        return np.asarray(model.predict(x, pred_contrib=True))

    def transform(self, task: str):
        """The booster's target transform ("log10" or None)."""
        return getattr(self.estimators[task][1], "transform", None)

    def predict(self, smiles: list[str], descriptors: np.ndarray) -> dict[str, np.ndarray]:
        """Each booster's prediction for molecules the featurizer read (``descriptors``:
        theirs, [N, D], in the same order)."""
        from graphnorm.pretrain.readout import logit_of, morgan_counts, readout_features

        if not len(smiles):
            return {task: np.empty(0) for task in self.estimators}
        x = readout_features(morgan_counts(smiles), descriptors)
        out = {}
        for task, (binary, est) in self.estimators.items():
            p = est.predict(x)
            out[task] = logit_of(p) if binary else p
        return out
