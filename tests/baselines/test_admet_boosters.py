"""The shipped ADMET boosters and the ``maplight+admet`` feature set they make: 9 measured
properties predicted from MapLight features, read by gbm (``--tree-features``), refused where
they would be in-sample (TDC tasks they learned from: test_admet_loto.py) and named when their file is damaged."""
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.baselines.tree_features import feature_matrix, signature, width
from graphnorm.cli import main
from graphnorm.data.files import json_from_xz, json_xz_bytes
from graphnorm.models import tree_kind
from graphnorm.baselines.admet_boosters import (ADMET_FILE, AdmetBoostersError, admet_columns,
                                                 admet_features)

DRUGS = ["CC(=O)Oc1ccccc1C(=O)O", "CN1CCC[C@H]1c1cccnc1", "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
         "CC(C)Cc1ccc(C(C)C(=O)O)cc1"]


def test_nine_properties_beside_maplight():
    base = feature_matrix("maplight", DRUGS)
    x = feature_matrix("maplight+admet", DRUGS)
    names = admet_columns()
    assert len(names) == 9 and "admet_cyp3a4_veith" in names and "admet_hiv" in names
    assert x.shape == (4, width("maplight") + 9) == (4, width("maplight+admet"))
    np.testing.assert_array_equal(x[:, :base.shape[1]], base)
    extra = x[:, base.shape[1]:]
    binary = [j for j, n in enumerate(names) if "cyp" in n or n in ("admet_ames", "admet_hiv")]
    assert ((extra[:, binary] >= 0) & (extra[:, binary] <= 1)).all()  # probabilities
    # not constant: the boosters read the molecules (two acids: ibuprofen's logD7.4 is ~2
    # units above aspirin's)
    logd = extra[:, names.index("admet_lipophilicity")]
    assert logd[3] - logd[0] > 0.2
    sig = signature("maplight+admet")
    assert sig["admet_columns"] == names and len(sig["admet"]) == 16


def test_only_gbm_reads_them():
    assert tree_kind("gbm").implementation().features("gbm", "maplight+admet") == "maplight+admet"
    assert tree_kind("gbm").implementation().features("gbm", None) == "maplight"
    with pytest.raises(ValueError, match="rf reads morgan"):
        tree_kind("rf").implementation().features("rf", "maplight+admet")


def test_a_damaged_file_is_named(tmp_path):
    bad = tmp_path / "admet.json.xz"
    bad.write_bytes(b"not xz")
    with pytest.raises(AdmetBoostersError, match="cannot read the ADMET boosters"):
        admet_features(np.zeros((1, 3), np.float32), bad)
    other = tmp_path / "other.json.xz"
    meta = json_from_xz(ADMET_FILE.read_bytes())
    meta["features"]["width"] = 5
    other.write_bytes(json_xz_bytes(meta))
    with pytest.raises(AdmetBoostersError, match="read 5 MapLight features"):
        admet_features(np.zeros((1, 3), np.float32), other)


def test_their_hash_follows_the_boosters_not_the_time_their_fit_took(tmp_path):
    from graphnorm.baselines.admet_boosters import admet_signature

    meta = json_from_xz(ADMET_FILE.read_bytes())
    shipped = admet_signature()["admet"]
    for name, edit in (("slower", lambda c: dict(c, fit_cpu_s=c.get("fit_cpu_s", 0) + 99)),
                       ("other", lambda c: dict(c, booster=c["booster"].replace("tree", "tree", 1)
                                                + "\n"))):
        path = tmp_path / f"{name}.json.xz"
        path.write_bytes(json_xz_bytes(dict(meta, columns=[edit(c) for c in meta["columns"]])))
        assert (admet_signature(path)["admet"] == shipped) == (name == "slower")


@pytest.mark.slow  # fits boosters and a gbm: ~6 CPU-s
def test_gbm_on_them_trains_saves_and_predicts(zinc_property_table, cache_root, tmp_path, capsys):
    table = tmp_path / "mols.csv"
    zinc_property_table.head(120).to_csv(table, index=False)
    out = tmp_path / "gbm"
    assert main(["train", "--data", str(table), "--target-columns", "logp", "--model", "gbm",
                 "--tree-features", "maplight+admet", "--split", "random", "--metric", "mae",
                 "--cache-root", str(cache_root), "--out", str(out), "--threads", "1",
                 "--no-progress"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["features"]["set"] == "maplight+admet"
    assert metrics["features"]["width"] == width("maplight+admet")
    from graphnorm.inference.predict import load_predictor

    test = pd.read_csv(out / "predictions_test.csv.gz")
    saved = load_predictor(out).predict(test.smiles.tolist()[:4])
    np.testing.assert_allclose(saved.prediction[:4], test["pred:logp"][:4], rtol=1e-5)
    assert main(["train", "--data", str(table), "--target-columns", "logp", "--model", "rf",
                 "--tree-features", "maplight+admet", "--split", "random",
                 "--cache-root", str(cache_root), "--out", str(tmp_path / "rf"),
                 "--no-progress"]) == 2
    assert "--tree-features maplight+admet: rf reads morgan" in capsys.readouterr().err


@pytest.fixture()
def tdc_folder(raw_dir, cache_root):
    from graphnorm.data.tdc import admet_group_dir

    group = raw_dir / "tdc_admet_group"
    if not (group / "admet_group.zip").is_file():
        pytest.skip("no TDC ADMET archive in the raw data directory")
    return admet_group_dir(group, cache=cache_root)


def test_the_boosters_never_saw_a_small_task_and_say_when_they_saw_yours(tdc_folder, cache_root,
                                                                           tmp_path):
    from graphnorm.baselines.admet_boosters import admet_overlap

    herg = pd.read_csv(tdc_folder / "herg" / "train_val.csv")["Drug"].tolist()
    assert admet_overlap(herg) == 0  # an evaluated task: excluded from their data
    ames = pd.read_csv(tdc_folder / "ames" / "train_val.csv").head(150)
    assert admet_overlap(ames["Drug"].tolist()) > 100  # learned from (a few were excluded)
    table = tmp_path / "ames.csv"
    ames.rename(columns={"Drug": "smiles"})[["smiles", "Y"]].to_csv(table, index=False)
    out = tmp_path / "gbm"
    with pytest.warns(UserWarning, match="boosters were fitted on \\d+ of the \\d+ validation"):
        assert main(["train", "--data", str(table), "--target-columns", "Y", "--model", "gbm",
                     "--tree-features", "maplight+admet", "--split", "random",
                     "--cache-root", str(cache_root), "--out", str(out), "--threads", "1",
                     "--no-progress"]) == 0
    overlap = json.loads((out / "metrics.json").read_text())["admet_overlap"]
    assert overlap["test"] > 0 and sum(overlap.values()) == admet_overlap(ames["Drug"].tolist())


def test_a_model_fitted_on_other_boosters_is_refused(tmp_path, zinc_property_table, cache_root):
    from graphnorm.baselines.boosted_file import BOOSTED_FILE, load_boosted
    from graphnorm.baselines.tree_member import TreeFileError

    table = tmp_path / "mols.csv"
    zinc_property_table.head(60).to_csv(table, index=False)
    out = tmp_path / "gbm"
    assert main(["train", "--data", str(table), "--target-columns", "logp", "--model", "gbm",
                 "--tree-features", "maplight+admet", "--split", "random", "--cache-root",
                 str(cache_root), "--out", str(out), "--threads", "1", "--no-progress"]) == 0
    meta = json.loads((out / BOOSTED_FILE).read_text())
    meta["features"]["admet"] = "0123456789abcdef"
    (out / BOOSTED_FILE).write_text(json.dumps(meta))
    with pytest.raises(TreeFileError, match="other ADMET boosters"):
        load_boosted(out / BOOSTED_FILE)


def test_an_ensemble_refuses_a_set_its_tree_member_cannot_read_before_training():
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.ensemble import check_tree_member

    cfg = TrainConfig(data="mols.csv", tree_member=True, tree_model="rf",
                      tree_features="maplight+admet")
    with pytest.raises(ValueError, match="rf reads morgan"):
        check_tree_member(cfg)
    check_tree_member(TrainConfig(data="mols.csv", tree_member=True, tree_model="gbm",
                                    tree_features="maplight+admet"))
