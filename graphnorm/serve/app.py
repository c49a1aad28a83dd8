"""The FastAPI app of ``graphnorm serve``: one HTML page and a JSON API.

- ``GET /``: the page (paste SMILES or upload a file; table, drawings, CSV download).
- ``GET /health``: targets, columns, limits, number of models.
- ``POST /predict`` ``{"smiles": [...]}`` -> ``{"columns": [...], "rows": [{"smiles", <target>...,
  [<target>_std...], "error", "warning"}]}``, one row per SMILES in order.
- ``POST /upload`` (multipart, field ``file``, optional ``smiles_column``): the same for a
  .csv/.tsv/.smi/.txt/.sdf (or .gz) file, with ``row`` (``line N``) first.
- ``POST /draw`` ``{"smiles": [...], "target": optional}`` -> SVG drawings with atom attributions.

Too many SMILES or too large a body: HTTP 413; malformed requests and unreadable uploads: 422;
both with ``{"detail": message}``. A bad molecule is a row error, never a failed request.
Requests never name files or code: uploads are read from the request's bytes in memory.
"""
from typing import Optional  # no `from __future__ import annotations`: FastAPI reads the hints

import starlette.formparsers
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from .limits import BodyLimit
from .page import PAGE_HTML
from .service import PredictionService
from .upload import UploadError, read_upload

MULTIPART_OVERHEAD = 64 * 1024  # boundaries and headers around an upload of the full limit


class SmilesRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    smiles: list[Optional[str]]
    target: Optional[str] = None  # /draw only: which target's attributions


def create_app(service: PredictionService) -> BodyLimit:
    """The ASGI app (FastAPI inside the request-body cap) around a loaded model."""
    limits = service.limits
    max_body = limits.max_upload_bytes + MULTIPART_OVERHEAD
    # uploads stay in memory (Starlette spools a file part to a temporary file past 1 MiB);
    # BodyLimit bounds what that can take
    starlette.formparsers.MultiPartParser.spool_max_size = max_body

    app = FastAPI(title="graphnorm", summary="molecular property predictions",
                  docs_url="/docs", redoc_url=None)

    def check_count(n: int, cap: int, what: str) -> None:
        if n > cap:
            raise HTTPException(413, f"{n:,} SMILES in one request, the server takes at most "
                                     f"{cap:,} {what}; split the input")

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return PAGE_HTML

    @app.get("/health")
    def health() -> dict:
        return service.info()

    @app.post("/predict")
    async def predict(req: SmilesRequest) -> dict:
        check_count(len(req.smiles), limits.max_smiles, "per /predict")
        return await run_in_threadpool(service.predict, req.smiles)

    @app.post("/draw")
    async def draw(req: SmilesRequest) -> dict:
        check_count(len(req.smiles), limits.max_drawn, "per /draw")
        try:
            return await run_in_threadpool(service.draw, req.smiles, req.target)
        except ValueError as err:  # unknown target
            raise HTTPException(422, str(err)) from None

    @app.post("/upload")
    async def upload(request: Request) -> dict:
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            raise HTTPException(422, "send the file as multipart/form-data, field 'file'")
        form = await request.form(max_files=1, max_fields=4, max_part_size=64 * 1024)
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise HTTPException(422, "no file in the upload: send it in the form field 'file'")
        raw = await file.read()
        column = form.get("smiles_column")
        column = column.strip() if isinstance(column, str) and column.strip() else None
        try:
            table = read_upload(file.filename or "", raw, limits.max_upload_bytes, column)
        except UploadError as err:
            raise HTTPException(422, str(err)) from None
        check_count(len(table.smiles), limits.max_smiles, "per upload")
        return await run_in_threadpool(service.predict, table.smiles, table.labels, table.errors)

    return BodyLimit(app, max_body)
