"""``graphnorm serve --admet``: the ADMET panel's routes, alone and beside a trained model."""
import pytest
from starlette.testclient import TestClient

from tiny_checkpoint import write_checkpoint
from tiny_panel import make_tiny_panel


@pytest.fixture(scope="module")
def panel(tmp_path_factory):
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.serve.limits import Limits
    from graphnorm.serve.panel_service import PanelService

    out, _, _ = make_tiny_panel(tmp_path_factory.mktemp("panel"))
    # the tiny model shows no endpoint: serve them all
    return PanelService(AdmetPanel.load(out, all_endpoints=True), Limits(max_smiles=5, max_atoms=30),
                        slice_rows=2)


def test_the_panel_alone_answers_every_endpoint_per_molecule(panel):
    from graphnorm.serve.app import create_app

    with TestClient(create_app(None, panel), raise_server_exceptions=True) as client:
        assert "ADMET panel" in client.get("/").text and "ADMET panel" in client.get("/admet").text
        health = client.get("/health").json()
        assert health["admet_endpoints"] == len(panel.panel.entries) == 4
        endpoints = client.get("/admet/endpoints").json()
        assert {e["task"] for e in endpoints} == {"alpha/logS", "alpha/toxic", "beta/t1", "beta/t2"}
        big = "C" * 40
        r = client.post("/admet/predict", json={"smiles": ["CCO", "nonsense", None, big]})
        assert r.status_code == 200
        rows = r.json()["rows"]
        assert [row["smiles"] for row in rows] == ["CCO", "nonsense", "", big]
        assert rows[0]["error"] is None and 0 <= rows[0]["beta/t1"] <= 1
        lo, value, hi = (rows[0][f"alpha/logS{k}"] for k in ("_lo", "", "_hi"))
        # too few held-out rows for a 90 % interval: unbounded, sent as null
        assert value is not None and (lo, hi) == (None, None)
        assert isinstance(rows[0]["far_from_training"], bool)
        assert rows[1]["error"] and rows[1]["alpha/logS"] is None
        assert rows[2]["error"] and "40 atoms" in rows[3]["error"]  # over the atom limit
        assert client.post("/admet/predict", json={"smiles": ["C"] * 6}).status_code == 413
        assert client.post("/admet/predict", json={"smiles": ["C"], "target": "x"}).status_code == 422
        assert client.post("/predict", json={"smiles": ["CCO"]}).status_code in (404, 405)


def test_the_panel_beside_a_trained_model(panel, tmp_path):
    from graphnorm.inference.predict import load_predictor
    from graphnorm.serve.app import create_app
    from graphnorm.serve.service import PredictionService

    service = PredictionService(load_predictor(write_checkpoint(tmp_path / "best.ckpt")),
                                panel.limits)
    with TestClient(create_app(service, panel), raise_server_exceptions=True) as client:
        assert "targets" in client.get("/health").json()
        assert client.post("/predict", json={"smiles": ["CCO"]}).status_code == 200
        assert client.post("/admet/predict", json={"smiles": ["CCO"]}).json()["rows"][0]["error"] is None
    with pytest.raises(ValueError, match="--checkpoint"):
        create_app(None, None)


def test_the_panel_draws_the_atom_attributions_of_one_endpoint(panel):
    from graphnorm.serve.app import create_app
    from graphnorm.serve.page import COLOUR_NOTE

    with TestClient(create_app(None, panel), raise_server_exceptions=True) as client:
        page = client.get("/admet").text
        assert "/admet/draw" in page and COLOUR_NOTE in page
        big = "C" * 40
        r = client.post("/admet/draw", json={"smiles": ["c1ccccc1O", "nonsense", big],
                                             "target": "alpha/logS"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["target"] == "alpha/logS" and body["method"] == panel.method
        assert body["score"].startswith("change of the value")
        ok, bad, over = body["drawings"]
        assert ok["smiles"] == "c1ccccc1O" and ok["error"] is None and "<svg" in ok["svg"]
        assert bad["svg"] is None and "nonsense" in bad["error"]
        assert over["svg"] is None and "40 atoms" in over["error"]  # the server's atom limit
        binary = client.post("/admet/draw", json={"smiles": ["CCO"], "target": "beta/t1"}).json()
        assert "calibrated logit" in binary["score"] and "<svg" in binary["drawings"][0]["svg"]
        for target in ("nope/x", None):  # unknown, or none named
            r = client.post("/admet/draw", json={"smiles": ["CCO"], "target": target})
            assert r.status_code == 422 and "/admet/endpoints" in r.json()["detail"]
        too_many = ["C"] * (panel.limits.max_drawn + 1)
        r = client.post("/admet/draw", json={"smiles": too_many, "target": "alpha/logS"})
        assert r.status_code == 413 and "/admet/draw" in r.json()["detail"]
        declared = client.get("/openapi.json").json()["paths"]["/admet/draw"]["post"]["responses"]
        assert {"200", "400", "408", "413", "415", "422"} <= set(declared)


def test_a_hidden_endpoint_is_not_drawn(panel, tmp_path):
    import json
    import shutil

    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.serve.app import create_app
    from graphnorm.serve.panel_service import PanelService

    folder = tmp_path / "run"
    shutil.copytree(panel.panel.loaded.path.parent, folder)
    record = json.loads((folder / "panel.json").read_text())
    for e in record["endpoints"]:
        e["shown"] = e["task"] == "alpha/logS"
    (folder / "panel.json").write_text(json.dumps(record))
    shown = PanelService(AdmetPanel.load(folder), panel.limits)
    with TestClient(create_app(None, shown), raise_server_exceptions=True) as client:
        assert client.post("/admet/draw", json={"smiles": ["CCO"], "target": "alpha/logS"}
                           ).status_code == 200
        r = client.post("/admet/draw", json={"smiles": ["CCO"], "target": "beta/t1"})
        assert r.status_code == 422 and "did not hold up" in r.json()["detail"]


def test_the_shipped_panel_serves_its_booster_endpoints_with_their_attributions():
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.serve.app import create_app
    from graphnorm.serve.limits import Limits
    from graphnorm.serve.panel_service import PanelService

    service = PanelService(AdmetPanel.load(), Limits(max_smiles=5, max_atoms=60))
    with TestClient(create_app(None, service), raise_server_exceptions=True) as client:
        endpoints = client.get("/admet/endpoints").json()
        boosted = [e["task"] for e in endpoints if e["predictor"] == "booster"]
        assert boosted and any(e["predictor"] == "head" for e in endpoints)
        r = client.post("/admet/draw", json={"smiles": ["CC(=O)Oc1ccccc1C(=O)O"],
                                             "target": boosted[0]})
        assert r.status_code == 200
        body = r.json()
        assert body["method"] == "treeshap" and body["drawings"][0]["svg"].startswith("<?xml")
