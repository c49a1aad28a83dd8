"""The map of endpoints to quantities (graphnorm/quantities): units never mixed, a corpus read
as one task per quantity with each label's source kept."""
import dataclasses

import numpy as np
import pytest

from graphnorm.pretrain.corpus import load_corpus
from graphnorm.quantities import (PREFIX, QUANTITIES, SOURCES, UNMAPPED, QuantityError,
                                  check_registry, harmonize, source_of, sources_of)
from graphnorm.quantities import units as u
from tiny_corpus import write_corpus

NK, PB = "netknowledge_admet", "pharmabench"


def test_the_shipped_map_is_consistent():
    check_registry()
    assert {s.quantity for s in SOURCES} == set(QUANTITIES)  # no quantity without a source
    assert not set(UNMAPPED) & {s.endpoint for s in SOURCES}
    assert source_of("pharmabench/water_sol_reg").convert == "log_nM_to_log_M"
    assert [s.endpoint for s in sources_of("logd74")][0] == f"{NK}/lipophilicity_AZ-lipo"
    with pytest.raises(QuantityError, match="unknown quantity 'logp'"):
        sources_of("logp")


def test_a_source_whose_unit_does_not_convert_to_its_quantitys_is_refused_by_name():
    nm = dataclasses.replace(source_of("pharmabench/water_sol_reg"), convert="same")
    with pytest.raises(QuantityError, match="pharmabench/water_sol_reg states 'log10 nmol/L'.*"
                                            "solubility is in 'log10 mol/L'"):
        check_registry(sources=(nm,))
    typo = dataclasses.replace(nm, convert="log_uM_to_log_M")
    with pytest.raises(QuantityError, match="water_sol_reg: unknown conversion"):
        check_registry(sources=(typo,))
    with pytest.raises(QuantityError, match="mapped twice"):
        check_registry(sources=(source_of(f"{NK}/solubility_EPA-sol"),) * 2)


def test_species_groups_relate_one_measurement_in_one_unit():
    from graphnorm.quantities import related_quantities

    assert related_quantities("clint_microsomal_mouse") == ("clint_microsomal_human",
                                                            "clint_microsomal_rat")
    assert related_quantities("fu_plasma_dog")[0] == "fu_plasma_human"
    assert related_quantities("logd74") == ()
    with pytest.raises(QuantityError, match="differ in unit or kind"):
        check_registry(groups=(("fu_plasma_human", "clint_microsomal_human"),))
    with pytest.raises(QuantityError, match="unknown quantity 'fu_plasma_cat'"):
        check_registry(groups=(("fu_plasma_human", "fu_plasma_cat"),))


def test_conversions_put_each_source_on_its_quantitys_scale():
    conv = u.CONVERSIONS
    assert conv["log_nM_to_log_M"].apply(np.array([6.0]))[0] == pytest.approx(-3.0)  # 1 mM
    assert conv["pct_bound_to_log_fu"].apply(np.array([99.0]))[0] == pytest.approx(-2.0)
    assert conv["log_pct_unbound_to_log_fu"].apply(np.array([1.0]))[0] == pytest.approx(-1.0)
    # fully bound or unbound below the floor: the floor, not minus infinity
    assert conv["fu_to_log"].apply(np.array([0.0]))[0] == pytest.approx(np.log10(u.FRACTION_FLOOR))
    assert conv["clint_mic_to_log"].apply(np.array([100.0]))[0] == pytest.approx(2.0)


def _corpus(tmp_path, clint=(10.0, 100.0)):
    root = tmp_path / "admet_corpus"
    write_corpus(root, NK, ["CCO", "CCN", "CCC"],
                 {"solubility_EPA-sol": [-1.0, -2.0, None], "toxic": [1, 0, 1]},
                 {"solubility_EPA-sol": "regression", "toxic": "binary"})
    write_corpus(root, PB, ["CCO", "CCCl"],
                 {"water_sol_reg": [7.0, 5.0], "logd_reg": [1.5, None]},
                 {"water_sol_reg": "regression", "logd_reg": "regression"})
    write_corpus(root, "tdc", ["CCCC", "CCCCC"], {"clearance_microsome_az": list(clint)},
                 {"clearance_microsome_az": "regression"})
    (root / "corpora.csv").write_text(f"corpus,rows\n{NK},3\n{PB},2\ntdc,2\n")
    return load_corpus(tmp_path)


def test_harmonize_one_task_per_quantity_in_its_unit(tmp_path):
    corpus = _corpus(tmp_path)
    h = harmonize(corpus)
    names = h.corpus.task_names
    assert names == [PREFIX + "logd74", PREFIX + "solubility", PREFIX + "clint_microsomal_human",
                     f"{NK}/toxic"]  # quantities in map order, then the unmapped as they were
    sol = names.index(PREFIX + "solubility")
    dense = h.corpus.dense(range(len(h.corpus)))
    row = {s: i for i, s in enumerate(h.corpus.smiles)}
    # CCO: EPA -1.0 and PharmaBench 7.0 log nM = -2.0 log M, merged to their mean
    assert dense[row["CCO"], sol] == pytest.approx(-1.5)
    assert dense[row["CCCl"], sol] == pytest.approx(-4.0)  # 5 log nM
    assert dense[row["CCN"], sol] == pytest.approx(-2.0)
    assert h.merged["solubility"] == 1
    clint = names.index(PREFIX + "clint_microsomal_human")
    assert dense[row["CCCC"], clint] == pytest.approx(1.0)  # 10 mL/min/g -> log10
    # each label keeps its source; a merged one is credited to the map's first
    sources = h.sources_of_task(sol)
    assert sources == [f"{NK}/solubility_EPA-sol", f"{PB}/water_sol_reg"]
    at = (h.corpus.task == sol)
    credited = {h.corpus.smiles[r]: h.source_names[s] for r, s in zip(
        np.repeat(np.arange(len(h.corpus)), np.diff(h.corpus.indptr))[at], h.label_source[at])}
    assert credited == {"CCO": f"{NK}/solubility_EPA-sol", "CCN": f"{NK}/solubility_EPA-sol",
                        "CCCl": f"{PB}/water_sol_reg"}
    assert np.nansum(dense[:, names.index(f"{NK}/toxic")]) == 2  # the binary task untouched


def test_values_a_conversion_cannot_take_or_a_binary_endpoint_are_refused(tmp_path):
    with pytest.raises(QuantityError, match="tdc/clearance_microsome_az: 1 values .*clint_mic_to_log"):
        harmonize(_corpus(tmp_path / "a", clint=(0.0, 100.0)))
    corpus = _corpus(tmp_path / "b")
    corpus.task_kinds[corpus.task_names.index(f"{PB}/logd_reg")] = "binary"
    with pytest.raises(QuantityError, match="pharmabench/logd_reg is a binary task"):
        harmonize(corpus)


@pytest.mark.slow
def test_the_real_corpus_sources_agree_on_scale(raw_dir):
    """Each source's median within 2 log units of its quantity's others: a unit slip (nM read
    as M, % as a fraction) moves a median by 2-9."""
    h = harmonize(load_corpus(raw_dir))
    for k, name in enumerate(h.corpus.task_names):
        if not name.startswith(PREFIX):
            continue
        medians = {}
        for s in h.sources_of_task(k):
            at = (h.corpus.task == k) & (h.label_source == h.source_names.index(s))
            if at.sum() >= 50:
                medians[s] = float(np.median(h.corpus.value[at]))
        if len(medians) > 1:
            assert max(medians.values()) - min(medians.values()) < 2.0, (name, medians)


@pytest.mark.slow
def test_the_sources_of_a_binary_quantity_make_the_same_calls(raw_dir):
    """On the molecules two sources of a binary quantity share, their calls go together
    (phi, the correlation of the 0/1 labels, > 0.2): a source read with its labels flipped
    would go against the others. Thresholds differ (hERG block at 1 µM against 30 µM: phi
    0.27 on 1,119 molecules; copies of one screen: ~1.0), which the offsets absorb."""
    from graphnorm.data.tdc import admet_group_dir

    corpus = load_corpus(raw_dir, tdc_dir=admet_group_dir(raw_dir / "tdc_admet_group"))
    seen = 0
    for q in (q for q in QUANTITIES.values() if q.kind == "binary"):
        cols = [corpus.task_names.index(s.endpoint) for s in sources_of(q.name)
                if s.endpoint in corpus.task_names]
        assert len(cols) >= 2, q.name
        rows = np.unique(np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))[
            np.isin(corpus.task, cols)])
        labels = corpus.dense(rows)
        for i, a in enumerate(cols):
            for b in cols[i + 1:]:
                both = ~np.isnan(labels[:, a]) & ~np.isnan(labels[:, b])
                x, y = labels[both, a], labels[both, b]
                if both.sum() >= 30 and x.std() > 0 and y.std() > 0:
                    phi = float(np.corrcoef(x, y)[0, 1])
                    assert phi > 0.2, (q.name, corpus.task_names[a], corpus.task_names[b], phi)
                    seen += 1
    assert seen >= 15
