"""Training configuration: one dataclass, filled from YAML and command-line overrides."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

import yaml


@dataclass
class TrainConfig:
    # data
    dataset: str = "zinc-subset"
    raw_dir: Optional[str] = None
    cache_root: Optional[str] = None
    max_hops: int = 5
    limit_train: Optional[int] = None  # use the first N training graphs (smoke tests)
    limit_eval: Optional[int] = None
    # model (Graphormer-slim by default, see graphnorm.graph.graphormer_slim)
    preset: str = "slim"
    model: dict = field(default_factory=dict)  # overrides of GraphormerConfig fields
    norm: str = "sep:bn+ln"
    sep_slots: str = "all"
    dropout: float = 0.1
    attention_dropout: float = 0.1
    # optimisation (Graphormer v1 recipe: AdamW, warm-up then linear decay, L1 for ZINC)
    batch_size: int = 256
    lr: float = 2e-4
    end_lr: float = 1e-9
    weight_decay: float = 0.01
    warmup_steps: Optional[int] = None
    warmup_fraction: float = 0.06  # used when warmup_steps is None
    total_steps: Optional[int] = None  # None: max_epochs x steps per epoch
    grad_clip: float = 5.0
    max_epochs: int = 200
    uniformity_weight: float = 0.0  # lambda of the U-MAE style term on [VNode] (seed paper Eq. 8)
    uniformity_on_tokens: bool = False
    bucket_by_size: bool = True
    # run
    seed: int = 0
    out: str = "runs/default"
    resume: bool = False
    accelerator: str = "auto"  # Lightning: a GPU when there is one, else CPU
    devices: int = 1
    strategy: str = "auto"
    num_workers: int = 0
    checkpoint_every_n_steps: int = 50  # also writes last.ckpt mid-epoch, for --resume
    progress: bool = True
    threads: Optional[int] = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys {unknown}; valid keys: {sorted(known)}")
        return cls(**data)

    @classmethod
    def from_yaml(cls, path: str | Path, **overrides: Any) -> "TrainConfig":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"config file not found: {path}")
        data = yaml.safe_load(path.read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"config file {path} must hold a mapping, got {type(data).__name__}")
        data.update({k: v for k, v in overrides.items() if v is not None})
        return cls.from_dict(data)
