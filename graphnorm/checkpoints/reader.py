"""Reading the model files of a run: a graph checkpoint (`load_checkpoint`), a tree model
(`load_member`), or every member behind a run or ensemble folder (`checkpoint_files`).

Checkpoints are read with ``weights_only=True`` (no pickled code runs) and brought to the
current format (`graphnorm.checkpoints.format.upgrade_checkpoint`) before the model is built,
so every caller sees one format.
"""
from __future__ import annotations

import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch

from graphnorm.chem import FeaturizerConfig
from graphnorm.models import (MODEL_KINDS, build_model, kind_of_file, model_kind, split_model_config,
                              tree_member_files)
from graphnorm.run_folder import BEST_CHECKPOINT, MEMBER_DIRS, METRICS_FILE
from graphnorm.tasks import resolve_task, target_names

from .format import SUPPORTED_FORMATS, CheckpointError, upgrade_checkpoint

TRAIN_HINT = "pass the best.ckpt (or the run directory) that `graphnorm train --out DIR` wrote"


@dataclass
class LoadedModel:
    model: torch.nn.Module  # Graphormer or a baseline GNN (graphnorm.models)
    task: dict
    featurizer: FeaturizerConfig
    target_mean: torch.Tensor  # [T]
    target_std: torch.Tensor
    epoch: int
    meta: dict  # the checkpoint's graphnorm block, in the current format
    path: Path = None

    @property
    def targets(self) -> list[str]:
        """Target names (`graphnorm.tasks.target_names`)."""
        return target_names(self.task)

    @property
    def kind(self):
        """Its entry in the model registry (graphnorm.models): what it supports."""
        return model_kind(split_model_config(self.meta["model_config"])[0])

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def to(self, device: str | torch.device) -> "LoadedModel":
        """The model on ``device`` (e.g. "cuda"); batches follow it in `predict_batch`."""
        self.model.to(device)
        return self

    def predict_batch(self, batch) -> torch.Tensor:
        """Predictions in original units (regression) or probabilities (binary): [B, T],
        on the CPU whatever device the model runs on."""
        device = self.device
        with torch.no_grad():
            out = self.model(batch if device.type == "cpu" else batch.to(device, non_blocking=True))
        return resolve_task(self.task).predictions(out.float().cpu(), self.target_mean,
                                                   self.target_std, self.task.get("target_transforms"))


def checkpoint_files(path: str | Path) -> list[Path]:
    """The model file(s) behind ``path``: a file; a run directory (its best.ckpt, or a tree
    run's forest.skops / gbm.json); an ensemble directory (every model_<k>/best.ckpt, then
    its tree member's file, e.g. forest/forest.skops); else a clear CheckpointError."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.exists():
        raise CheckpointError(f"checkpoint not found: {path}; {TRAIN_HINT}")
    for single in dict.fromkeys(k.model_file for k in MODEL_KINDS.values()):
        if (path / single).is_file():
            return [path / single]
    members = sorted(path.glob(f"{MEMBER_DIRS}/{BEST_CHECKPOINT}"),
                     key=lambda p: (len(p.parent.name), p.parent.name))
    if members:
        return members + tree_member_files(path)
    others = sorted(path.glob("*.ckpt"))
    if len(others) == 1:
        return others
    if others:
        raise CheckpointError(f"{path} holds several checkpoints ({', '.join(p.name for p in others)}) "
                              "but no best.ckpt; pass one of them")
    kind = MODEL_KINDS.get(_run_model(path))
    if kind is not None and kind.tree:
        raise CheckpointError(f"{path} is a {kind.label} run (--model {kind.name}) from before "
                              f"its models were saved: it has no {kind.model_file}; train it "
                              "again to predict with it")
    raise CheckpointError(f"{path} is a directory without checkpoints (no best.ckpt, no "
                          f"model_<k>/best.ckpt); {TRAIN_HINT}")


def _run_model(run: Path):
    """The ``model`` a run folder's metrics.json names (None when there is none to read)."""
    import json

    try:
        return json.loads((run / METRICS_FILE).read_text()).get("model")
    except (OSError, ValueError, AttributeError):
        return None


def is_tree_file(path: Path) -> bool:
    return kind_of_file(path) is not None


def load_member(path: str | Path):
    """An ensemble member from its file: a graph checkpoint (`load_checkpoint`) or a tree
    model (its kind's loader, graphnorm.models), with errors as CheckpointError. Either
    carries ``kind``, its registry entry."""
    from graphnorm.baselines.tree_member import TreeFileError

    kind = kind_of_file(path)
    if kind is None:
        return load_checkpoint(path)
    try:
        member = kind.implementation().load(path)
    except TreeFileError as err:
        raise CheckpointError(str(err)) from err
    from .gnn_columns import attach_backbone

    # trees on a pre-trained network's columns (+gnn sets) get that network
    return attach_backbone(member, load_checkpoint)


def _read(path: Path, map_location: str) -> dict:
    """torch.load(weights_only=True) with one short message per way it fails."""
    size = path.stat().st_size
    if size == 0:
        raise CheckpointError(f"cannot read checkpoint {path}: the file is empty; {TRAIN_HINT}")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"PK\x03\x04":  # torch.save writes a zip archive
        raise CheckpointError(f"{path} is not a checkpoint (not a PyTorch zip archive); {TRAIN_HINT}")
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"cannot read checkpoint {path}: the file is truncated or corrupt "
                              f"(incomplete zip archive, {size:,} bytes); copy it again, or "
                              "use the run's last.ckpt")
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as err:  # objects beyond tensors/containers: not ours
        raise CheckpointError(f"{path} is not a graphnorm checkpoint: it holds Python objects "
                              f"that are not loaded for safety (weights_only); {TRAIN_HINT}") from err
    except Exception as err:  # damaged records inside a complete archive
        raise CheckpointError(f"cannot read checkpoint {path}: the file is corrupt "
                              f"({type(err).__name__}); copy it again, or use the run's "
                              "last.ckpt") from err


def load_checkpoint(path: str | Path, map_location: str = "cpu") -> LoadedModel:
    path = Path(path)
    if path.is_dir():
        files = checkpoint_files(path)
        graphs = [f for f in files if not is_tree_file(f)]
        if len(graphs) == 1:  # one graph model, perhaps beside its tree member: that model
            files = graphs
        if len(files) > 1:
            raise CheckpointError(f"{path} is an ensemble of {len(files)} models; load it with "
                                  "graphnorm.load_predictor, or pass one member's best.ckpt")
        path = files[0]
    elif not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}; {TRAIN_HINT}")
    if is_tree_file(path):
        raise CheckpointError(f"{path} is a tree model: predict takes it (alone or in an "
                              "ensemble), embed and explain take graph models only")
    ckpt = _read(path, map_location)
    meta = ckpt.get("graphnorm") if isinstance(ckpt, dict) else None
    if meta is None:
        raise CheckpointError(f"{path} is not a graphnorm checkpoint (no 'graphnorm' block); "
                              f"{TRAIN_HINT}")
    if meta.get("format") not in SUPPORTED_FORMATS:
        raise CheckpointError(
            f"{path} has checkpoint format {meta.get('format')!r} (written by graphnorm "
            f"{meta.get('version', '?')}); this graphnorm {_version()} reads formats "
            f"{', '.join(map(str, SUPPORTED_FORMATS))}; use the graphnorm version that wrote it")
    try:
        model = build_model(meta["model_config"])
        upgrade_checkpoint(ckpt, model)  # the current format from here on
        known = FeaturizerConfig.__dataclass_fields__  # a newer writer's extra keys: ignored
        featurizer = FeaturizerConfig.from_dict({k: v for k, v in meta["featurizer"].items() if k in known})
        state = {k[len("model."):]: v for k, v in ckpt["state_dict"].items() if k.startswith("model.")}
        model.load_state_dict(state)
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise CheckpointError(f"{path} does not match this graphnorm version's model: {err}") from err
    model.eval()
    mean = torch.tensor(meta["target_mean"], dtype=torch.float32).reshape(-1)
    std = torch.tensor(meta["target_std"], dtype=torch.float32).reshape(-1)
    return LoadedModel(model, meta["task"], featurizer, mean, std,
                       int(ckpt.get("epoch", -1)), meta, path)


def _version() -> str:
    from graphnorm import __version__

    return __version__


def load_gnn_columns(backbone):
    """The +gnn tree features' columns of ``backbone`` (a checkpoint path or a shipped name;
    `graphnorm.checkpoints.gnn_columns.GnnColumns`), None for None (no +gnn features)."""
    if backbone is None:
        return None
    from .gnn_columns import GnnColumns, backbone_file

    path = backbone_file(backbone)
    return GnnColumns(path, load_checkpoint(path))
