"""Model config of a training run: the model's preset (graphnorm.models), the featurizer's
sizes, then the run's norm, dropout and ``model:`` overrides."""
from __future__ import annotations

import dataclasses

from graphnorm.chem import FeaturizerConfig
from graphnorm.models import MODEL_NAMES, model_kind, preset_fields

# model fields that the featurizer decides: set them through `featurizer:`, never `model:`
FEATURIZER_SIZED = ("max_hops", "max_dist", "atom_feature_dims", "edge_feature_dims",
                    "fingerprint_bits", "descriptors")


def featurizer_sizes(featurizer: FeaturizerConfig, fields: set) -> dict:
    """The model fields (of a config class with ``fields``) that must agree with the
    featurized data."""
    atom_dims, bond_dims = featurizer.feature_dims
    sizes = dict(atom_feature_dims=atom_dims, edge_feature_dims=bond_dims,
                 fingerprint_bits=featurizer.fingerprint_bits)
    if featurizer.descriptors:  # absent otherwise: model configs of older checkpoints match
        from graphnorm.chem.descriptors import descriptor_count

        sizes["descriptors"] = descriptor_count(featurizer.descriptors)
    if "max_hops" in fields:  # a model that reads shortest paths
        sizes.update(max_hops=featurizer.max_hops, max_dist=featurizer.max_dist)
    return sizes


def _check_overrides(overrides: dict, sizes: dict, fields: set, name: str) -> None:
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(f"model overrides {unknown} do not apply to model {name}; "
                         f"its fields are {sorted(fields - {'kind'})}")
    for key in FEATURIZER_SIZED:
        if key in overrides and key in sizes and comparable(overrides[key]) != comparable(sizes[key]):
            hint = (f"set `featurizer: {{{key}: {overrides[key]}}}` instead: it sizes the data "
                    "and the model alike" if key in ("max_hops", "max_dist", "fingerprint_bits",
                                                     "descriptors")
                    else "it follows the dataset's vocabulary")
            raise ValueError(f"model override {key}={overrides[key]!r} conflicts with the "
                             f"featurizer's {key}={sizes[key]!r}; {hint}")


def comparable(v):
    """A config value as compared: lists (JSON, checkpoints) and tuples alike."""
    return tuple(v) if isinstance(v, (list, tuple)) else v


def model_config_for(cfg, info: dict, featurizer: FeaturizerConfig) -> dict:
    """The model config dict (``"model"`` + fields, see graphnorm.models) of a TrainConfig
    whose data is featurized by ``featurizer``."""
    name = cfg.model_name
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)}")
    kind = model_kind(name).implementation()
    fields = {f.name for f in dataclasses.fields(kind.config_class)}
    sizes = featurizer_sizes(featurizer, fields)
    kw = dict(preset_fields(name, cfg.preset), **sizes, num_tasks=info["num_tasks"],
              dropout=cfg.dropout)
    kw.update(kind.run_fields(cfg))
    _check_overrides(cfg.model, sizes, fields, name)
    kw.update(cfg.model)
    return dict(kind.config(**kw).to_dict(), model=name)  # validates early
