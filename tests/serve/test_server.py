"""`graphnorm serve` as a live process on a free port, spoken to over real HTTP (urllib)."""
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest

from tiny_checkpoint import write_ensemble

pytestmark = pytest.mark.slow  # a live `graphnorm serve` process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_and_log(tmp_path_factory):
    """(URL, path of the server's log: its stdout and stderr) of a live `graphnorm serve`."""
    folder = tmp_path_factory.mktemp("serve")
    ens = write_ensemble(folder / "ens", members=2)
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    log_path = folder / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "graphnorm.cli", "serve", "--checkpoint",
                                 str(ens), "--port", str(port), "--max-upload-mb", "1",
                                 "--max-atoms", "30", "--max-drawn", "5", "--body-seconds", "2"],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/health", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"server did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.2)
    yield url, log_path
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def server(server_and_log):
    return server_and_log[0]


def call(url, path, data=None, content_type="application/json"):
    """(status, parsed JSON or text) of a GET (data None) or POST."""
    body = json.dumps(data).encode() if isinstance(data, (dict, list)) else data
    req = urllib.request.Request(url + path, data=body,
                                 headers={"Content-Type": content_type} if body is not None else {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            status, raw, kind = r.status, r.read(), r.headers.get("content-type", "")
    except urllib.error.HTTPError as err:
        status, raw, kind = err.code, err.read(), err.headers.get("content-type", "")
    return status, (json.loads(raw) if "json" in kind else raw.decode())


def upload(url, name: str, content: bytes, path="/upload"):
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + \
        f"\r\n--{boundary}--\r\n".encode()
    return call(url, path, body, f"multipart/form-data; boundary={boundary}")


def test_page_and_health(server):
    status, html = call(server, "/")
    assert status == 200 and "<textarea" in html and "/predict" in html
    status, info = call(server, "/health")
    assert status == 200 and info["models"] == 2 and info["targets"] == ["logp"]
    assert info["limits"]["max_atoms"] == 30


def test_predict_valid_invalid_and_empty(server):
    status, out = call(server, "/predict", {"smiles": ["CCO", "not-a-smiles", "", "c1ccccc1O",
                                                        "C" * 31]})
    assert status == 200
    assert out["columns"] == ["smiles", "prediction", "prediction_std", "error", "warning"]
    rows = out["rows"]
    assert [r["smiles"] for r in rows][:2] == ["CCO", "not-a-smiles"]
    assert rows[0]["error"] is None and rows[0]["prediction_std"] > 0
    assert "cannot parse" in rows[1]["error"] and rows[1]["prediction"] is None
    assert "empty SMILES" in rows[2]["error"]
    assert "31 atoms, more than the server's limit of 30" in rows[4]["error"]
    assert call(server, "/predict", {"smiles": []}) == (200, {"columns": out["columns"], "rows": []})


def test_ten_thousand_smiles_and_too_many(server):
    smiles = ["CCO", "c1ccccc1", "CC(=O)N", "CCCl"] * 2500
    start = time.time()
    status, out = call(server, "/predict", {"smiles": smiles})
    assert status == 200 and len(out["rows"]) == 10_000, out
    assert all(r["error"] is None for r in out["rows"]) and time.time() - start < 60
    status, out = call(server, "/predict", {"smiles": smiles + ["C"]})
    assert status == 413 and "10,001 SMILES" in out["detail"] and "at most 10,000" in out["detail"]


def test_malformed_requests_get_422_and_large_bodies_413(server):
    assert call(server, "/predict", b"{not json")[0] == 422
    assert call(server, "/predict", {"smiles": "CCO"})[0] == 422  # a string, not a list
    assert call(server, "/predict", {"smile": ["CCO"]})[0] == 422
    status, out = call(server, "/predict", {"smiles": ["C" * 1000] * 1300})  # 1.3 MB
    assert status == 413 and "request body too large" in out["detail"]
    status, out = call(server, "/upload", {"smiles": ["CCO"]})
    assert status == 415 and "multipart/form-data" in out["detail"]


def test_random_bytes_get_415_and_stay_out_of_the_log(server_and_log):
    server, log_path = server_and_log
    body = random.Random(1).randbytes(20_000)
    for _ in range(3):
        status, out = call(server, "/predict", body, "application/octet-stream")
        assert status == 415 and "application/json" in out["detail"]
    status, out = call(server, "/predict", body)  # the same bytes declared as JSON
    assert status == 400 and "not JSON text" in out["detail"]
    log = log_path.read_text(errors="replace")
    assert "Traceback" not in log and "ERROR" not in log and len(log) < 2000, log[-2000:]


def test_a_body_that_stops_coming_gets_408(server):
    """Headers promise 100 bytes, 12 come, then nothing: 408 after --body-seconds (2 s)."""
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        start = time.time()
        conn.sendall(b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n" + b'{"smiles": [')
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = conn.recv(4096)
            if not chunk:
                break
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and 1.5 < time.time() - start < 8
    assert "did not arrive within 2 s (12 bytes came)" in json.loads(body)["detail"]


def test_upload_csv_non_utf8_and_empty(server):
    status, out = upload(server, "mols.csv", b"id,smiles\na,CCO\nb,C\xe9C\nc,xx\nd,CN\n")
    assert status == 200 and out["columns"][0] == "row"
    rows = out["rows"]
    assert [r["row"] for r in rows] == ["line 2", "line 3", "line 4", "line 5"]
    assert rows[0]["error"] is None and rows[3]["error"] is None
    assert rows[1]["error"].startswith("UnicodeDecodeError: line 3 is not valid UTF-8")
    assert "cannot parse" in rows[2]["error"]
    status, out = upload(server, "mols.csv", b"")
    assert status == 422 and "empty" in out["detail"]
    status, out = upload(server, "mols.xlsx", b"PK\x03\x04")
    assert status == 422 and ".csv" in out["detail"]
    status, out = upload(server, "big.smi", b"CCO\n" * 300_000)  # 1.2 MB
    assert status == 413


def test_draw_and_still_serving(server):
    status, out = call(server, "/draw", {"smiles": ["CCO", "xx"]})
    assert status == 200 and out["method"] == "occlusion" and out["target"] == "logp"
    assert "<svg" in out["drawings"][0]["svg"] and out["drawings"][1]["svg"] is None
    assert "cannot parse" in out["drawings"][1]["error"]
    assert call(server, "/draw", {"smiles": ["C"] * 6})[0] == 413
    status, out = call(server, "/draw", {"smiles": ["CCO"], "target": "nope"})
    assert status == 422 and "unknown target" in out["detail"]
    assert call(server, "/health")[0] == 200
