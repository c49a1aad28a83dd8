"""Malformed bodies get a 4xx with a JSON ``detail`` and leave at most a short escaped prefix
in the log (in process: the app through Starlette's test client, and the body caps alone)."""
import asyncio
import json
import logging
import random

import pytest
from starlette.testclient import TestClient

from tiny_checkpoint import write_checkpoint

BODY = random.Random(0).randbytes(5000)  # not UTF-8: 0x80.. bytes everywhere


@pytest.fixture(scope="module")
def predictor(tmp_path_factory):
    from graphnorm.inference.predict import load_predictor

    return load_predictor(write_checkpoint(tmp_path_factory.mktemp("bad") / "best.ckpt"))


def app_client(predictor, **limits):
    from graphnorm.serve.app import create_app
    from graphnorm.serve.limits import Limits
    from graphnorm.serve.service import PredictionService

    app = create_app(PredictionService(predictor, Limits(**limits)))
    return TestClient(app, raise_server_exceptions=True)  # a server error fails the test


@pytest.fixture(scope="module")
def client(predictor):
    with app_client(predictor, max_upload_bytes=200_000, max_drawn=2) as c:
        yield c


def post(client, path, body, content_type="application/json"):
    headers = {"content-type": content_type} if content_type else {}
    r = client.post(path, content=body, headers=headers)
    assert r.headers["content-type"] == "application/json", r.text[:200]
    return r.status_code, r.json()["detail"]


def assert_log_holds_at_most_a_prefix(caplog, body: bytes):
    text = caplog.text
    assert caplog.records and all(r.levelno < logging.WARNING for r in caplog.records)
    assert repr(body[70:90])[2:-1] not in text  # bytes past the prefix are not logged
    assert body[:20].decode("latin-1") not in text  # nor raw, unescaped bytes
    assert max(len(r.getMessage()) for r in caplog.records) < 400


@pytest.mark.parametrize("path", ["/predict", "/draw"])
def test_random_bytes_as_octet_stream_get_415(client, caplog, path):
    caplog.set_level(logging.INFO)
    status, detail = post(client, path, BODY, "application/octet-stream")
    assert status == 415 and "application/json" in detail and "5,000 bytes" in detail
    assert len(detail) < 300 and repr(BODY[:8])[2:-1] in detail  # an escaped prefix only
    assert_log_holds_at_most_a_prefix(caplog, BODY)


def test_random_bytes_as_json_and_non_utf8_get_400(client, caplog):
    caplog.set_level(logging.INFO)
    status, detail = post(client, "/predict", BODY)
    assert status == 400 and "not JSON text" in detail
    status, detail = post(client, "/predict", '{"smiles": ["CCé"]}'.encode("latin-1"))
    assert status == 400 and "does not decode as utf-8 at byte 15" in detail
    assert_log_holds_at_most_a_prefix(caplog, BODY)


@pytest.mark.parametrize("body,where", [
    ({"smiles": "CCO"}, ["body", "smiles"]),  # a string, not a list
    ({"smiles": [1, "C"]}, ["body", "smiles", 0]),
    ({"smile": ["CCO"]}, ["body", "smiles"]),
    ({"smiles": ["C"], "target": 3}, ["body", "target"]),
    (["CCO"], ["body"]),
    ("CCO", ["body"]),
    (None, ["body"]),
])
def test_wrong_types_get_422_with_where(client, body, where):
    status, detail = post(client, "/predict", json.dumps(body).encode())
    assert status == 422 and where in [issue["loc"] for issue in detail]
    assert all(set(issue) == {"type", "loc", "msg", "input"} for issue in detail)


def test_a_json_syntax_error_says_where_and_why(client):
    status, detail = post(client, "/predict", b'{"smiles": [CCO]}')
    assert status == 422 and detail[0]["loc"] == ["body", 12] and detail[0]["input"] is None
    assert detail[0]["msg"] == "JSON decode error: Expecting value"


def test_long_wrong_values_come_back_as_a_short_prefix(client, caplog):
    caplog.set_level(logging.INFO)
    long_text = "C" * 100 + "X" * 100_000
    status, detail = post(client, "/predict", json.dumps({"smiles": long_text}).encode())
    assert status == 422 and len(detail[0]["input"]) < 120 and "X" * 90 not in detail[0]["input"]
    assert "X" * 90 not in caplog.text


@pytest.mark.parametrize("body,content_type", [(b"", "application/json"), (b"", None),
                                               (b"   ", "application/json")])
def test_empty_bodies_get_4xx(client, body, content_type):
    status, detail = post(client, "/predict", body, content_type)
    assert 400 <= status < 500 and detail


@pytest.mark.parametrize("body", [b'{"smiles": NaN}', b'{"smiles": ["C"], "target": Infinity}',
                                  b'{"smiles": ["\\ud800C"]}', b"[" * 50_000, b'{"smiles": [' +
                                  b'"C",' * 20_000 + b'"C"]}', b'{"smiles": ["C"]} trailing'])
def test_odd_json_gets_4xx(client, body):
    status, detail = post(client, "/predict", body)
    assert 400 <= status < 500 and detail


def test_text_plain_json_and_wrong_upload_type_get_415(client):
    status, detail = post(client, "/predict", b'{"smiles": ["C"]}', "text/plain")
    assert status == 415
    status, detail = post(client, "/upload", b'{"smiles": ["C"]}')
    assert status == 415 and "multipart/form-data" in detail
    status, detail = post(client, "/upload", b"--x\r\nbroken", "multipart/form-data; boundary=x")
    assert 400 <= status < 500


def test_chunked_body_over_the_limit_gets_413(client):
    def chunks():  # no Content-Length: the cap sees the body pass the limit while reading
        yield b'{"smiles": ["'
        for _ in range(300):
            yield b"C" * 1000
        yield b'"]}'

    for path in ("/predict", "/upload"):
        status, detail = post(client, path, chunks(), "application/json" if path == "/predict"
                              else "multipart/form-data; boundary=x")
        assert status == 413 and "request body too large" in detail


def test_the_schema_declares_every_4xx(client):
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/predict", "/draw", "/upload"):
        assert {"200", "400", "408", "413", "415", "422"} <= set(paths[path]["post"]["responses"])


def test_a_slow_body_gets_408():
    """The body caps alone, around an app that reads its body: a client that stops sending
    halfway is answered 408 once the time limit passes, not waited for."""
    from graphnorm.serve.limits import BodyLimit

    async def app(scope, receive, send):
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive():
        if not sent_parts:
            sent_parts.append(1)
            return {"type": "http.request", "body": b'{"smiles": [', "more_body": True}
        await asyncio.sleep(60)  # the rest never comes

    sent_parts, answers = [], []

    async def send(message):
        answers.append(message)

    async def run():
        await asyncio.wait_for(BodyLimit(app, 1000, max_seconds=0.2)(
            {"type": "http", "headers": []}, receive, send), timeout=5)

    asyncio.run(run())
    assert answers[0]["status"] == 408 and (b"connection", b"close") in answers[0]["headers"]
    assert "did not arrive within 0.2 s (12 bytes came)" in json.loads(answers[1]["body"])["detail"]
