"""Raw-directory parsing, row counts, split-size checks, labels and the scaffold split
(no featurization: fast)."""
from __future__ import annotations

import gzip
import math
import os

import pytest

from graphnorm.data import (DATASET_INFO, RawDataError, SplitSizeError, check_split_sizes,
                            load_dataset)
from graphnorm.data.datasets import DatasetUnavailableError
from graphnorm.data.labels import penalized_logp_terms, zinc_label
from graphnorm.data.raw import (expected_files, find_raw_files, read_molhiv, read_zinc_index,
                                read_zinc_smiles, source_checksum, unknown_copies)
from graphnorm.data.scaffold import scaffold_split

ZINC_SUBSET_TRAIN0 = "COc1ccc2ccc(O)c(CN3CCN(S(=O)(=O)c4ccn(C)c4)CC3)c2c1"


def test_dataset_info():
    assert set(DATASET_INFO) == {"zinc-subset", "zinc-full", "ogbg-molhiv"}
    assert DATASET_INFO["zinc-subset"]["task_type"] == "regression"
    assert DATASET_INFO["zinc-full"]["metric"] == "mae"
    hiv = DATASET_INFO["ogbg-molhiv"]
    assert (hiv["task_type"], hiv["metric"], hiv["vocab"], hiv["num_tasks"]) == \
        ("binary", "rocauc", "ogb", 1)


def test_zinc_rows_and_subset_index(raw_dir):
    files = find_raw_files("zinc-subset", raw_dir)
    rows = read_zinc_smiles(files)
    assert {s: len(v) for s, v in rows.items()} == {"train": 220011, "val": 24445, "test": 5000}
    check_split_sizes("zinc-full", {s: len(v) for s, v in rows.items()})
    index = {s: read_zinc_index(files[f"index_{s}"], len(rows[s])) for s in rows}
    check_split_sizes("zinc-subset", {s: len(v) for s, v in index.items()})
    assert rows["train"][index["train"][0]] == ZINC_SUBSET_TRAIN0
    assert unknown_copies("zinc-subset", files, source_checksum(files)[1]) == []


def test_split_size_check_is_clear():
    check_split_sizes("ogbg-molhiv", {"train": 32901, "val": 4113, "test": 4113})
    with pytest.raises(SplitSizeError, match=r"zinc-full.*train: 220010 \(expected 220011\)"):
        check_split_sizes("zinc-full", {"train": 220010, "val": 24445, "test": 5000})
    with pytest.raises(ValueError, match="unknown dataset"):
        check_split_sizes("zinc", {})


def _mirror(raw_dir, tmp_path, sub):
    """tmp copy of raw_dir/<sub> made of symlinks (nothing is copied)."""
    (tmp_path / sub).mkdir(parents=True)
    for f in (raw_dir / sub).iterdir():
        os.symlink(f, tmp_path / sub / f.name)
    return tmp_path


@pytest.mark.filterwarnings("ignore:.*reference copies")
def test_truncated_zinc_file_is_rejected(raw_dir, tmp_path):
    root = _mirror(raw_dir, tmp_path, "zinc")
    target = root / "zinc" / "jtvae_test.txt.gz"
    target.unlink()
    with gzip.open(raw_dir / "zinc" / "jtvae_test.txt.gz", "rt") as f:
        head = f.read().splitlines()[:4000]
    with gzip.open(target, "wt") as f:
        f.write("\n".join(head) + "\n")
    with pytest.raises(SplitSizeError, match=r"jtvae_test.txt.gz has 4000 SMILES rows, expected"):
        load_dataset("zinc-full", raw_dir=root, root=tmp_path / "cache", progress=False)


@pytest.mark.filterwarnings("ignore:.*reference copies")
def test_wrong_subset_index_is_rejected(raw_dir, tmp_path):
    root = _mirror(raw_dir, tmp_path, "zinc")
    (root / "zinc" / "val.index").unlink()
    (root / "zinc" / "val.index").write_text(",".join(str(i) for i in range(999)) + "\n")
    with pytest.raises(SplitSizeError, match=r"val: 999 \(expected 1000\)"):
        load_dataset("zinc-subset", raw_dir=root, root=tmp_path / "cache", progress=False)


def test_missing_and_empty_files_are_named(raw_dir, tmp_path):
    with pytest.raises(RawDataError, match="molhiv/HIV.csv.gz"):
        find_raw_files("ogbg-molhiv", tmp_path)
    (tmp_path / "molhiv").mkdir()
    (tmp_path / "molhiv" / "HIV.csv.gz").write_bytes(b"")
    with pytest.raises(RawDataError, match=r"HIV.csv.gz is empty"):
        load_dataset("ogbg-molhiv", raw_dir=tmp_path, root=tmp_path / "cache", progress=False)
    root = _mirror(raw_dir, tmp_path / "z", "zinc")
    (root / "zinc" / "train.index").unlink()
    with pytest.raises(RawDataError, match=r"lacks zinc/train.index"):
        find_raw_files("zinc-subset", root)
    assert "zinc/train.index" in expected_files("zinc-subset")
    assert find_raw_files("zinc-full", root)  # the full set needs no index files


def test_env_raw_dir_without_files_names_env_and_files(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHNORM_RAW_DIR", str(tmp_path))
    with pytest.raises(RawDataError) as err:
        load_dataset("zinc-subset", root=tmp_path / "cache", progress=False)
    assert "GRAPHNORM_RAW_DIR" in str(err.value) and "zinc/jtvae_train.txt.gz" in str(err.value)
    assert "--raw-dir" in str(err.value)  # the CLI flag, not only the Python name


def test_no_source_at_all_is_a_clear_error(tmp_path, monkeypatch):
    import graphnorm.data.official as official

    def offline(*a, **k):
        raise OSError("network is unreachable")

    monkeypatch.delenv("GRAPHNORM_RAW_DIR", raising=False)
    monkeypatch.setattr("graphnorm.data.datasets.default_raw_dir", lambda: None)
    monkeypatch.setattr(official, "open_official", offline)
    with pytest.raises(DatasetUnavailableError) as err:
        load_dataset("ogbg-molhiv", root=tmp_path, progress=False)
    msg = str(err.value)
    assert "GRAPHNORM_RAW_DIR" in msg and "molhiv/HIV.csv.gz" in msg and "unreachable" in msg
    assert "--raw-dir" in msg


def test_failed_download_leaves_no_empty_cache_folders(tmp_path, monkeypatch):
    """A loader that made its folders and then failed (offline) leaves nothing behind;
    folders that held something before stay."""
    import graphnorm.data.official as official

    def offline(name, root):
        (root / "zinc" / "raw").mkdir(parents=True)  # as PyG's ZINC does before downloading
        raise OSError("network is unreachable")

    monkeypatch.delenv("GRAPHNORM_RAW_DIR", raising=False)
    monkeypatch.setattr("graphnorm.data.datasets.default_raw_dir", lambda: None)
    monkeypatch.setattr(official, "open_official", offline)
    cache = tmp_path / "data" / "cache"
    with pytest.raises(DatasetUnavailableError):
        load_dataset("zinc-subset", root=cache, progress=False)
    assert list(tmp_path.iterdir()) == []
    (cache / "zinc-subset").mkdir(parents=True)  # an existing cache root is kept
    with pytest.raises(DatasetUnavailableError):
        load_dataset("zinc-subset", root=cache, progress=False)
    assert [p.name for p in cache.iterdir()] == ["zinc-subset"]


def test_molhiv_rows(raw_dir):
    smiles, active = read_molhiv(find_raw_files("ogbg-molhiv", raw_dir)["csv"])
    assert len(smiles) == 41127 and sum(active) == 1443


def test_zinc_label_formula():
    """y = z(logP) + z(SA) + z(cycle) with the GVAE constants (README of the raw data)."""
    from rdkit import Chem

    for smiles in [ZINC_SUBSET_TRAIN0, "CCO", "C1CCCCCCCCC1"]:
        logp, sa, cycle = penalized_logp_terms(Chem.MolFromSmiles(smiles))
        expected = ((logp - 2.4570953396190123) / 1.434324401111988
                    + (sa + 3.0525811293166134) / 0.8335207024513095
                    + (cycle + 0.0485696876403053) / 0.2860212110245455)
        assert zinc_label(smiles) == pytest.approx(expected)
        assert -10 <= sa <= -1  # SA score is in [1, 10]
    assert penalized_logp_terms(Chem.MolFromSmiles("CCO"))[2] == 0  # acyclic
    assert penalized_logp_terms(Chem.MolFromSmiles("c1ccccc1"))[2] == 0  # 6-ring: no penalty
    assert penalized_logp_terms(Chem.MolFromSmiles("C1CCCCCCCCC1"))[2] == -4  # 10-ring
    assert math.isnan(zinc_label("not a smiles"))


def test_scaffold_split_algorithm():
    """Groups sorted by (size, first row) descending; each goes to train if it fits in 80 %,
    else valid if it fits in 90 %, else test (ties: the later first row goes first)."""
    benzenes = ["c1ccccc1C", "c1ccccc1CC", "c1ccccc1O", "c1ccccc1N", "c1ccccc1F",
                "c1ccccc1Cl", "c1ccccc1Br", "c1ccccc1CO"]
    smiles = benzenes + ["C1CCCCC1N", "CCO"]  # rows 8 (cyclohexane) and 9 (acyclic)
    split = scaffold_split(smiles)
    assert split == {"train": list(range(8)), "val": [9], "test": [8]}
    # An unparsable SMILES keeps its row (its own group) instead of being dropped.
    split = scaffold_split(smiles, scaffolds=["c1ccccc1"] * 8 + [None, ""])
    assert split == {"train": list(range(8)), "val": [9], "test": [8]}
