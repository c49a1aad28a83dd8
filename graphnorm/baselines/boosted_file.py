"""A boosted-tree run's saved model: ``gbm.json``.

One JSON file: what the boosters read (the feature set's signature: set, width, RDKit
version), the task, per-target transforms, and each booster in LightGBM's own text model
format, a one-class target as its rate, an unlabelled one as null
(`graphnorm.baselines.booster_store`, the stored form every booster file shares).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .booster_store import StoredBoosterError, decode, encode
from .tree_member import TreeFileError, TreeKind, TreeMember

BOOSTED_FILE = "gbm.json"
BOOSTED_FORMAT = 1


def save_boosted(out: Path, models: list, task: dict, features: dict, config: dict, seed: int,
                 transforms: list) -> Path:
    import lightgbm

    from graphnorm import __version__

    stored = [encode(m) for m in models]
    meta = {"format": BOOSTED_FORMAT, "version": __version__, "lightgbm": lightgbm.__version__,
            "task": dict(task), "features": dict(features), "gbm": dict(config), "seed": seed,
            "transforms": list(transforms), "boosters": stored}
    path = Path(out) / BOOSTED_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(meta))
    tmp.replace(path)
    return path


@dataclass
class LoadedBoosted(TreeMember):
    """Boosters (one per target) as an ensemble member (`TreeMember`)."""
    boosters: list
    task: dict
    meta: dict
    path: Path
    admet_boosters: Path | None = None  # its own ADMET boosters' file (None: the shipped)
    # +gnn sets: the copy of the network in its folder, and its columns (a GnnColumns, given
    # by graphnorm.checkpoints when it loads the member: a model file is a layer above this)
    backbone_file: Path | None = None
    gnn: object | None = None

    def predict_smiles(self, smiles: list[str]) -> torch.Tensor:
        from .tree_features import feature_matrix

        from .boosted import predict_boosted

        if self.backbone_file is not None and self.gnn is None:
            raise TreeFileError(f"{self.path} reads a feature backbone: load it with "
                                "graphnorm.checkpoints.load_member, which attaches it")
        x = feature_matrix(self.meta["features"]["set"], smiles, self.admet_boosters, self.gnn)
        pred = predict_boosted(self.task, self.boosters, x, self.meta["transforms"])
        return torch.from_numpy(np.asarray(pred, dtype=np.float32))


def load_boosted(path: str | Path) -> LoadedBoosted:
    """The boosters saved at ``path``, with a clear TreeFileError when the file is missing,
    damaged, of another format, or computed with features this RDKit makes differently."""
    from .admet_boosters import AdmetBoostersError
    from .tree_features import GNN, run_backbone, run_boosters, signature

    path = Path(path)
    if not path.is_file():
        raise TreeFileError(f"boosted-tree model not found: {path}")
    try:
        meta = json.loads(path.read_text())
        stored = meta["boosters"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise TreeFileError(f"cannot read boosted-tree model {path} ({type(err).__name__}); "
                            "retrain it (--model gbm)") from err
    if meta.get("format") != BOOSTED_FORMAT:
        raise TreeFileError(f"{path} has gbm format {meta.get('format')!r} (graphnorm "
                            f"{meta.get('version', '?')}); this graphnorm reads format "
                            f"{BOOSTED_FORMAT}: use the version that wrote it, or retrain")
    boosters = run_boosters(meta["features"], path.parent)
    backbone = run_backbone(meta["features"], path.parent)
    feature_set = meta["features"]["set"]
    try:  # the +gnn columns are checked when the backbone is attached (graphnorm.checkpoints)
        here = signature(feature_set.removesuffix(GNN), boosters)
    except AdmetBoostersError as err:  # its own boosters' copy missing or damaged
        raise TreeFileError(f"{path} reads the ADMET boosters of its folder: {err}") from err
    if meta["features"].get("width", 0) - meta["features"].get("gnn_width", 0) != here["width"]:
        raise TreeFileError(f"{path} was fitted on {meta['features'].get('width')} features "
                            f"(RDKit {meta['features'].get('rdkit')}); this RDKit "
                            f"{here['rdkit']} makes {here['width']}: retrain it, or install "
                            "that RDKit")
    if "admet" in meta["features"] and meta["features"]["admet"] != here.get("admet"):
        raise TreeFileError(f"{path} was fitted on the predictions of other ADMET boosters "
                            f"({meta['features']['admet']}) than "
                            f"{'its folder holds' if boosters else 'this graphnorm ships'} "
                            f"({here.get('admet')}): retrain it, or use the version that "
                            f"wrote it ({meta.get('version', '?')})")
    try:
        models = [decode(m, f"{path}, target {j}") for j, m in enumerate(stored)]
    except StoredBoosterError as err:  # a damaged model string
        raise TreeFileError(f"cannot read boosted-tree model: {err}; retrain it "
                            "(--model gbm)") from err
    return LoadedBoosted(models, meta["task"], meta, path, boosters, backbone)


def _fit(task, x, y, seed, threads):
    from graphnorm.tasks import target_transforms

    from .boosted import BoostedConfig, fit_boosted

    # one rule with the graph models; stored per target, None where raw
    transforms = target_transforms(task, y) or [None] * y.shape[1]
    config = BoostedConfig()
    return fit_boosted(task, x, y, seed, threads, config, transforms), config.to_dict(), transforms


def _predict(task, models, x, transforms):
    from .boosted import predict_boosted

    return predict_boosted(task, models, x, transforms)


# the code of the ``gbm`` entry of graphnorm.models: MapLight features (or MapLight and the
# shipped ADMET boosters' predictions), LightGBM's text format
BOOSTED = TreeKind("maplight", _fit, _predict, save_boosted, load_boosted,
                   also_reads=("maplight+admet", "maplight+gnn", "maplight+admet+gnn"))
