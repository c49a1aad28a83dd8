"""The cost curve of pre-training runs (graphnorm/pretrain/report.py)."""
import json

import pytest

from graphnorm.pretrain.report import ReportError, write_report


def _run(folder, norm, cpu_per_step):
    folder.mkdir()
    (folder / "pretrain.json").write_text(json.dumps({"norm": norm, "num_layers": 4, "hidden": 64}))
    records = [{"step": s, "seen": 128 * s, "cpu_s": cpu_per_step * s, "val_loss": 1 / s,
                "val_auroc": 0.6, "val_r2": 0.1, "probe": 0.5} for s in (1000, 2000)]
    (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_runs_are_put_on_the_measured_clock(tmp_path):
    a = _run(tmp_path / "a", "sep:bn+bn", 0.9)  # logged in a busy session
    b = _run(tmp_path / "b", "ln", 0.3)
    cost = tmp_path / "step_cost.json"
    cost.write_text(json.dumps({"cpu_s_per_step": {"sep:bn+bn": 0.36, "ln": 0.30}}))
    out = write_report([a, b], tmp_path / "report", cost)
    table = out["table"].read_text()
    # 2,000 steps: 0.50 logged CPU-h for a, 0.20 at the measured 0.36 CPU-s per step
    assert "| sep:bn+bn 4x64 (a) | 2000 | 0.50 | 0.20 |" in table
    assert "| ln 4x64 (b) | 2000 | 0.17 | 0.17 |" in table
    assert out["figure"].stat().st_size > 0
    plain = write_report([a], tmp_path / "plain")["table"].read_text()
    assert "| sep:bn+bn 4x64 (a) | 2000 | 0.50 |  |" in plain
    cost.write_text(json.dumps({"cpu_s_per_step": {"ln": 0.3}}))
    with pytest.raises(ReportError, match="lack sep:bn\\+bn"):
        write_report([a, b], tmp_path / "report", cost)
    with pytest.raises(ReportError, match="not a pre-training run"):
        write_report([tmp_path], tmp_path / "report")
