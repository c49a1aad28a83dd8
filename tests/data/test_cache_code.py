"""Caches of computed arrays are keyed by the chemistry code that computed them
(`graphnorm.chem.code`): values from other code are recomputed, never reused."""
from __future__ import annotations

import numpy as np
import pytest

import graphnorm.chem.code as chem_code
from graphnorm.data.cache import CacheWarning
from graphnorm.data.feature_cache import table_features
from graphnorm.data.table import read_table
from graphnorm.data.table_dataset import featurized_table
from graphnorm.provenance import source_sha

SMILES = ["CCO", "c1ccccc1", "CC(=O)O"]
SIG = {"set": "toy", "width": 2}


def _counting(calls: list):
    def matrix(todo):
        calls.append(list(todo))
        return np.array([[len(s), float(calls.__len__())] for s in todo], dtype=np.float32)
    return SIG, matrix


def _other_code(monkeypatch):
    monkeypatch.setattr(chem_code, "chem_code_sha", lambda: "another-chem-code")


def test_source_sha_follows_the_bytes(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    before = source_sha(a, b)
    assert source_sha(b, a) == before  # order of the arguments does not matter
    a.write_text("x = 2\n")
    assert source_sha(a, b) != before


def test_chem_code_sha_covers_the_chemistry_package():
    from pathlib import Path

    files = sorted(Path(chem_code.__file__).parent.glob("*.py"))
    assert Path(chem_code.__file__).parent.name == "chem" and len(files) > 3
    assert chem_code.chem_code_sha() == source_sha(*files)


def test_table_features_reuse_only_what_the_same_code_computed(tmp_path, monkeypatch):
    calls: list = []
    first = table_features("toy", SMILES, "t.csv", "0" * 64, tmp_path, computed_by=_counting(calls))
    again = table_features("toy", SMILES, "t.csv", "0" * 64, tmp_path, computed_by=_counting(calls))
    assert len(calls) == 1 and np.array_equal(first, again)  # cached
    _other_code(monkeypatch)
    other = table_features("toy", SMILES, "t.csv", "0" * 64, tmp_path, computed_by=_counting(calls))
    assert len(calls) == 2 and sorted(calls[1]) == sorted(SMILES)  # all recomputed
    assert not np.array_equal(other, first)  # the second computation's values, not the cached


def test_a_featurized_table_from_other_chemistry_code_is_rebuilt(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_text("smiles,y\n" + "".join(f"{s},{i}\n" for i, s in enumerate(SMILES)))
    table = read_table(path)
    featurized_table(table, tmp_path / "cache", progress=False, workers=1)
    _other_code(monkeypatch)
    with pytest.warns(CacheWarning, match="stale.*chem_code"):
        rebuilt = featurized_table(table, tmp_path / "cache", progress=False, workers=1)
    assert rebuilt["graphs"] is not None and len(rebuilt["rows"]) == len(SMILES)
