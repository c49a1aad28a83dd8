"""The shared corpus holds no TDC ADMET test molecule, and pre-training reads no TDC molecule
at all: the leak that discredited a leaderboard entry, re-checked on the real files.

Slow (the loose key of 324k molecules, ~3 CPU-minutes over two processes): `make test-all`.
"""
from multiprocessing import get_context

import pytest

from graphnorm.pretrain import splits
from graphnorm.pretrain.corpus import load_corpus, loose_key

pytestmark = pytest.mark.slow


def _keys(smiles):
    return [loose_key(s) for s in smiles]


@pytest.fixture(scope="module")
def corpus_and_keys(raw_dir):
    if not (raw_dir / "admet_corpus" / "corpora.csv").is_file():
        pytest.fail(f"{raw_dir} has no admet_corpus/")
    corpus = load_corpus(raw_dir)
    chunks = [corpus.smiles[i:i + 5000] for i in range(0, len(corpus), 5000)]
    with get_context("fork").Pool(2) as pool:
        keys = [k for part in pool.map(_keys, chunks) for k in part]
    return corpus, keys


def test_no_tdc_test_molecule_in_the_corpus(corpus_and_keys, raw_dir, tmp_path):
    corpus, keys = corpus_and_keys
    import pandas as pd

    from graphnorm.data.tdc import TDC_ADMET_TASKS, admet_group_dir

    group = admet_group_dir(raw_dir / "tdc_admet_group", tmp_path)
    test_keys = {loose_key(s) for t in TDC_ADMET_TASKS
                 for s in pd.read_csv(group / t / "test.csv")["Drug"].astype(str)}
    assert len(test_keys) > 10_000  # the 22 test sets were read
    assert splits.leaked(keys, test_keys) == 0


def test_pretraining_leaves_out_every_tdc_molecule(corpus_and_keys, raw_dir, tmp_path):
    corpus, keys = corpus_and_keys
    excluded = splits.benchmark_keys(raw_dir / "tdc_admet_group", tmp_path)
    clean, gone = splits.without_molecules(corpus, keys, excluded)
    assert gone > 0  # train_val molecules of the same endpoints are in the corpus (README)
    kept = set(clean.smiles)
    assert splits.leaked((k for k, s in zip(keys, corpus.smiles) if s in kept), excluded) == 0
