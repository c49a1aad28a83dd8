"""Earlier names of config keys, read as today's (config files, the config stored in a
run's metrics.json, ensemble.json or checkpoint), and the duration syntax of ``max_time``."""
from __future__ import annotations

import re

# keys renamed since runs and config files were written: old name -> the field it now is
# (issue 57: a gbm member is not a forest; the tree member's names match tree_features,
# tree_weight, tree_refit)
RENAMED_KEYS = {"forest_member": "tree_member", "forest_model": "tree_model"}
# every earlier key a config may still hold at its top level -> what it is now
OLD_KEYS = {**{old: f"the earlier name of {new}" for old, new in RENAMED_KEYS.items()},
            "max_hops": "a featurizer setting: featurizer: {max_hops: ...}",
            "max_dist": "a featurizer setting: featurizer: {max_dist: ...}"}


def fold_old_keys(data: dict) -> dict:
    """``data`` with the keys of older configs (YAML files, the config stored in a
    metrics.json, ensemble.json or checkpoint) read as today's: top-level max_hops/max_dist
    (`fold_flat_featurizer_keys`) and the renamed keys of `RENAMED_KEYS`. A key given under
    both names with different values is an error naming both."""
    return fold_renamed_keys(fold_flat_featurizer_keys(data))


def fold_renamed_keys(data: dict) -> dict:
    """``data`` with each old key of `RENAMED_KEYS` under its new name (forest_member ->
    tree_member, forest_model -> tree_model); both names with different values: ValueError."""
    old = [k for k in RENAMED_KEYS if k in data]
    if not old:
        return data
    out = {k: v for k, v in data.items() if k not in RENAMED_KEYS}
    for key in old:
        new, value = RENAMED_KEYS[key], data[key]
        if new in data and data[new] != value:
            raise ValueError(f"{key} and {new} are one setting ({key} is its earlier name) and "
                             f"are given different values: {key}: {value!r}, {new}: "
                             f"{data[new]!r}; keep {new} only")
        out[new] = value
    return out


def fold_flat_featurizer_keys(data: dict) -> dict:
    """Configs before `featurizer:` (YAML files, metrics.json) had top-level max_hops /
    max_dist; they mean the same featurizer setting."""
    flat = {k: data[k] for k in ("max_hops", "max_dist") if k in data}
    if not flat:
        return data
    nested = dict(data.get("featurizer") or {})
    for k, v in flat.items():
        if k in nested and nested[k] != v:
            raise ValueError(f"{k} is given twice: {k}: {v} and featurizer: {{{k}: {nested[k]}}}")
        nested[k] = v
    return dict({k: v for k, v in data.items() if k not in flat}, featurizer=nested)


_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text) -> float:
    """Seconds of a budget written as "25m", "1h30m", "90s", "1.5h", "2d" or "HH:MM:SS"."""
    raw = str(text).strip().lower()
    if re.fullmatch(r"\d+:\d{1,2}:\d{1,2}", raw):
        h, m, s = (int(v) for v in raw.split(":"))
        seconds = h * 3600 + m * 60 + s
    elif re.fullmatch(r"(\d+(\.\d+)?[dhms])+", raw):
        seconds = sum(float(v) * _UNITS[u] for v, u in re.findall(r"(\d+(?:\.\d+)?)([dhms])", raw))
    else:
        raise ValueError(f"--max-time (max_time) {text!r} is not a duration; write e.g. 25m, 1h30m, 90s or 01:30:00")
    if seconds <= 0:
        raise ValueError(f"--max-time (max_time) {text!r} must be positive")
    return seconds
