"""Boosters of measured ADMET labels, shipped: their predictions are 9 more features for the
boosted trees (the ``maplight+admet`` feature set, `graphnorm.baselines.tree_features`).

Transfer by stacking (Wolpert 1992, https://doi.org/10.1016/S0893-6080(05)80023-1): one
LightGBM booster per measured property of a large public table -- lipophilicity, aqueous
solubility, plasma protein binding, acute toxicity (LD50), CYP2C9/2D6/3A4 inhibition, Ames
mutagenicity (the TDC ADMET group's 8 tables of 2,500+ molecules, train_val rows only) and
HIV replication inhibition (MoleculeNet HIV) -- fitted on the MapLight features; a small
table's model then reads what those tables measured about its molecules. The file, its data
and exclusions (no molecule of the 14 smaller TDC tasks, none of any TDC test set) are
described in ``graphnorm/pretrained/README.md``; ``experiments/make_admet_boosters.py`` (``table``,
then ``boosters``) rebuilds it.

One xz-compressed JSON file (`graphnorm.data.files.json_xz_bytes`): each booster in
LightGBM's text model format (no pickle), its column, kind (regression or binary: a
probability), the MapLight signature it reads, and a 12-hex key of each training molecule (`molecule_key`), so a run can say how many of its molecules the
boosters saw (`admet_overlap`): on those, the 9 features are in-sample and look better than
they are on new molecules.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from graphnorm.data.files import json_from_xz, json_xz_bytes

from .booster_store import decode, encode

# shipped beside the pre-trained backbones (package data of graphnorm.pretrained)
ADMET_FILE = Path(__file__).resolve().parents[1] / "pretrained" / "admet_boosters.json.xz"
ADMET_FORMAT = 1
VOLATILE = ("fit_cpu_s",)  # column keys that differ between equal fits


class AdmetBoostersError(RuntimeError):
    pass


def molecule_key(smiles: str) -> str | None:
    """12 hex of sha1 of RDKit's canonical SMILES (None where RDKit cannot read it)."""
    from rdkit import rdBase

    from graphnorm.data.tdc_aux import canonical  # the boosters' table compares these too

    with rdBase.BlockLogs():
        canon = canonical(smiles)
    return None if canon is None else hashlib.sha1(canon.encode()).hexdigest()[:12]


def save_admet_boosters(path: Path, columns: list[dict], features: dict, data: dict,
                        training_smiles: list[str]) -> Path:
    """``columns``: [{"name", "kind": "regression"|"binary", "rows", "booster": Booster}]."""
    import lightgbm

    stored = [dict(c, booster=encode(c["booster"])) for c in columns]
    keys = sorted({k for k in map(molecule_key, training_smiles) if k})
    meta = {"format": ADMET_FORMAT, "lightgbm": lightgbm.__version__, "features": features,
            "data": data, "columns": stored, "molecules": keys}
    path = Path(path)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(json_xz_bytes(meta))
    tmp.replace(path)
    return path


def _load(path: str) -> tuple[list, list[dict], dict]:
    if not Path(path).is_file():
        if Path(path) == ADMET_FILE:
            raise AdmetBoostersError(f"the shipped ADMET boosters are not installed ({path} is "
                                     "missing); reinstall graphnorm from a full source tree")
        raise AdmetBoostersError(f"ADMET boosters file not found: {path}")
    stat = Path(path).stat()  # a file replaced in place is read again, not served stale
    return _read(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _read(path: str, mtime_ns: int, size: int) -> tuple[list, list[dict], dict]:
    try:
        meta = json_from_xz(Path(path).read_bytes())
        boosters = [decode(c["booster"], f"{path}, column {c.get('name')}")
                    for c in meta["columns"]]
    except Exception as err:  # damaged xz, JSON or model string
        fix = ("reinstall graphnorm" if Path(path) == ADMET_FILE else
               "an xz-compressed JSON file of graphnorm's boosters format is expected "
               "(graphnorm.baselines.admet_loto writes one)")
        raise AdmetBoostersError(f"cannot read the ADMET boosters {path} "
                                 f"({type(err).__name__}); {fix}") from err
    if meta.get("format") != ADMET_FORMAT:
        raise AdmetBoostersError(f"{path} has format {meta.get('format')!r}; this graphnorm "
                                 f"reads {ADMET_FORMAT}")
    columns = [{k: v for k, v in c.items() if k != "booster"} for c in meta["columns"]]
    return boosters, columns, meta


def admet_columns(path: Path = ADMET_FILE) -> list[str]:
    """The feature names: ``admet_<property>``, in the file's order."""
    return [f"admet_{c['name']}" for c in _load(str(path))[1]]


def admet_signature(path: Path = ADMET_FILE) -> dict:
    """What the 9 features are: 16 hex of sha256 of the boosters and their columns (a gbm
    fitted on one set of boosters' predictions refuses another's)."""
    return {"admet": _boosters_hash(str(path)), "admet_columns": admet_columns(path)}


def _boosters_hash(path: str) -> str:
    _load(path)  # a missing or damaged file, named
    stat = Path(path).stat()
    return _hash(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _hash(path: str, mtime_ns: int, size: int) -> str:  # ~25 MB of model text: hashed once
    # what the boosters compute, not how long their fit took: a rebuild that gives the same
    # boosters keeps the hash (and the gbm models fitted on their predictions)
    columns = [{k: v for k, v in c.items() if k not in VOLATILE}
               for c in _read(path, mtime_ns, size)[2]["columns"]]
    return hashlib.sha256(json.dumps(columns, sort_keys=True).encode()).hexdigest()[:16]


def admet_overlap(smiles: list[str], path: Path = ADMET_FILE) -> int:
    """How many of ``smiles`` the boosters were fitted on (same canonical SMILES)."""
    seen = set(_load(str(path))[2].get("molecules", ()))
    return sum(molecule_key(s) in seen for s in smiles)


def admet_features(maplight: np.ndarray, path: Path = ADMET_FILE) -> np.ndarray:
    """float32 [N, 9]: each booster's prediction (binary: probability of 1) from MapLight
    vectors [N, width] (`graphnorm.chem.tabular`, "maplight")."""
    boosters, columns, meta = _load(str(path))
    if maplight.shape[1] != meta["features"]["width"]:
        raise AdmetBoostersError(f"the ADMET boosters read {meta['features']['width']} MapLight "
                                 f"features (RDKit {meta['features'].get('rdkit')}); this RDKit "
                                 f"makes {maplight.shape[1]}: install that RDKit")
    out = np.empty((len(maplight), len(boosters)), dtype=np.float32)
    for j, booster in enumerate(boosters):
        out[:, j] = booster.predict(maplight) if len(maplight) else []
    return out


def unseen_tasks(path: Path = ADMET_FILE) -> list[str]:
    """The TDC ADMET tasks none of whose molecules the boosters saw: where their predictions
    are out-of-sample on every row, so a benchmark on them is fair."""
    return list(_load(str(path))[2]["data"]["evaluated_tasks"])
