"""Tree models' feature vectors of a table, computed once per file and feature set.

``<cache root>/features/<file>-<sha16>-<set>.npz`` beside the graph cache (`cache.py`):
the table's SMILES and their vectors, keyed by the feature set's signature (set, width,
RDKit version) and the chemistry code that computed them (`graphnorm.chem.code`); a file of
another signature or code is recomputed (said), one that does not load too, with a warning.
Benchmark seeds, ensemble members and variants of one table share it.
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np

from .cache import CacheWarning, cache_root


def table_features(feature_set: str, smiles: list[str], name: str, sha256: str, root=None,
                   progress: bool = False, computed_by=None) -> np.ndarray:
    """float32 [len(smiles), width] for SMILES of the table ``name`` (sha256 of its file).
    ``computed_by``: (signature, function of a SMILES list -> matrix) of a set that
    `graphnorm.chem.tabular` does not name (an experiment's); None: that module's set."""
    from graphnorm.chem.code import chem_code_sha

    from .build import stage

    if computed_by is None:
        from graphnorm.chem.tabular import feature_matrix, signature

        sig, matrix = signature(feature_set), lambda todo: feature_matrix(feature_set, todo)
    else:
        sig, matrix = computed_by
    path = cache_root(root) / "features" / f"{Path(name).stem[:40]}-{sha256[:16]}-{feature_set}.npz"
    known: dict = {}
    code = chem_code_sha()
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as saved:
                same_code = "code" in saved and str(saved["code"]) == code
                if json.loads(str(saved["signature"])) == sig and same_code:
                    known = dict(zip(saved["smiles"].tolist(), saved["x"]))
                elif not same_code:
                    stage(progress, f"{path}: computed by other chemistry code; recomputing")
        except Exception as err:  # a damaged file is rebuilt, never used
            warnings.warn(f"{path}: cached features unreadable ({type(err).__name__}); "
                          "recomputing", CacheWarning, stacklevel=2)
    todo = sorted(set(smiles) - set(known))
    if todo:
        stage(progress, f"{name}: {feature_set} features of {len(todo):,} molecules "
                        f"(once; cached in {path})")
        known.update(zip(todo, matrix(todo)))
        keys = sorted(known)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")  # parallel runs
        np.savez(tmp, smiles=np.array(keys), x=np.stack([known[k] for k in keys]),
                 signature=np.array(json.dumps(sig)), code=np.array(code))
        tmp.replace(path)
    return np.stack([known[s] for s in smiles]) if smiles else np.zeros((0, sig["width"]), np.float32)
