"""The cost curve of pre-training runs (graphnorm/pretrain/report.py)."""
import json

import pytest

from graphnorm.pretrain.report import ReportError, write_report


def _run(folder, norm, cpu_per_step, size=(4, 64, 128)):
    folder.mkdir()
    (folder / "pretrain.json").write_text(json.dumps(
        {"norm": norm, "num_layers": size[0], "hidden": size[1], "ffn_hidden": size[2]}))
    records = [{"step": s, "seen": 128 * s, "cpu_s": cpu_per_step * s, "val_loss": 1 / s,
                "val_auroc": 0.6, "val_r2": 0.1, "probe": 0.5} for s in (1000, 2000)]
    (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_runs_are_put_on_the_measured_clock(tmp_path):
    a = _run(tmp_path / "a", "sep:bn+bn", 0.9)  # logged in a busy session
    b = _run(tmp_path / "b", "ln", 0.3)
    cost = tmp_path / "step_cost.json"
    cost.write_text(json.dumps({"cpu_s_per_step": {"sep:bn+bn": 0.36, "ln": 0.30},
                                "size": [4, 64, 128]}))
    out = write_report([a, b], tmp_path / "report", cost)
    table = out["table"].read_text()
    # 2,000 steps: 0.50 logged CPU-h for a, 0.20 at the measured 0.36 CPU-s per step
    assert "| sep:bn+bn 4x64 (a) | 2000 | 0.50 | 0.20 |" in table
    assert "| ln 4x64 (b) | 2000 | 0.17 | 0.17 |" in table
    assert out["figure"].stat().st_size > 0
    plain = write_report([a], tmp_path / "plain")["table"].read_text()
    assert "| sep:bn+bn 4x64 (a) | 2000 | 0.50 |  |" in plain
    cost.write_text(json.dumps({"cpu_s_per_step": {"ln": 0.3}, "size": [4, 64, 128]}))
    with pytest.raises(ReportError, match="lack sep:bn\\+bn at 4x64x128"):
        write_report([a, b], tmp_path / "report", cost)
    with pytest.raises(ReportError, match="not a pre-training run"):
        write_report([tmp_path], tmp_path / "report")


def test_a_larger_model_is_read_at_its_own_measured_cost(tmp_path):
    small = _run(tmp_path / "small", "sep:bn+bn", 0.9)
    large = _run(tmp_path / "large", "sep:bn+bn", 2.0, size=(6, 96, 192))
    cost = tmp_path / "step_cost.json"
    cost.write_text(json.dumps({"cpu_s_per_step": {"sep:bn+bn": 0.36, "sep:bn+bn@6x96": 1.08},
                                "size": [4, 64, 128]}))
    table = write_report([small, large], tmp_path / "report", cost)["table"].read_text()
    assert "| sep:bn+bn 4x64 (small) | 2000 | 0.50 | 0.20 |" in table
    assert "| sep:bn+bn 6x96 (large) | 2000 | 1.11 | 0.60 |" in table
    # a plain norm is the record's base size only: it never stands in for another size
    cost.write_text(json.dumps({"cpu_s_per_step": {"sep:bn+bn": 0.36}, "size": [4, 64, 128]}))
    with pytest.raises(ReportError, match="lack sep:bn\\+bn at 6x96x192"):
        write_report([small, large], tmp_path / "report", cost)
