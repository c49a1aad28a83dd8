"""The TDC ADMET group: PyTDC's scaffold valid split reproduced, the folder layouts read,
the suite's board in leaderboard form."""
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from graphnorm.bench.tdc_board import board
from graphnorm.data.tdc import (TDC_ADMET_TASKS, TDCError, admet_group_dir, parse_tasks, task_table,
                                tdc_scaffold, tdc_scaffold_split)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RINGS = ["c1ccccc1", "C1CCCCC1", "c1ccncc1", "C1CCNCC1", "c1ccoc1", "C1CCOC1", "c1ccsc1",
         "C1CC1", "C1CCC1", "C1CCCC1"]


def _molecules():
    # ten scaffolds, 1 to 10 molecules each (substituents keep the scaffold)
    return [ring + "C" * (k + 1) for n, ring in enumerate(RINGS) for k in range(n + 1)]


def test_split_keeps_scaffolds_whole_sizes_and_seeds():
    smiles = _molecules()
    a, b = tdc_scaffold_split(smiles, 1), tdc_scaffold_split(smiles, 2)
    assert sorted(a["train"] + a["val"]) == list(range(len(smiles))) and not a["omitted"]
    assert len(a["train"]) <= int(len(smiles) * 0.875)
    for part in (a["train"], a["val"]):
        scaffolds = {tdc_scaffold(smiles[i]) for i in part}
        others = {tdc_scaffold(smiles[i]) for i in set(range(len(smiles))) - set(part)}
        assert not scaffolds & others  # no scaffold straddles train and valid
    assert a == tdc_scaffold_split(smiles, 1) and a["val"] != b["val"]


def test_an_unreadable_smiles_is_left_out_as_pytdc_does():
    split = tdc_scaffold_split(_molecules() + ["C1CC"], 1)
    assert split["omitted"] == [len(_molecules())]


def test_parse_tasks_names_a_typo():
    assert parse_tasks(None) == list(TDC_ADMET_TASKS) and len(TDC_ADMET_TASKS) == 22
    with pytest.raises(ValueError, match="unknown TDC ADMET task 'herg2'"):
        parse_tasks("caco2_wang,herg2")


def test_layouts_zip_and_folder_and_a_clear_error(tmp_path, cache_root, monkeypatch):
    monkeypatch.delenv("GRAPHNORM_RAW_DIR", raising=False)
    monkeypatch.delenv("GRAPHNORM_TDC_DIR", raising=False)
    with pytest.raises(TDCError, match="TDC ADMET group not found.*--tdc-dir"):
        admet_group_dir(tmp_path / "nothing")
    rows = pd.DataFrame({"Drug_ID": ["a", "b"], "Drug": ["CCO", "c1ccccc1"], "Y": [1.0, 2.0]})
    folder = tmp_path / "download" / "admet_group" / "caco2_wang"
    folder.mkdir(parents=True)
    rows.to_csv(folder / "train_val.csv", index=False)
    rows.to_csv(folder / "test.csv", index=False)
    assert admet_group_dir(tmp_path / "download") == folder.parent  # PyTDC's download path
    with zipfile.ZipFile(tmp_path / "admet_group.zip", "w") as z:
        for name in ("train_val.csv", "test.csv"):
            z.write(folder / name, f"admet_group/caco2_wang/{name}")
    extracted = admet_group_dir(tmp_path, cache=tmp_path / "cache")
    assert (extracted / "caco2_wang" / "test.csv").is_file()
    table = pd.read_csv(task_table("caco2_wang", extracted, cache=tmp_path / "cache"))
    assert table["tdc_set"].tolist() == ["train_val", "train_val", "test", "test"]
    # a selection table (the suite without --final): test.csv is neither needed nor read
    (extracted / "caco2_wang" / "test.csv").unlink()
    table = pd.read_csv(task_table("caco2_wang", extracted, tmp_path / "cache", final=False))
    assert table["tdc_set"].tolist() == ["train_val", "train_val"]
    with pytest.raises(TDCError, match="herg/train_val.csv is missing"):
        task_table("herg", extracted, cache=tmp_path / "cache")


@pytest.fixture()
def real_group(raw_dir):
    group = raw_dir / "tdc_admet_group"
    if not (group / "admet_group.zip").is_file():
        pytest.skip("no TDC ADMET archive in the raw data directory")
    return group


def test_split_equals_pytdcs_on_a_real_task(real_group, cache_root):
    """PyTDC 1.1.15's own valid rows of dili, seed 1 (tests/fixtures;
    experiments/tdc_split_check.py, now in git history, compared all 22 tasks x 5 seeds)."""
    folder = admet_group_dir(real_group, cache=cache_root)
    train_val = pd.read_csv(folder / "dili" / "train_val.csv")
    ours = tdc_scaffold_split(train_val["Drug"].tolist(), 1)
    expected = [s for s in (FIXTURES / "tdc_dili_seed1_valid.txt").read_text().splitlines()
                if not s.startswith("#")]
    assert sorted(train_val["Drug"].iloc[ours["val"]]) == expected


def test_suite_writes_runs_and_the_board(real_group, cache_root, tmp_path):
    from graphnorm.cli import main

    out, ledger = tmp_path / "tdc", tmp_path / "ledger.csv"
    argv = ["benchmark", "--suite", "tdc-admet", "--tasks", "dili", "--models", "gbm",
            "--seeds", "2", "--tdc-dir", str(real_group), "--cache-root", str(cache_root),
            "--out", str(out), "--threads", "1", "--no-progress", "--final", "--ledger", str(ledger)]
    assert main(argv) == 0  # --final: test scored (tests/bench/test_tdc_ledger.py: without)
    assert pd.read_csv(ledger)[["task", "variant", "seeds"]].values.tolist() == [["dili", "gbm", "0 1"]]
    runs = [json.loads(p.read_text()) for p in sorted(out.glob("dili/runs/gbm/seed*/metrics.json"))]
    assert [r["config"]["split_seed"] for r in runs] == [0, 1]
    assert all(r["metric"] == "rocauc" and r["config"]["split"] == "tdc:tdc_set" for r in runs)
    splits = json.loads((out / "dili/runs/gbm/seed0/splits.json").read_text())
    assert (len(splits["train"]), len(splits["val"]), len(splits["test"])) == (325, 54, 96)
    table = pd.read_csv(out / "board.csv")
    row = table.iloc[0]
    assert (row["task"], row["variant"], row["seeds"]) == ("dili", "gbm", 2)
    assert row["test_mean"] == pytest.approx(sum(r["test_rocauc"] for r in runs) / 2, abs=1e-4)
    assert row["rank1"] == 0.956 and "(incomplete)" in (out / "board.md").read_text()
    again = board(out, real_group / "leaderboard.csv")  # a rerun reads the same runs
    assert again["test_mean"].tolist() == table["test_mean"].tolist()
