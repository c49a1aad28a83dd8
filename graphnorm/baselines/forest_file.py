"""A forest run's saved model: ``forest.skops`` beside ``forest.json``.

``forest.skops`` holds the fitted scikit-learn forests in the skops format
(https://skops.readthedocs.io/en/stable/persistence.html): loading it builds only the types
listed in `TRUSTED` and runs no pickled code, the rule graphnorm checkpoints keep with
``weights_only=True``. ``forest.json`` says what the forests read and predict (fingerprint,
task, targets, versions), so a loaded forest is an ensemble member like a graph checkpoint:
``predict_batch`` gives [B, T] predictions in the same units (probabilities for binary
targets), from the batch's SMILES instead of its graphs.
"""
from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .tree_member import TreeFileError, TreeKind, TreeMember

FOREST_FILE, FOREST_META = "forest.skops", "forest.json"
FOREST_FORMAT = 1
# the one non-builtin type a fitted forest holds (skops.io.get_untrusted_types)
TRUSTED = ("sklearn.tree._tree.Tree",)


class ForestFileError(TreeFileError):
    pass


def save_forest(out: Path, forests: list, task: dict, fingerprint: dict, config: dict,
                seed: int) -> Path:
    """``out/forest.skops`` (compressed) and ``out/forest.json``; returns the .skops path."""
    import sklearn
    import skops.io as sio

    from graphnorm import __version__

    out = Path(out)
    sio.dump({"forests": forests}, out / FOREST_FILE, compression=zipfile.ZIP_DEFLATED)
    meta = {"format": FOREST_FORMAT, "version": __version__, "sklearn": sklearn.__version__,
            "task": dict(task), "fingerprint": dict(fingerprint), "forest": dict(config),
            "seed": seed}
    (out / FOREST_META).write_text(json.dumps(meta, indent=2))
    return out / FOREST_FILE


@dataclass
class LoadedForest(TreeMember):
    """Fitted forests (one per target; None where training had no label) as an ensemble
    member (`graphnorm.baselines.tree_member.TreeMember`)."""
    forests: list
    task: dict
    meta: dict
    path: Path

    def predict_smiles(self, smiles: list[str]) -> torch.Tensor:
        from .forest import morgan_counts, predict_forests

        x = morgan_counts(smiles, bits=int(self.meta["fingerprint"]["bits"]))
        pred = predict_forests(self.task, self.forests, x)
        return torch.from_numpy(np.asarray(pred, dtype=np.float32))


def load_forest(path: str | Path) -> LoadedForest:
    """The forest saved at ``path`` (``forest.skops``, its ``forest.json`` beside it), with a
    clear ForestFileError when it is missing, of another format, holds types beyond
    `TRUSTED`, or was written by a scikit-learn that this one cannot read."""
    import sklearn
    import skops.io as sio

    path = Path(path)
    meta_path = path.parent / FOREST_META
    if not path.is_file():
        raise ForestFileError(f"forest not found: {path}")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as err:
        raise ForestFileError(f"{path}: its description {meta_path} is missing or unreadable "
                              f"({type(err).__name__}); retrain the forest (--model rf)") from err
    if meta.get("format") != FOREST_FORMAT:
        raise ForestFileError(f"{path} has forest format {meta.get('format')!r} (graphnorm "
                              f"{meta.get('version', '?')}); this graphnorm reads format "
                              f"{FOREST_FORMAT}: use the version that wrote it, or retrain")
    if int(meta["fingerprint"].get("radius", 2)) != 2:
        raise ForestFileError(f"{path}: Morgan radius {meta['fingerprint']['radius']}; this "
                              "graphnorm computes radius 2")
    try:
        untrusted = [t for t in sio.get_untrusted_types(file=path) if t not in TRUSTED]
        if untrusted:
            raise ForestFileError(f"{path} holds types a graphnorm forest never has "
                                  f"({', '.join(untrusted)}): not loaded, for safety")
        forests = sio.load(path, trusted=list(TRUSTED))["forests"]
    except ForestFileError:
        raise
    except Exception as err:  # a damaged zip, or trees of an unreadable scikit-learn
        raise ForestFileError(f"cannot read forest {path} ({type(err).__name__}: {err}); it was "
                              f"written with scikit-learn {meta.get('sklearn', '?')}, this is "
                              f"{sklearn.__version__}: retrain it (--model rf) or install that "
                              "version") from err
    return LoadedForest(forests, meta["task"], meta, path)


def _fit(task, x, y, seed, threads):
    from .forest import ForestConfig, fit_forests

    return fit_forests(task, x, y, seed, threads), ForestConfig().__dict__, [None] * y.shape[1]


def _predict(task, models, x, transforms):
    from .forest import predict_forests

    return predict_forests(task, models, x)


def _save(out, models, task, features, config, seed, transforms):
    fingerprint = {"radius": features["morgan_radius"], "bits": features["width"],
                   "kind": "Morgan counts"}
    return save_forest(out, models, task, fingerprint, config, seed)


# the code of the ``rf`` entry of graphnorm.models: 2048 Morgan counts, saved with skops
FOREST = TreeKind("morgan", _fit, _predict, _save, load_forest)
