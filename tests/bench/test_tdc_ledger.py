"""The TDC suite's test ledger (issue 57): without --final the suite never reads test.csv and
reports validation only; with --final it scores test and appends one ledger row per (task,
configuration), never rewriting one. A fake group of two tasks in PyTDC's layout; the runs
are faked (a record written from the task's table) except in the one real selection run."""
import builtins
import csv
import datetime
import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from graphnorm.bench import benchmark
from graphnorm.bench.tdc_ledger import COLUMNS, LEDGER, RUN_FIELDS, ledger_counts
from graphnorm.cli import main
from graphnorm.run_folder import write_metrics

REPO = Path(__file__).resolve().parents[2]
RINGS = ["c1ccccc1", "C1CCCCC1", "c1ccncc1", "C1CCNCC1", "c1ccoc1", "C1CCOC1", "c1ccsc1",
         "C1CC1", "C1CCC1", "C1CCCC1"]
TASKS = {"caco2_wang": "mae", "dili": "rocauc"}  # a regression and a classification task


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    """admet_group/<task>/{train_val,test}.csv: 48 train_val and 12 test molecules a task."""
    mols = [ring + "C" * (k + 1) + tail for ring in RINGS for k in range(3) for tail in ("", "O")]
    root = tmp_path_factory.mktemp("tdc") / "admet_group"
    for task, metric in TASKS.items():
        y = [float(len(m) % 2) if metric == "rocauc" else len(m) / 10 for m in mols]
        frame = pd.DataFrame({"Drug_ID": range(len(mols)), "Drug": mols, "Y": y})
        (root / task).mkdir(parents=True)
        frame.iloc[:48].to_csv(root / task / "train_val.csv", index=False)
        frame.iloc[48:].to_csv(root / task / "test.csv", index=False)
    return root


def suite(group, out, *extra, tasks="caco2_wang,dili", seeds=2, cache=None):
    return main(["benchmark", "--suite", "tdc-admet", "--tasks", tasks, "--models", "rf",
                 "--seeds", str(seeds), "--tdc-dir", str(group), "--out", str(out),
                 "--cache-root", str(cache or out.parent / "cache"), "--threads", "1",
                 "--no-progress", *extra])


@pytest.fixture()
def fake_runs(monkeypatch):
    """Training replaced by a record: its test score is the mean label of the table's test
    rows (None without any), so a score shows which table the run read. Returns the configs."""
    seen = []

    def run_one(cfg):
        frame = pd.read_csv(cfg.data)
        test = frame[frame["tdc_set"] == "test"]
        m = cfg.metric
        Path(cfg.out).mkdir(parents=True)
        write_metrics(cfg.out, {
            "dataset": cfg.data, "norm": cfg.norm, "model": cfg.model_name, "seed": cfg.seed,
            "metric": m, f"val_{m}": 0.5 + cfg.seed / 10,
            f"test_{m}": float(test["Y"].mean()) + cfg.seed if len(test) else None,
            "params": 0, "epochs": 0, "wall_time_s": 1.0, "cpu_time_s": 1.0, "hardware": "fake",
            "git_sha": "fake", "data_checksum": "fake", "config": cfg.to_dict()})
        seen.append(cfg)

    monkeypatch.setattr(benchmark, "run_one", run_one)
    return seen


def read_ledger(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def expected_hash(cfg) -> str:
    from graphnorm.train.config import TrainConfig

    default = TrainConfig().to_dict()
    kept = {k: v for k, v in cfg.to_dict().items() if k not in RUN_FIELDS and default[k] != v}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_a_selection_run_reads_no_test_molecule(group, tmp_path, monkeypatch, capsys):
    """A real (random forest) run: test.csv is never opened, nothing scores a test split."""
    real_open, real_read = builtins.open, pd.read_csv

    def guard(path):
        if isinstance(path, (str, Path)) and Path(path).name == "test.csv":
            raise AssertionError(f"a selection run read {path}")

    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: guard(f) or real_open(f, *a, **k))
    monkeypatch.setattr(pd, "read_csv", lambda f, *a, **k: guard(f) or real_read(f, *a, **k))
    out = tmp_path / "select"
    assert suite(group, out, tasks="caco2_wang", seeds=1) == 0
    run = out / "caco2_wang" / "runs" / "rf" / "seed0"
    record = json.loads((run / "metrics.json").read_text())
    assert record["test_mae"] is None and record["val_mae"] > 0
    assert json.loads((run / "splits.json").read_text())["test"] == []
    assert not (run / "predictions_test.csv.gz").exists()
    board = pd.read_csv(out / "board.csv")
    assert "test_mean" not in board and "rank" not in board and board["val_mean"].notna().all()
    shown = capsys.readouterr().out + (out / "board.md").read_text()
    assert "test mae" not in shown and "test (mean" not in shown and "Validation scores only" in shown


def test_final_appends_one_row_per_task_with_its_config_hash(group, tmp_path, fake_runs):
    ledger = tmp_path / "ledger.csv"
    out = tmp_path / "final"
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    assert suite(group, out, "--final", "--ledger", str(ledger)) == 0
    rows = read_ledger(ledger)
    assert [r["task"] for r in rows] == list(TASKS) and list(rows[0]) == list(COLUMNS)
    for row in rows:
        task, metric = row["task"], TASKS[row["task"]]
        cfgs = [c for c in fake_runs if Path(c.out).parts[-4] == task]
        hashes = {expected_hash(c) for c in cfgs}
        assert len(cfgs) == 2 and hashes == {row["config_hash"]}  # both seeds: one config
        records = [json.loads((out / task / "runs/rf" / f"seed{s}/metrics.json").read_text())
                   for s in (0, 1)]
        tests = [r[f"test_{metric}"] for r in records]
        assert None not in tests  # --final: the table held the test rows
        assert float(row["test_mean"]) == pytest.approx(sum(tests) / 2, rel=1e-5)
        assert float(row["test_std"]) == pytest.approx(0.5, rel=1e-5)  # seeds 0, 1: +0, +1
        assert (row["seeds"], row["metric"], row["variant"]) == ("0 1", metric, "rf")
        assert row["run_folder"] == str(out / task) and row["commit"]
        assert datetime.datetime.fromisoformat(row["date_utc"]) >= before
    assert rows[0]["config_hash"] != rows[1]["config_hash"]  # another task's config
    board = pd.read_csv(out / "board.csv")
    assert board["test_mean"].notna().all()


def test_a_second_final_run_appends_and_never_rewrites(group, tmp_path, fake_runs):
    ledger, out = tmp_path / "ledger.csv", tmp_path / "final"
    assert suite(group, out, "--final", "--ledger", str(ledger)) == 0
    first = ledger.read_bytes()
    assert suite(group, out, "--final", "--ledger", str(ledger)) == 0  # all finished: no scoring
    assert ledger.read_bytes() == first
    assert suite(group, out, "--final", "--ledger", str(ledger), seeds=3) == 0  # seed 2 scored
    assert ledger.read_bytes().startswith(first)
    rows = read_ledger(ledger)
    assert len(rows) == 4 and [r["seeds"] for r in rows[2:]] == ["0 1 2", "0 1 2"]
    assert suite(group, tmp_path / "again", "--final", "--ledger", str(ledger),
                 tasks="dili", cache=tmp_path / "cache") == 0
    assert ledger.read_bytes().startswith(first) and len(read_ledger(ledger)) == 5
    assert ledger_counts(ledger) == {"caco2_wang": {"scorings": 2, "configurations": 1},
                                     "dili": {"scorings": 3, "configurations": 1}}


def test_the_ledger_summary_counts_rows_per_task(group, tmp_path, fake_runs, capsys):
    ledger = tmp_path / "ledger.csv"
    argv = ["benchmark", "--suite", "tdc-admet", "--ledger-summary", "--ledger", str(ledger)]
    assert main(argv) == 0 and "0 rows" in capsys.readouterr().out
    assert suite(group, tmp_path / "final", "--final", "--ledger", str(ledger), tasks="dili") == 0
    capsys.readouterr()
    assert main(argv) == 0
    assert "| dili | 1 | 1 |" in capsys.readouterr().out


def test_a_task_folder_holds_one_kind_of_run(group, tmp_path, fake_runs, capsys):
    ledger, select, final = tmp_path / "ledger.csv", tmp_path / "select", tmp_path / "final"
    assert suite(group, select, tasks="dili") == 0
    assert suite(group, final, "--final", "--ledger", str(ledger), tasks="dili") == 0
    capsys.readouterr()
    assert suite(group, select, "--final", "--ledger", str(ledger), tasks="dili") == 2
    assert "holds selection runs" in capsys.readouterr().err
    assert suite(group, final, "--summary-only", tasks="dili") == 2  # would show test scores
    assert "holds runs scored on test" in capsys.readouterr().err
    assert len(read_ledger(ledger)) == 1


def test_the_ledger_flags_need_the_suite_and_final(group, tmp_path, capsys):
    assert main(["benchmark", "--final", "--out", str(tmp_path / "b")]) == 2
    assert "belong to --suite" in capsys.readouterr().err
    assert suite(group, tmp_path / "s", "--ledger", str(tmp_path / "l.csv")) == 2
    assert "without --final" in capsys.readouterr().err


def test_a_network_that_may_have_seen_tdc_is_refused_before_any_training(group, tmp_path,
                                                                         fake_runs, tiny_run,
                                                                         capsys):
    """A model trained by `train` (no record of a TDC-free pre-training) cannot start a TDC
    run (graphnorm/bench/tdc_clean.py); nothing is trained, nothing reaches the ledger."""
    run, _ = tiny_run
    ledger = tmp_path / "l.csv"
    assert suite(group, tmp_path / "s", "--init-from", str(run / "best.ckpt"), "--final",
                 "--ledger", str(ledger)) == 2
    assert "tdc-admet: --init-from" in capsys.readouterr().err.replace("\n", " ")
    assert fake_runs == [] and not ledger.exists()


def test_the_repository_ledger_is_a_ledger():
    path = REPO / LEDGER
    if not (REPO / ".git").exists():
        pytest.skip("not a checkout")
    with open(path, newline="") as f:
        assert next(csv.reader(f)) == list(COLUMNS)


def test_the_hash_ignores_settings_at_their_default_and_earlier_key_names():
    from graphnorm.bench.tdc_ledger import config_hash
    from graphnorm.train.config import TrainConfig

    cfg = TrainConfig(data="t.csv", tree_member=True, tree_model="gbm", lr=1e-3).to_dict()
    same = {k: v for k, v in cfg.items() if k not in ("trace_validation", "feature_backbone")}
    old = {**{k: v for k, v in cfg.items() if k not in ("tree_member", "tree_model")},
           "forest_member": True, "forest_model": "gbm"}
    assert config_hash(cfg) == config_hash(same) == config_hash(old)
    assert config_hash(cfg) != config_hash({**cfg, "lr": 2e-3})
