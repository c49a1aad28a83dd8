"""The published TDC board (graphnorm/bench/tdc_published.py, `graphnorm board`): rows gathered
from several folders, standing on the snapshot, and the counts against a reference."""
import json

import pandas as pd
import pytest

from graphnorm.bench.tdc_board import standing
from graphnorm.bench.tdc_published import folder_and_variant, published_board
from graphnorm.cli import main

LEADERBOARD = """task,metric,better,entries,rank1_model,rank1,rank3,minimol,maplight_gnn,maplight,chemprop_rdkit,chemprop,note
caco2_wang,mae,lower,20,x,0.256,0.276,0.35,0.287,0.276,0.330,0.344,
dili,rocauc,higher,20,x,0.956,0.919,0.9,0.917,0.887,0.887,0.86,
bioavailability_ma,rocauc,higher,20,x,0.942,0.935,0.9,0.938,0.930,0.886,0.86,copied block
"""


def write_runs(folder, task, variant, metric, scores):
    for seed, score in enumerate(scores):
        run = folder / task / "runs" / variant / f"seed{seed}"
        run.mkdir(parents=True)
        (run / "metrics.json").write_text(json.dumps({
            "metric": metric, "seed": seed, f"val_{metric}": score, f"test_{metric}": score,
            "cpu_time_s": 10.0, "git_sha": "abcdef123"}))


@pytest.fixture
def folders(tmp_path):
    small, large, ref = tmp_path / "small", tmp_path / "large", tmp_path / "ref"
    write_runs(small, "caco2_wang", "admet", "mae", [0.240, 0.242, 0.238, 0.241, 0.239])
    write_runs(small, "bioavailability_ma", "admet", "rocauc", [0.7] * 5)
    write_runs(large, "caco2_wang", "big", "mae", [0.5] * 5)  # small's caco2 wins: listed first
    write_runs(large, "dili", "big", "rocauc", [0.930, 0.931, 0.929, 0.930, 0.930])
    write_runs(ref, "caco2_wang", "gbm", "mae", [0.30] * 5)
    write_runs(ref, "dili", "gbm", "rocauc", [0.930] * 5)  # a tie at 3 decimals: no win
    (tmp_path / "lb.csv").write_text(LEADERBOARD)
    return small, large, ref, tmp_path / "lb.csv"


def test_standing_needs_more_than_one_sd_to_be_first():
    row = pd.Series({"better": "lower", "rank1": 0.256, "rank3": 0.276, "note": None})
    assert standing(0.240, 0.002, row) == "first"
    assert standing(0.250, 0.010, row) == "tied with first"  # better, but inside one SD
    assert [standing(v, 0.0, row) for v in (0.2564, 0.27, 0.2762, 0.3)] == [
        "tied with first", "top 3", "top 3 (= 3)", "> 3"]
    row = pd.Series({"better": "higher", "rank1": 0.88, "rank3": 0.874, "note": None})
    assert [standing(v, 0.0, row) for v in (0.8801, 0.8744, 0.87)] == [
        "tied with first", "top 3 (= 3)", "> 3"]
    assert standing(0.99, 0.0, row) == "first"
    assert standing(0.99, 0.0, pd.concat([row[:-1], pd.Series({"note": "copied"})])) == "unranked"


def test_first_folder_wins_and_the_reference_is_counted(folders):
    small, large, ref, lb = folders
    table, wins = published_board([small, large], lb, "default", f"{ref}:gbm")
    mine = table[table["variant"] == "default"].set_index("task")
    assert mine.loc["caco2_wang", "test_mean"] == pytest.approx(0.240)  # not large's 0.5
    assert mine.loc["caco2_wang", "standing"] == "first"
    assert mine.loc["dili", "standing"] == "top 3"
    assert mine.loc["bioavailability_ma", "standing"] == "unranked"
    assert mine.loc["caco2_wang", "code"] == "abcdef1"
    assert wins == {"default": 1, "gbm": 0}  # caco2 beaten; dili tied at 3 decimals


def test_a_folder_with_two_variants_must_name_one(folders, tmp_path):
    small, large, ref, lb = folders
    write_runs(small, "dili", "other", "rocauc", [0.5])
    write_runs(small, "dili", "admet", "rocauc", [0.9])
    with pytest.raises(ValueError, match="several variants.*name one"):
        published_board([small], lb)
    table, _ = published_board([f"{small}:admet"], lb)
    assert set(table["task"]) == {"caco2_wang", "bioavailability_ma", "dili"}
    assert folder_and_variant("C:\\runs") == (folder_and_variant("C:\\runs")[0], None)
    with pytest.raises(FileNotFoundError, match="no such benchmark folder"):
        published_board([tmp_path / "nowhere"], lb)


def test_the_board_command_prints_and_writes(folders, tmp_path, capsys):
    small, large, ref, lb = folders
    out = tmp_path / "board.md"
    argv = ["board", str(small), str(large), "--reference", f"{ref}:gbm", "--leaderboard",
            str(lb), "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text == out.read_text() and "| default | 2 | 1 | 0 | 2 (0) | 2 | 1 |" in text
    assert pd.read_csv(out.with_suffix(".csv"))["standing"].tolist()[:3] == [
        "unranked", "first", "top 3"]
    assert main(["board", str(ref), "--reference", str(ref), "--leaderboard", str(lb)]) == 2
    assert "name the variant" in capsys.readouterr().err
