"""The panel file as typed records: a byte-for-byte round trip, and files that are not a
panel named with what is wrong."""
import json
from pathlib import Path

import pytest

from graphnorm.panel import PANEL_FILE, Endpoint, Panel, PanelFileError

SHIPPED = Path(__file__).resolve().parents[2] / "graphnorm" / "pretrained" / "admet" / PANEL_FILE


def _endpoint(**changes) -> dict:
    e = {"task": "c/logS", "kind": "regression", "units": "log mol/L", "n_select": 60, "n": 55,
         "judged": True, "metric": "r2", "score_select": 0.5, "score": 0.45, "halfwidth": 1.2,
         "shown": True}
    e.update(changes)
    return e


def _panel(endpoints) -> dict:
    return {"checkpoint_sha256": "a" * 64, "corpus_sha256": "b" * 64, "held_out_molecules": 120,
            "selection_molecules": 60, "rule": "RULE.md, C", "thresholds": {"r2": 0.3},
            "shown": 1, "domain": {"centroids": [[0.0, 1.0]], "threshold": 2.5},
            "endpoints": endpoints}


def test_the_shipped_panel_reads_and_writes_back_byte_for_byte(tmp_path):
    panel = Panel.read(SHIPPED)
    assert panel.shown == sum(e.shown for e in panel.endpoints) > 0
    boosted = [e for e in panel.endpoints if e.by_booster]
    assert boosted and all(e.head is not None for e in boosted)
    assert panel.write(tmp_path).read_bytes() == SHIPPED.read_bytes()


def test_each_kind_writes_its_own_fields_in_the_files_order():
    reg = Endpoint.from_dict(_endpoint())
    assert list(reg.to_dict())[-2:] == ["halfwidth", "shown"] and not reg.binary
    binary = Endpoint.from_dict(_endpoint(kind="binary", metric="rocauc", halfwidth=None,
                                          ece_uncalibrated=0.1, ece=0.05, platt=[0.9, 0.1]))
    d = binary.to_dict()
    assert "halfwidth" not in d and d["platt"] == [0.9, 0.1] and binary.platt_scale == (0.9, 0.1)
    raw = Endpoint.from_dict(_endpoint(kind="binary", metric="rocauc", halfwidth=None))
    assert raw.platt_scale == (1.0, 0.0) and "platt" not in raw.to_dict()


def test_a_file_that_is_not_a_panel_is_named_with_what_is_wrong(tmp_path):
    path = tmp_path / PANEL_FILE
    with pytest.raises(PanelFileError, match="no such panel file"):
        Panel.read(tmp_path)
    path.write_text("{")
    with pytest.raises(PanelFileError, match=str(path)):
        Panel.read(path)
    path.write_text(json.dumps(_panel([_endpoint(colour="red")])))
    with pytest.raises(PanelFileError, match="'c/logS': unknown \\['colour'\\]"):
        Panel.read(path)
    bad = _endpoint()
    del bad["score"]
    path.write_text(json.dumps(_panel([bad])))
    with pytest.raises(PanelFileError, match="missing \\['score'\\]"):
        Panel.read(path)
    no_domain = _panel([_endpoint()])
    del no_domain["domain"]
    path.write_text(json.dumps(no_domain))
    with pytest.raises(PanelFileError, match="not a panel .*domain"):
        Panel.read(path)


def test_lookups_and_a_replaced_panel():
    panel = Panel.from_dict(_panel([_endpoint(), _endpoint(task="c/b", shown=False,
                                                           readout="booster")]))
    assert panel.endpoint("c/b").by_booster and panel.endpoint("c/none") is None
    assert panel.booster_tasks() == ["c/b"] and [e.task for e in panel.shown_endpoints()] == ["c/logS"]
    assert panel.replace(endpoints=panel.endpoints[:1]).to_dict()["shown"] == 1
    assert panel.domain.distance(panel.domain.array()).tolist() == [0.0]
