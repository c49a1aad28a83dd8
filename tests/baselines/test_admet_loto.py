"""Leave-own-task-out ADMET boosters (`graphnorm.baselines.admet_loto`) and a run's own boosters
file (``--admet-boosters``): built without any molecule of the left-out task, cached, kept in
the run folder so predict reads them, and refused or named where they cannot be used."""
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.baselines.admet_boosters import admet_columns, admet_overlap, unseen_tasks
from graphnorm.cli import main
from graphnorm.data.files import json_from_xz
from graphnorm.data.tdc import TDC_ADMET_TASKS, task_kind
from graphnorm.data.tdc_aux import AUX_TASKS, aux_table, task_frame

pytestmark = pytest.mark.slow  # builds leave-one-task-out boosters: ~20 CPU-s


@pytest.fixture(scope="module")
def fake_group(zinc_property_table, tmp_path_factory):
    """All 22 task folders in PyTDC's layout, from real ZINC molecules: 36 + 4 test molecules
    per large task, 6 + 2 per small one; lipophilicity's train_val shares 10 of ames's."""
    root = tmp_path_factory.mktemp("tdc") / "admet_group"
    mols = zinc_property_table
    start = 0
    for task in TDC_ADMET_TASKS:
        n_tv, n_test = (36, 4) if task in AUX_TASKS else (6, 2)
        rows = mols.iloc[start:start + n_tv + n_test]
        start += n_tv + n_test
        y = rows["qed_high"] if task_kind(task) == "classification" else rows["logp"]
        frame = pd.DataFrame({"Drug_ID": range(len(rows)), "Drug": rows["smiles"],
                              "Y": y.to_numpy(dtype=float)})
        (root / task).mkdir(parents=True)
        frame.iloc[:n_tv].to_csv(root / task / "train_val.csv", index=False)
        frame.iloc[n_tv:].to_csv(root / task / "test.csv", index=False)
    # 10 of ames's molecules measured for lipophilicity too (the AstraZeneca sets share some)
    ames = pd.read_csv(root / "ames" / "train_val.csv").head(10)
    lipo = pd.read_csv(root / "lipophilicity_astrazeneca" / "train_val.csv")
    shared = ames.assign(Y=np.linspace(0.5, 3.0, 10))
    pd.concat([lipo, shared]).to_csv(root / "lipophilicity_astrazeneca" / "train_val.csv",
                                     index=False)
    return root


@pytest.fixture(scope="module")
def loto_ames(fake_group, tmp_path_factory):
    from graphnorm.baselines.admet_loto import loto_boosters

    cache = tmp_path_factory.mktemp("loto-cache")
    return loto_boosters("ames", fake_group, cache, raw_dir=tmp_path_factory.mktemp("no-hiv")), cache


def test_the_left_out_task_is_in_no_booster(fake_group, loto_ames):
    path, cache = loto_ames
    names = admet_columns(path)
    assert "admet_ames" not in names and "admet_lipophilicity" in names
    assert len(names) == len(AUX_TASKS) - 1  # no MolHIV file here: its column left out
    ames = pd.concat([pd.read_csv(fake_group / "ames" / p) for p in ("train_val.csv", "test.csv")])
    assert admet_overlap(ames["Drug"].tolist(), path) == 0
    # the table itself holds 10 of them in lipophilicity's column: they were dropped there
    table, _ = aux_table({t: task_frame(t, fake_group, cache) for t in TDC_ADMET_TASKS})
    shared = table["lipophilicity_astrazeneca"].notna() & table["ames"].notna()
    assert shared.sum() == 10
    meta = json_from_xz(path.read_bytes())
    lipo = next(c for c in meta["columns"] if c["name"] == "lipophilicity")
    assert lipo["rows"] == table["lipophilicity_astrazeneca"].notna().sum() - 10
    assert {c["kind"] for c in meta["columns"]} == {"binary", "regression"}
    assert "ames" in unseen_tasks(path) and meta["data"]["left_out_task"] == "ames"


def test_built_once_then_read_from_the_cache(fake_group, loto_ames, monkeypatch, tmp_path):
    import graphnorm.baselines.boosted as boosted
    from graphnorm.baselines.admet_loto import loto_boosters

    path, cache = loto_ames

    def refit(*a, **k):
        raise AssertionError("refitted a cached file")

    monkeypatch.setattr(boosted, "fit_boosted", refit)
    assert loto_boosters("ames", fake_group, cache, raw_dir=tmp_path) == path
    with pytest.raises(ValueError, match="herg: not one of the tasks the ADMET boosters learned"):
        loto_boosters("herg", fake_group, cache, raw_dir=tmp_path)
    partial = tmp_path / "partial"  # a download of some tasks only
    (partial / "ames").mkdir(parents=True)
    for part in ("train_val.csv", "test.csv"):
        (partial / "ames" / part).write_bytes((fake_group / "ames" / part).read_bytes())
    from graphnorm.data.tdc import TDCError

    with pytest.raises(TDCError, match="read all 22 TDC ADMET tasks; .*caco2_wang/train_val.csv "
                                       "is missing \\(42 files"):
        loto_boosters("ames", partial, cache, raw_dir=tmp_path)


def test_a_cached_file_from_other_code_is_not_reused(fake_group, loto_ames, monkeypatch,
                                                      tmp_path):
    """The key names the code that built the file: with other chemistry code the cached file
    is not read (the build starts: here it stops at the first fit)."""
    import graphnorm.baselines.boosted as boosted
    import graphnorm.chem.code as chem_code
    from graphnorm.baselines.admet_loto import loto_boosters

    def refit(*a, **k):
        raise AssertionError("built again")

    monkeypatch.setattr(boosted, "fit_boosted", refit)
    monkeypatch.setattr(chem_code, "chem_code_sha", lambda: "another-chem-code")
    with pytest.raises(AssertionError, match="built again"):
        loto_boosters("ames", fake_group, loto_ames[1], raw_dir=tmp_path)


def test_a_run_keeps_its_boosters_and_predict_reads_them(zinc_property_table, loto_ames,
                                                         cache_root, tmp_path, capsys):
    from graphnorm.baselines.boosted_file import BOOSTED_FILE, load_boosted
    from graphnorm.baselines.tree_features import RUN_BOOSTERS
    from graphnorm.baselines.tree_member import TreeFileError
    from graphnorm.inference.predict import load_predictor

    path, _ = loto_ames
    table = tmp_path / "mols.csv"
    zinc_property_table.iloc[432:].to_csv(table, index=False)  # none in fake_group
    out = tmp_path / "gbm"
    base = ["train", "--data", str(table), "--target-columns", "logp", "--model", "gbm",
            "--split", "random", "--metric", "mae", "--cache-root", str(cache_root),
            "--threads", "1", "--no-progress"]
    assert main(base + ["--tree-features", "maplight+admet", "--admet-boosters", str(path),
                        "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["features"]["admet_columns"] == admet_columns(path)
    assert metrics["features"]["admet_file"] == RUN_BOOSTERS and (out / RUN_BOOSTERS).is_file()
    test = pd.read_csv(out / "predictions_test.csv.gz")
    again = load_predictor(out).predict(test.smiles.tolist())
    np.testing.assert_allclose(again.prediction, test["pred:logp"], rtol=1e-5)
    (out / RUN_BOOSTERS).unlink()
    with pytest.raises(TreeFileError, match="ADMET boosters of its folder"):
        load_boosted(out / BOOSTED_FILE)
    # the small-table recipe reads no ADMET boosters (the admet recipe's trees would)
    assert main(base + ["--recipe", "small-table", "--admet-boosters", str(path),
                        "--out", str(tmp_path / "plain")]) == 2
    assert "--admet-boosters is read by --tree-features maplight+admet" in capsys.readouterr().err
    damaged = tmp_path / "damaged.json.xz"
    damaged.write_text('{"format": 1')
    for bad, message in ((tmp_path / "nope.json.xz", "ADMET boosters file not found"),
                         (damaged, "an xz-compressed JSON file of graphnorm's boosters format")):
        assert main(base + ["--tree-features", "maplight+admet", "--admet-boosters", str(bad),
                            "--out", str(tmp_path / "bad")]) == 2
        assert message in capsys.readouterr().err and not (tmp_path / "bad").exists()


def test_the_suite_needs_them_where_the_shipped_boosters_learned(loto_ames):
    from types import SimpleNamespace

    from graphnorm.bench.tdc_suite import needs_loto_boosters

    shipped = SimpleNamespace(tree_features="maplight+admet", admet_boosters=None)
    assert "herg" in unseen_tasks() and "ames" not in unseen_tasks()
    assert not needs_loto_boosters("herg", shipped)  # never seen: the shipped file is fair
    assert needs_loto_boosters("ames", shipped)  # learned: leave-own-task-out boosters
    assert not needs_loto_boosters("ames", SimpleNamespace(tree_features=None))
    own = SimpleNamespace(tree_features="maplight+admet", admet_boosters=str(loto_ames[0]))
    assert not needs_loto_boosters("ames", own)  # a file that never saw ames
    with pytest.raises(ValueError, match="fitted on this task's molecules"):
        needs_loto_boosters("lipophilicity_astrazeneca", own)
