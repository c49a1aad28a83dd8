"""Loading graphnorm checkpoints safely (``weights_only=True``: no pickled code runs).

A checkpoint written by training carries a ``graphnorm`` block: format version, model config,
task, target scaling and featurizer settings, so prediction needs nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from graphnorm.models import build_model

SUPPORTED_FORMATS = (1,)


class CheckpointError(RuntimeError):
    pass


@dataclass
class LoadedModel:
    model: torch.nn.Module  # Graphormer or a baseline GNN (graphnorm.models)
    task: dict
    featurizer: dict
    target_mean: float
    target_std: float
    epoch: int
    meta: dict

    def predict_batch(self, batch) -> torch.Tensor:
        """Predictions in original units (regression) or probabilities (binary): [B, T]."""
        with torch.no_grad():
            out = self.model(batch)
        if self.task["task_type"] == "regression":
            return out * self.target_std + self.target_mean
        return torch.sigmoid(out)


def load_checkpoint(path: str | Path, map_location: str = "cpu") -> LoadedModel:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # truncated file, or objects that weights_only refuses to unpickle
        raise CheckpointError(f"cannot read checkpoint {path}: {err}") from err
    meta = ckpt.get("graphnorm") if isinstance(ckpt, dict) else None
    if meta is None:
        raise CheckpointError(f"{path} is not a graphnorm checkpoint (no 'graphnorm' block)")
    if meta.get("format") not in SUPPORTED_FORMATS:
        raise CheckpointError(
            f"{path} has checkpoint format {meta.get('format')!r} (written by graphnorm "
            f"{meta.get('version', '?')}); this graphnorm reads formats {SUPPORTED_FORMATS}")
    try:
        model = build_model(meta["model_config"])
        state = {k[len("model."):]: v for k, v in ckpt["state_dict"].items() if k.startswith("model.")}
        model.load_state_dict(state)
    except (KeyError, TypeError, RuntimeError) as err:
        raise CheckpointError(f"{path} does not match this graphnorm version's model: {err}") from err
    model.eval()
    return LoadedModel(model, meta["task"], meta["featurizer"], meta["target_mean"],
                       meta["target_std"], int(ckpt.get("epoch", -1)), meta)
