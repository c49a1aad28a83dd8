import numpy as np
import pandas as pd
import torch

from graphnorm.pretrain import splits
from graphnorm.pretrain.corpus import load_corpus, loose_key
from graphnorm.pretrain.data import select_packed


def test_scaffold_holdout_is_stable_and_scaffold_disjoint():
    scaffolds = [f"scaf{i % 37}" for i in range(2000)]
    smiles = [f"C{i}" for i in range(2000)]
    train, val = splits.scaffold_holdout(scaffolds, smiles, percent=20)
    assert len(train) + len(val) == 2000 and 0 < len(val) < 2000
    assert not {scaffolds[i] for i in train} & {scaffolds[i] for i in val}
    # adding molecules does not move the old ones (hash buckets, not a sorted split)
    train2, val2 = splits.scaffold_holdout(scaffolds + ["new"] * 50, smiles + ["N"] * 50, 20)
    assert set(val) == set(val2[val2 < 2000])


def test_one_held_out_task_per_multi_task_corpus(tiny_corpus, monkeypatch):
    c = load_corpus(tiny_corpus)
    held = splits.held_out_tasks(c, min_labels=5)
    assert sorted(c.corpus_of(t) for t in held) == ["alpha", "beta"]
    assert splits.held_out_tasks(c, min_labels=10_000) == []


def test_benchmark_molecules_are_found_by_loose_key(tmp_path, tiny_corpus):
    group = tmp_path / "admet_group" / "caco2_wang"
    group.mkdir(parents=True)
    pd.DataFrame({"Drug_ID": [1], "Drug": ["[Na+].OCC(O)CO"], "Y": [0.1]}).to_csv(
        group / "train_val.csv", index=False)
    pd.DataFrame({"Drug_ID": [2], "Drug": ["CCO"], "Y": [0.2]}).to_csv(group / "test.csv",
                                                                      index=False)
    keys = splits.benchmark_keys(tmp_path, cache=tmp_path / "cache", tasks=["caco2_wang"])
    assert keys == {loose_key("OCC(O)CO"), loose_key("CCO")}
    # cached by the files' content
    assert list((tmp_path / "cache" / "pretrain").glob("tdc_keys-*.json"))
    c = load_corpus(tiny_corpus)
    corpus_keys = splits.corpus_keys(c)
    assert splits.leaked(corpus_keys, keys) == 2  # the salt form of glycerol counts
    clean, gone = splits.without_molecules(c, corpus_keys, keys)
    assert gone == 2 and "CCO" not in clean.smiles and "OCC(O)CO" not in clean.smiles
    assert splits.leaked(splits.corpus_keys(clean), keys) == 0


def test_select_packed_equals_packing_the_subset():
    from graphnorm.chem import FeaturizerConfig
    from graphnorm.chem.featurize import featurize_many
    from graphnorm.data.cache import pack_split

    smiles = ["CCO", "c1ccccc1", "CC(=O)N", "C", "CCCCCl"]
    graphs = featurize_many(smiles, FeaturizerConfig()).graphs
    pick = [3, 0, 4]
    got = select_packed(pack_split(graphs, smiles), torch.tensor(pick))
    want = pack_split([graphs[i] for i in pick], [smiles[i] for i in pick])
    assert got["smiles"] == want["smiles"]
    for key in ("x", "edge_index", "edge_attr", "spd", "path", "num_nodes", "num_edges"):
        assert torch.equal(got[key], want[key]), key
    assert np.array_equal(got["num_nodes"].numpy(), [1, 3, 5])
