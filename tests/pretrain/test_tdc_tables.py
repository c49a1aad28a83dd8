"""The product build's corpus: the TDC ADMET tables, test rows too, join admet_corpus as the
`tdc` corpus -- only in a run that keeps TDC molecules."""
import numpy as np
import pandas as pd
import pytest
import torch

from graphnorm.data.tdc import TDC_ADMET_TASKS
from graphnorm.pretrain import splits
from graphnorm.pretrain.corpus import CorpusError, load_corpus, tdc_table
from graphnorm.pretrain.fit import train
from graphnorm.pretrain.folder import BEST_FILE
from graphnorm.pretrain.setup import PretrainRun, PretrainSpec

SMILES = ["CCO", "CCN", "CCCl", "c1ccccc1", "CC(=O)O", "CCCC", "OCCO", "CC#N"]


def _group(tmp_path, torn_herg: bool = True):
    """A TDC ADMET group of 22 tiny tables; "CCO" is also in the tiny corpus."""
    group = tmp_path / "admet_group"
    for k, task in enumerate(TDC_ADMET_TASKS):
        binary = TDC_ADMET_TASKS[task] in ("rocauc", "auprc")
        for part, rows in (("train_val", SMILES[:6]), ("test", SMILES[6:])):
            y = [(i + k) % 2 if binary else float(i + k) for i in range(len(rows))]
            frame = pd.DataFrame({"Drug_ID": range(len(rows)), "Drug": rows, "Y": y})
            if task == "herg" and part == "test" and torn_herg:  # one molecule, both labels
                frame = pd.concat([frame, frame.iloc[[0]].assign(Y=1 - frame.Y.iloc[0])])
            (group / task).mkdir(parents=True, exist_ok=True)
            frame.to_csv(group / task / f"{part}.csv", index=False)
    return group


def test_the_tdc_tables_join_as_one_corpus_test_rows_included(tiny_corpus, tmp_path):
    group = _group(tmp_path)
    with pytest.warns(UserWarning, match="'herg': 1"):
        corpus = load_corpus(tiny_corpus, tdc_dir=group)
    tdc = [n for n in corpus.task_names if n.startswith("tdc/")]
    assert len(tdc) == 22 and corpus.sources["tdc"]
    dense = corpus.dense(range(len(corpus)))
    row = {s: i for i, s in enumerate(corpus.smiles)}
    caco2 = corpus.task_names.index("tdc/caco2_wang")
    assert dense[row["CC#N"], caco2] == 1.0  # a test row is read
    herg = corpus.task_names.index("tdc/herg")
    assert np.isnan(dense[row["OCCO"], herg])  # both labels: left out of that table
    assert not np.isnan(dense[row["CCO"], corpus.task_names.index("alpha/logS")])  # one row
    assert corpus.task_kinds[herg] == "binary" and corpus.task_kinds[caco2] == "regression"
    assert len(load_corpus(tiny_corpus).task_names) == len(corpus.task_names) - 22


def test_a_missing_table_is_named(tmp_path):
    group = _group(tmp_path)
    (group / "ames" / "test.csv").unlink()
    with pytest.raises(CorpusError, match="ames/test.csv is missing"):
        tdc_table(group)


def test_only_a_run_that_keeps_tdc_reads_the_tables():
    with pytest.raises(ValueError, match="--keep-tdc"):
        PretrainSpec(tdc_tables=True)
    assert PretrainSpec(tdc_tables=True, exclude_tdc=False).tdc_tables


def test_a_product_build_warm_starts_from_a_corpus_backbone(tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(splits, "HELD_TASK_MIN", 100)
    torch.set_num_threads(1)
    group = _group(tmp_path, torn_herg=False)
    spec = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=4, warmup_steps=3,
                        exclude_tdc=False, val_percent=30)
    first = tmp_path / "first"
    first.mkdir()
    train(PretrainRun(spec, tiny_corpus, cache=tmp_path / "c", progress=False), first, 600,
          max_steps=2, eval_every=2, progress=False)
    product = PretrainSpec(**{**spec.to_dict(), "corpora": None, "tdc_tables": True,
                              "init_from": str(first / BEST_FILE)})
    run = PretrainRun(product, tiny_corpus, cache=tmp_path / "c", progress=False, tdc_dir=group)
    assert run.warm_start["head_rows"] == 4  # the corpus's endpoints; TDC's start fresh
    before = torch.load(first / BEST_FILE, weights_only=True)["state_dict"]["model.head.weight"]
    names = run.corpus.task_names
    assert torch.equal(run.model.head.weight[names.index("alpha/logS")], before[0])
    assert len(names) == 4 + 22
