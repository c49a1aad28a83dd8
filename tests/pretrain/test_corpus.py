import gzip

import numpy as np
import pytest

from graphnorm.pretrain.corpus import CorpusError, load_corpus, loose_key

from tiny_corpus import SMILES_A, SMILES_B


def test_corpora_merge_by_smiles_into_one_sparse_matrix(tiny_corpus):
    c = load_corpus(tiny_corpus)
    assert c.task_names == ["alpha/logS", "alpha/toxic", "beta/t1", "beta/t2"]
    assert c.task_kinds == ["regression", "binary", "binary", "binary"]
    assert len(c) == len(set(SMILES_A) | set(SMILES_B)) == 21  # "CCO" once
    dense = c.dense(range(len(c)))
    row = c.smiles.index("CCO")
    # CCO: logS -1.0 and no toxic label in alpha (i = 0), t1 = 0 and t2 = 0 in beta
    assert dense[row, 0] == pytest.approx(-1.0)
    assert np.isnan(dense[row, 1])
    assert dense[row, 2] == 0 and dense[row, 3] == 0
    assert int((~np.isnan(dense)).sum()) == len(c.value) == c.labels_per_task().sum()
    # a zero label is a label, not a blank
    assert (c.value == 0).sum() > 0


def test_subset_keeps_each_molecules_labels(tiny_corpus):
    c = load_corpus(tiny_corpus)
    rows = [5, 0, 17]
    sub = c.subset(rows)
    assert sub.smiles == [c.smiles[r] for r in rows]
    np.testing.assert_array_equal(sub.dense(range(3)), c.dense(rows))


def test_named_corpora_only_and_unknown_names(tiny_corpus):
    assert load_corpus(tiny_corpus, ["beta"]).task_names == ["beta/t1", "beta/t2"]
    with pytest.raises(CorpusError, match="unknown corpora.*gamma"):
        load_corpus(tiny_corpus, ["gamma"])


def test_checksum_follows_the_files(tiny_corpus):
    before = load_corpus(tiny_corpus).checksum()
    with gzip.open(tiny_corpus / "beta" / "data.csv.gz", "at") as f:
        f.write("CCCCCCCC,1,0\n")
    assert load_corpus(tiny_corpus).checksum() != before


@pytest.mark.parametrize("content, message", [
    ("smiles,t1,t2\nCCO,yes,1\n", "not a number"),
    ("smiles,t1,t2\nCCO,2,1\n", "other than 0/1"),
    ("smi,t1,t2\nCCO,1,1\n", "no 'smiles' column"),
    ("smiles,t1,t9\nCCO,1,1\n", "not in beta/tasks.csv"),
])
def test_malformed_tables_are_named(tiny_corpus, content, message):
    with gzip.open(tiny_corpus / "beta" / "data.csv.gz", "wt") as f:
        f.write(content)
    with pytest.raises(CorpusError, match=message) as err:
        load_corpus(tiny_corpus)
    assert "beta" in str(err.value)


def test_missing_folder_and_tasks_file(tmp_path, tiny_corpus, monkeypatch):
    monkeypatch.delenv("GRAPHNORM_RAW_DIR", raising=False)
    with pytest.raises(CorpusError, match="GRAPHNORM_RAW_DIR"):
        load_corpus()
    with pytest.raises(CorpusError, match="no corpora.csv"):
        load_corpus(tmp_path / "nowhere")
    (tiny_corpus / "alpha" / "tasks.csv").unlink()
    with pytest.raises(CorpusError, match="tasks.csv"):
        load_corpus(tiny_corpus)


def test_loose_key_ignores_salts_and_stereo():
    assert loose_key("C[C@H](N)C(=O)O.Cl") == loose_key("CC(N)C(=O)O")
    assert loose_key("CCO") != loose_key("CCN")
    assert loose_key("not a smiles") is None
