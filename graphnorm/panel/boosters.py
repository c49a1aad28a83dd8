"""The booster bundle beside a hybrid panel (``readouts.json.xz``): its format, the columns a
booster reads, and how a stored booster predicts.

Where the selection half chose it, an endpoint is predicted by a one-table
LightGBM booster instead of the network's head. A booster reads its molecule's Morgan counts
(`MORGAN_BITS`, clipped at 255) and the checkpoint's fast descriptors (``morgan``), and, for
some, also the network's [VNode] embedding and raw head outputs less the endpoint's own
(`BACKBONE`, set against the panel the Morgan boosters made). The bundle stores each as a LightGBM model string (or a one-class rate as a JSON
number) with what it reads; `read_bundle` refuses a bundle that is not the one the panel
names, or whose columns are not what this featurizer and RDKit give.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from graphnorm.data.files import json_from_xz, json_xz_bytes

from graphnorm.baselines.boosted import BoostedConfig

from .record import BACKBONE, Panel

BUNDLE_FILE, BUNDLE_FORMAT = "readouts.json.xz", 1
MORGAN = "morgan"  # a booster's ``features`` when it reads the molecule alone
MORGAN_BITS, SEED, EPS = 2048, 0, 1e-6
# compact: the chosen boosters ship inside the wheel
CONFIG = BoostedConfig(n_estimators=200, learning_rate=0.06, num_leaves=15)


def morgan_counts(smiles: list[str]) -> np.ndarray:
    """uint8 [N, MORGAN_BITS]: Morgan counts (clipped at 255: a tree reads the order only)."""
    from graphnorm.chem.tabular import feature_matrix

    return np.minimum(feature_matrix("morgan", smiles), 255).astype(np.uint8)


def readout_features(morgan: np.ndarray, descriptors: np.ndarray) -> np.ndarray:
    """float32 [N, MORGAN_BITS + D]: what every readout booster reads (Morgan counts first:
    TreeSHAP's atom scores read those columns)."""
    return np.concatenate([np.asarray(morgan, np.float32), np.asarray(descriptors, np.float32)], 1)


def with_backbone(base: np.ndarray, embedding: np.ndarray, outputs: np.ndarray,
                  own: int) -> np.ndarray:
    """float32 [N, MORGAN_BITS + D + H + T - 1]: ``base`` (`readout_features`) and the
    backbone's [VNode] ``embedding`` [N, H] and raw head ``outputs`` [N, T], less output
    ``own`` (the endpoint's): what a ``backbone`` booster reads."""
    return np.concatenate([base, np.asarray(embedding, np.float32),
                           np.delete(np.asarray(outputs, np.float32), own, axis=1)], 1)


def logit_of(p: np.ndarray) -> np.ndarray:
    """A booster's probability as a logit (what the panel scores and Platt-scales)."""
    p = np.clip(np.asarray(p, float), EPS, 1 - EPS)
    return np.log(p / (1 - p))


def booster_estimator(binary: bool, transform, threads: int = 1, model=None):
    """The readout estimator of one endpoint: unfitted (``model`` None) or a stored booster."""
    from graphnorm.baselines.boosted import BoostedTarget
    from graphnorm.baselines.estimators import with_transform

    est = (BoostedTarget(binary, CONFIG, SEED, threads) if model is None
           else BoostedTarget.from_model(model))
    return with_transform(est, None if binary else transform)


def bundle_signature(descriptors) -> dict:
    """What a readout booster's columns are: a panel checks it against its featurizer."""
    import rdkit

    from graphnorm.chem.descriptors import descriptor_count
    from graphnorm.chem.tabular import MORGAN_RADIUS

    return {"morgan_bits": MORGAN_BITS, "morgan_radius": MORGAN_RADIUS,
            "descriptors": descriptors, "descriptor_count": descriptor_count(descriptors),
            "rdkit": rdkit.__version__}


def write_bundle(folder, boosters: dict, descriptors) -> str:
    """Write ``folder/readouts.json.xz`` ({task: {"model", "kind", "transform", "features",
    "own"}}) with its columns' signature; returns its sha256 (what the panel names)."""
    bundle = {"format": BUNDLE_FORMAT, "features": bundle_signature(descriptors),
              "boosters": boosters}
    data = json_xz_bytes(bundle)
    (Path(folder) / BUNDLE_FILE).write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def read_bundle(folder, panel: Panel, descriptors, error=ValueError) -> dict:
    """{task: stored booster} of ``panel``'s booster endpoints from ``folder``'s bundle;
    ``error`` (the exception class raised, naming the file) when the bundle is missing, not
    the one the panel names, or fitted on other columns than ``descriptors`` give."""
    tasks = panel.booster_tasks()
    path = Path(folder) / BUNDLE_FILE
    rebuild = "(rebuild with `graphnorm panel readouts <run>`)"
    if not path.is_file():
        raise error(f"{folder}: the panel predicts {len(tasks)} endpoints with boosters "
                    f"but {BUNDLE_FILE} is missing {rebuild}")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != panel.readouts_sha256:
        raise error(f"{path} is not the bundle this panel was built with: rebuild both {rebuild}")
    try:
        bundle = json_from_xz(data)
        boosters, signature = bundle["boosters"], bundle["features"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise error(f"{path}: not a readout bundle ({type(err).__name__}: {err})") from err
    if descriptors is None or signature != bundle_signature(descriptors):
        raise error(f"{path}: its boosters read {signature}, this model's featurizer gives "
                    f"descriptors={descriptors!r} under this RDKit: refit them {rebuild}")
    missing = [t for t in tasks if t not in boosters]
    if missing:
        raise error(f"{path}: no booster for {missing[:3]}")
    return {t: dict(boosters[t], features=boosters[t].get("features", MORGAN)) for t in tasks}


__all__ = ["BACKBONE", "BUNDLE_FILE", "BUNDLE_FORMAT", "CONFIG", "EPS", "MORGAN", "MORGAN_BITS",
           "SEED", "booster_estimator", "bundle_signature", "logit_of", "morgan_counts",
           "read_bundle", "readout_features", "with_backbone", "write_bundle"]
