"""Every regression endpoint of the corpus has units (graphnorm/pretrain/corpus_units.py)."""
import pytest

from graphnorm.pretrain.corpus_units import UNITS, units_of
from graphnorm.panel.build import task_descriptions


def test_stated_units_are_kept_when_the_module_has_none():
    assert units_of("netknowledge_admet/solubility_AZ-sol", "logS") == "logS"
    assert units_of("some_corpus/unknown", "") == ""


def test_the_module_wins_over_a_blank_or_garbled_statement():
    assert units_of("pharmabench/logd_reg", "") == "logD7.4"
    ld50 = units_of("netknowledge_admet/toxicity_NCATS_LD50_rat_oral", "rat_oral_LD50_(?log(mol/kg))")
    assert ld50 == "rat oral LD50, -log10(mol/kg)"


def test_families_take_their_pattern_with_the_task_named():
    assert units_of("moleculeace_chembl30/CHEMBL204_Ki") == "pKi (-log10 Ki in M), target CHEMBL204"
    assert units_of("moleculeace_chembl30/CHEMBL3979_EC50").startswith("pEC50")
    assert units_of("moleculeace_chembl30/CHEMBL204_IC50") == ""  # no family of that name


def test_every_regression_task_of_the_real_corpus_has_units(raw_dir):
    import pandas as pd

    root = raw_dir / "admet_corpus"
    if not (root / "corpora.csv").is_file():
        pytest.fail(f"{raw_dir} has no admet_corpus/")
    described = task_descriptions(raw_dir)
    regression = {f"{p.parent.name}/{t}" for p in root.glob("*/tasks.csv")
                  for t, kind in pd.read_csv(p)[["task", "kind"]].itertuples(index=False)
                  if kind == "regression"}
    assert regression, "no regression task found"
    assert sorted(k for k in regression if not described[k]) == []
    assert set(UNITS) <= set(described), "units written for a task the corpus does not have"
