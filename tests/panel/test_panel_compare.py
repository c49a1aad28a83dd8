"""Backbones compared endpoint by endpoint on the held-out halves
(graphnorm/panel/compare.py, ``graphnorm panel compare``)."""
import json
import shutil

import numpy as np
import pytest

from graphnorm.panel import compare as C
from tiny_panel import make_tiny_panel


def test_runs_are_compared_on_the_reference_splits_or_refused(tmp_path, monkeypatch):
    out, run, panel = make_tiny_panel(tmp_path)
    # the tiny panel judges nothing (22 molecules): mark the regression endpoints with labels
    # on both halves as judged, so the comparison has endpoints to score
    for e in panel["endpoints"]:
        e["judged"] = e["kind"] == "regression" and e["n"] >= 2 and e["n_select"] >= 2
    assert any(e["judged"] for e in panel["endpoints"])
    (out / "panel.json").write_text(json.dumps(panel))
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    from graphnorm.pretrain import setup

    monkeypatch.setattr(setup, "PretrainRun", lambda *a, **k: run)  # the run made above
    path = C.write_comparison([out, twin], tmp_path / "cmp", progress=False)
    rows = [json.loads(line) for line in (path.parent / "compare.jsonl").read_text().splitlines()]
    assert len(rows) == sum(e["judged"] for e in panel["endpoints"])
    for r in rows:  # the same model: the same scores, every verdict tied
        assert r["twin_S"] == r["run_S"] and r["twin_R_verdict"] == "tied"
    assert "| `twin` | S | 0 | 0 |" in path.read_text()
    assert "gbm" not in path.read_text()  # the reference has no versus_gbm.jsonl
    # with the reference's one-gbm-per-endpoint scores, each backbone's R is set against them
    r0 = rows[0]
    (out / "versus_gbm.jsonl").write_text(json.dumps({"task": r0["task"],
                                                      "single_table": r0["run_R"] - 0.5}) + "\n")
    text = C.write_comparison([out, twin], tmp_path / "cmp", progress=False).read_text()
    assert f"1 of {len(rows)} endpoints" in text
    assert "| `run` | 1 of 1 | +0.5000 |" in text and "| `twin` | 1 of 1 | +0.5000 |" in text
    other = tmp_path / "other"
    shutil.copytree(out, other)
    spec = json.loads((other / "pretrain.json").read_text())
    (other / "pretrain.json").write_text(json.dumps(dict(spec, seed=1)))
    with pytest.raises(ValueError, match="other splits"):
        C.write_comparison([out, other], tmp_path / "cmp2", progress=False)


def test_a_backbone_of_other_featurized_data_is_aligned_to_the_reference_molecules():
    rows = np.array([5, 7, 9])
    held = {"rows": np.array([9, 5, 7, 11]), "pred": np.array([[0.9], [0.5], [0.7], [1.1]])}
    aligned = C._aligned(held, rows, "desc")
    assert aligned["rows"].tolist() == [5, 7, 9] and aligned["pred"][:, 0].tolist() == [0.5, 0.7, 0.9]
    with pytest.raises(ValueError, match="1 of the reference's held-out molecules"):
        C._aligned({"rows": np.array([5, 7]), "pred": np.zeros((2, 1))}, rows, "desc")
