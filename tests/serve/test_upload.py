"""Uploads read from bytes, and the service's per-row limits and slices (no server)."""
import gzip

import pytest

from graphnorm.serve.limits import Limits
from graphnorm.serve.upload import UploadError, read_upload

LIMIT = 1 << 20


def test_csv_smi_sdf():
    up = read_upload("m.csv", b"id,SMILES\na,CCO\nb,c1ccccc1\n", LIMIT)
    assert up.smiles == ["CCO", "c1ccccc1"] and up.labels == ["line 2", "line 3"]
    up = read_upload("m.smi", b"CCO ethanol\nCN\n\n", LIMIT)
    assert up.smiles == ["CCO", "CN"] and up.labels == ["line 1", "line 2"]
    up = read_upload("m.txt", b"smiles name\nCCO x\n", LIMIT)
    assert up.smiles == ["CCO"] and up.labels == ["line 2"]
    up = read_upload("m.tsv", b"name\tsmi\nx\tCCO\n", LIMIT, smiles_column="smi")
    assert up.smiles == ["CCO"]
    from rdkit import Chem

    sdf = Chem.MolToMolBlock(Chem.MolFromSmiles("CCO")) + "$$$$\n" + "garbage\n$$$$\n"
    up = read_upload("m.sdf", sdf.encode(), LIMIT)
    assert up.smiles[0] == "CCO" and up.labels == ["record 1", "record 2"]
    assert "cannot read" in up.errors[1]


def test_non_utf8_lines_become_row_errors():
    up = read_upload("m.csv", b"smiles\nCCO\nC\xff\xfeC\nCN\n", LIMIT)
    assert up.errors[0] == "" and up.errors[2] == ""
    assert up.errors[1].startswith("UnicodeDecodeError: line 3 is not valid UTF-8 (byte 0xff")


@pytest.mark.parametrize("name,body,reason", [
    ("m.csv", b"", "empty"),
    ("m.smi", b"\n\n", "empty"),
    ("m.csv", b"smiles\n", "header but no molecules"),
    ("m.csv", b"a,b\n1,2\n", "no 'smiles' column"),
    ("m.exe", b"CCO", "name the file"),
    ("m.csv.gz", b"not gzip", "not a readable gzip"),
])
def test_unreadable_uploads_are_refused_with_reasons(name, body, reason):
    with pytest.raises(UploadError, match=reason):
        read_upload(name, body, LIMIT)


def test_gzip_is_decompressed_within_the_limit():
    assert read_upload("m.smi.gz", gzip.compress(b"CCO\nCN\n"), LIMIT).smiles == ["CCO", "CN"]
    bomb = gzip.compress(b"C" * (LIMIT + 10))  # ~1 kB that inflates past the limit
    assert len(bomb) < 10_000
    with pytest.raises(UploadError, match="decompresses to more than"):
        read_upload("m.smi.gz", bomb, LIMIT)


def test_limits_are_checked():
    with pytest.raises(ValueError, match="max_atoms must be a positive integer"):
        Limits(max_atoms=0)


def test_service_screens_rows_and_holds_one_slice(tmp_path, monkeypatch):
    from graphnorm.inference.predict import load_predictor
    from graphnorm.serve.service import PredictionService
    from tiny_checkpoint import write_checkpoint

    predictor = load_predictor(write_checkpoint(tmp_path / "best.ckpt"))
    service = PredictionService(predictor, Limits(max_atoms=12, max_smiles_chars=50),
                                slice_rows=100)
    sizes = []
    featurize = predictor.featurize
    monkeypatch.setattr(predictor, "featurize",
                        lambda s, e=None: sizes.append(len(s)) or featurize(s, e))
    smiles = ["CCO", "C" * 13, "C" * 60, "xx"] * 100
    out = service.predict(smiles)
    assert max(sizes) == 100 and sum(sizes) == 400  # one slice of slice_rows at a time
    rows = out["rows"]
    assert out["columns"] == ["smiles", "prediction", "error", "warning"]
    assert rows[0]["error"] is None and isinstance(rows[0]["prediction"], float)
    assert "13 atoms, more than the server's limit of 12" in rows[1]["error"]
    assert "60 characters" in rows[2]["error"] and "cannot parse" in rows[3]["error"]
    assert rows[1]["prediction"] is None


@pytest.mark.parametrize("chunked", [False, True])
def test_body_limit_answers_413_after_draining(chunked):
    """Over the limit by Content-Length or by the streamed body: 413 with a JSON detail; the
    app never sees the whole body, and a finished body is not waited for again."""
    import asyncio
    import json

    from graphnorm.serve.limits import BodyLimit

    seen = []

    async def app(scope, receive, send):
        while True:
            message = await receive()
            seen.append(len(message["body"]))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    chunks = [b"x" * 400] * 3  # 1,200 bytes against a limit of 1,000
    queue = [{"type": "http.request", "body": c, "more_body": k < 2} for k, c in enumerate(chunks)]

    async def receive():
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    sent = []

    async def send(message):
        sent.append(message)

    headers = [] if chunked else [(b"content-length", b"1200")]
    asyncio.run(BodyLimit(app, 1000)({"type": "http", "headers": headers}, receive, send))
    assert sent[0]["status"] == 413 and not queue  # every chunk read, none left waiting
    assert "at most 1,000 bytes" in json.loads(sent[1]["body"])["detail"]
    assert sum(seen) <= 1200 and (seen == [] if not chunked else len(seen) == 2)
