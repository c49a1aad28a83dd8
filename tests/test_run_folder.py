"""metrics.json: written strict and whole in one place, checked on read."""
import json
import math

import numpy as np
import pytest

from graphnorm.run_folder import RunRecordError, read_metrics, write_metrics


def test_records_are_strict_json_and_checked(tmp_path):
    write_metrics(tmp_path, {"metric": "spearman", "seed": np.int64(1), "val_spearman": math.nan,
                             "test_spearman": np.float32(0.5), "per_target": {"y": [float("inf")]}})
    text = (tmp_path / "metrics.json").read_text()
    record = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict {c}"))
    assert record["val_spearman"] is None and record["per_target"]["y"] == [None]
    assert read_metrics(tmp_path)["test_spearman"] == 0.5 and record["seed"] == 1
    assert not list(tmp_path.glob(".*.tmp"))  # written whole, nothing left beside it
    with pytest.raises(RunRecordError, match="missing: test_mae"):
        write_metrics(tmp_path, {"metric": "mae", "seed": 0})


def test_bad_records_are_named(tmp_path):
    with pytest.raises(RunRecordError, match="cannot read run record .*metrics.json"):
        read_metrics(tmp_path)
    (tmp_path / "metrics.json").write_text('{"metric": "mae", "val_mae": 1}')
    with pytest.raises(RunRecordError, match="not a finished run's record"):
        read_metrics(tmp_path / "metrics.json")


def test_every_committed_record_reads(tmp_path):
    """Every metrics.json under experiments/results reads as a typed record; all but the
    external tools' runs (chemprop: no validation score) also as a finished graphnorm run."""
    from pathlib import Path

    from graphnorm.run_folder import read_record

    results = Path(__file__).resolve().parents[1] / "experiments" / "results"
    paths = sorted(results.rglob("metrics.json"))
    assert len(paths) > 100
    for path in paths:
        record = read_record(path)
        assert isinstance(record.seed, int) and f"test_{record.metric}" in record.fields
        if "chemprop" in record.fields:
            assert record.val is None
        else:
            assert read_metrics(path) == record.fields
    (tmp_path / "metrics.json").write_text('{"metric": "mae", "seed": "0", "test_mae": "1.5"}')
    with pytest.raises(RunRecordError, match="test_mae='1.5', seed='0'"):
        read_record(tmp_path)


def test_run_folder_names(tmp_path):
    from graphnorm.run_folder import is_finished, member_dir, predictions_file

    assert (predictions_file("val"), member_dir(2)) == ("predictions_val.csv.gz", "model_2")
    assert not is_finished(tmp_path)
    write_metrics(tmp_path, {"metric": "mae", "seed": 0, "val_mae": 1.0, "test_mae": 2.0})
    assert is_finished(tmp_path)


def test_a_run_folder_is_trained_by_one_process_at_a_time(tmp_path):
    """Two processes on one run folder (two benchmarks on one campaign) would write the same
    last.ckpt; the second is refused by name, and a killed holder leaves no stale lock."""
    from held_runs import held_elsewhere

    from graphnorm.run_folder import RunInProgress, hold_run

    run = tmp_path / "runs" / "seed0"
    with held_elsewhere(run, tmp_path / "flag") as holder:
        with pytest.raises(RunInProgress, match=rf"{run} is being trained by process {holder.pid}"):
            with hold_run(run):
                pass
    with hold_run(run):  # the holder was killed: free again
        with hold_run(tmp_path / "runs" / "seed1"):  # another folder: its own lock
            pass
    assert not run.exists()  # the lock lives beside the folder, which the run creates


def test_a_typed_record_writes_its_keys_in_one_order_and_reads_back(tmp_path):
    from graphnorm.run_folder import RunRecord, read_record

    record = RunRecord("rmse", 3, np.float32(0.5), math.nan, model="gbm", dataset="t.csv",
                       norm="ln", best_epoch=None, epochs=0, steps=0, wall_time_s=1.0,
                       cpu_time_s=0.5, stopped_by="fit", params=0, hardware="cpu",
                       git_sha="abc", data_checksum="d", config={"seed": 3},
                       extra={"features": {"set": "maplight"}, "mine": 1,
                              "train_graphs_per_s": 2.0})
    record.write(tmp_path)
    text = (tmp_path / "metrics.json").read_text()
    assert list(json.loads(text)) == [
        "dataset", "norm", "seed", "metric", "val_rmse", "test_rmse", "best_epoch", "epochs",
        "steps", "wall_time_s", "cpu_time_s", "budget_s", "stopped_by", "model", "params",
        "train_graphs_per_s", "hardware", "features", "mine", "git_sha", "data_checksum",
        "config"]  # a kind's own keys in KEY_ORDER, others before git_sha
    back = read_record(tmp_path)
    assert (back.metric, back.seed, back.val, back.test, back.model) == ("rmse", 3, 0.5, None, "gbm")
    assert back.epochs == 0 and back.extra == {"features": {"set": "maplight"}, "mine": 1,
                                               "train_graphs_per_s": 2.0}
    assert json.loads(text) == back.fields
    with pytest.raises(RunRecordError, match=r"metrics.json: epochs='3' \(expected integer\)"):
        RunRecord("rmse", 3, 0.5, 0.4, epochs="3").write(tmp_path)  # checked before writing
    (tmp_path / "metrics.json").write_text(text.replace('"epochs": 0', '"epochs": "0"'))
    with pytest.raises(RunRecordError, match=rf"{tmp_path}/metrics.json: epochs='0'"):
        read_record(tmp_path)


def test_metrics_json_is_written_in_one_place():
    """Only graphnorm/run_folder.py writes metrics.json (`RunRecord.write`): no other module
    opens or writes a path named by METRICS_FILE or "metrics.json"."""
    import ast
    from pathlib import Path

    import graphnorm

    pkg = Path(graphnorm.__file__).parent
    writers = []
    for path in sorted(pkg.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            target = ast.dump(node.func.value) if isinstance(node.func, ast.Attribute) else ""
            names_file = "METRICS_FILE" in target or "'metrics.json'" in target
            if name == "write_metrics" or (name in ("write_text", "write_bytes", "open") and names_file):
                writers.append(f"{path.relative_to(pkg)}:{node.lineno}")
    assert [w for w in writers if not w.startswith("run_folder.py")] == []
