"""Dict round trip of model config dataclasses (what checkpoints and hparams store)."""
from __future__ import annotations

import dataclasses


class ConfigIO:
    """Mixin for config dataclasses: ``to_dict`` (tuples as lists, for YAML/JSON) and a
    ``from_dict`` that names unknown keys instead of a bare ``TypeError``."""

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict):
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown {cls.__name__} keys: {sorted(unknown)}; valid: {sorted(names)}")
        return cls(**d)


def check_dropouts(config) -> None:
    """Every ``*dropout`` field of a config dataclass is a probability in [0, 1): at 1 a
    layer's output would be all zeros (or NaN after rescaling), never a useful setting."""
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if f.name.endswith("dropout") and not 0.0 <= value < 1.0:
            raise ValueError(f"{f.name} must lie in [0, 1), got {value!r}")
