"""The FastAPI app of ``graphnorm serve``: one HTML page and a JSON API.

- ``GET /``: the page (paste SMILES or upload a file; table, drawings, CSV download).
- ``GET /health``: targets, columns, limits, number of models.
- ``POST /predict`` ``{"smiles": [...]}`` -> ``{"columns": [...], "rows": [{"smiles", <target>...,
  [<target>_std...], "error", "warning"}]}``, one row per SMILES in order.
- ``POST /upload`` (multipart, field ``file``, optional ``smiles_column``): the same for a
  .csv/.tsv/.smi/.txt/.sdf (or .gz) file, with ``row`` (``line N``) first.
- ``POST /draw`` ``{"smiles": [...], "target": optional}`` -> SVG drawings with atom attributions.
- with ``--admet FOLDER`` (panel_service.py): ``GET /admet`` the panel's page, ``GET
  /admet/endpoints`` its endpoints (units, held-out scores), ``POST /admet/predict``
  ``{"smiles": [...]}`` -> ``{"columns", "rows"}``, every endpoint per molecule, ``POST
  /admet/draw`` ``{"smiles": [...], "target": endpoint}`` -> SVG drawings with the atom
  attributions of that endpoint (422: an endpoint the panel does not show). Served alone
  (no ``--checkpoint``), ``/`` is the panel's page and ``/health`` describes the panel.

Every request the server cannot take gets a 4xx with ``{"detail": ...}`` (errors.py): 400 a
body that cannot be parsed, 408 a body too slow, 413 too many SMILES or too large a body, 415
a body not sent as the operation reads it, 422 valid JSON that is not a valid request or an
unreadable upload. A bad molecule is a row error, never a failed request. Requests never name
files or code: uploads are read from the request's bytes in memory.
"""
# no `from __future__ import annotations`: FastAPI reads the hints
from typing import Optional, Union

import starlette.formparsers
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, field_validator
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from graphnorm.inference.admet_panel import PanelError

from .errors import error_responses, install_error_handlers
from .limits import BodyLimit
from .page import PAGE_HTML
from .panel_page import PANEL_HTML
from .panel_service import PanelService
from .service import PredictionService
from .upload import UploadError, read_upload

MULTIPART_OVERHEAD = 64 * 1024  # boundaries and headers around an upload of the full limit


class SmilesRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    smiles: list[Optional[str]]
    target: Optional[str] = None  # /draw: which target's attributions; /admet/draw: endpoint

    @field_validator("smiles")
    @classmethod
    def encodable(cls, smiles: list) -> list:
        # JSON may carry lone surrogates ("\ud800"): no UTF-8 text, so neither RDKit nor
        # the response could take them
        for i, s in enumerate(smiles):
            if s is not None and not s.isascii():
                try:
                    s.encode("utf-8")
                except UnicodeEncodeError as err:
                    raise ValueError(f"smiles[{i}] holds a lone surrogate at position "
                                     f"{err.start}: not valid Unicode text") from None
        return smiles


class PredictResponse(BaseModel):
    columns: list[str]
    rows: list[dict[str, Union[float, str, None]]]  # keys: the columns


class Drawing(BaseModel):
    smiles: str
    svg: Optional[str]
    error: Optional[str]


class DrawResponse(BaseModel):
    method: str
    target: str
    drawings: list[Drawing]


class PanelHealth(BaseModel):
    status: str
    admet_endpoints: int
    limits: dict[str, int]


class HealthResponse(BaseModel):
    status: str
    targets: list[str]
    columns: list[str]
    task: str
    models: int
    attribution_method: Optional[str]
    attribution_note: Optional[str]
    limits: dict[str, int]


UPLOAD_BODY = {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["file"],
    "properties": {"file": {"type": "string", "format": "binary",
                            "description": ".csv, .tsv, .smi, .txt or .sdf, optionally .gz"},
                   "smiles_column": {"type": "string"}}}}}}


def create_app(service: Optional[PredictionService] = None,
               panel: Optional[PanelService] = None) -> BodyLimit:
    """The ASGI app (FastAPI inside the request-body caps) around a loaded model, an ADMET
    panel, or both (they then share the limits and the model's turns)."""
    if service is None and panel is None:
        raise ValueError("serve a model (--checkpoint), an ADMET panel (--admet), or both")
    limits = (service or panel).limits
    max_body = limits.max_upload_bytes + MULTIPART_OVERHEAD
    # uploads stay in memory (Starlette spools a file part to a temporary file past 1 MiB);
    # BodyLimit bounds what that can take
    starlette.formparsers.MultiPartParser.spool_max_size = max_body

    app = FastAPI(title="graphnorm", summary="molecular property predictions",
                  docs_url="/docs", redoc_url=None)
    install_error_handlers(app)

    def check_count(n: int, cap: int, what: str) -> None:
        if n > cap:
            raise HTTPException(413, f"{n:,} SMILES in one request, the server takes at most "
                                     f"{cap:,} {what}; split the input")

    if panel is not None:
        add_panel_routes(app, panel, check_count)
    if service is None:
        @app.get("/", response_class=HTMLResponse)
        def panel_home() -> str:
            return PANEL_HTML

        @app.get("/health")
        def panel_health() -> PanelHealth:
            return {"status": "ok", "admet_endpoints": len(panel.panel.entries),
                    "limits": limits.to_dict()}

        return BodyLimit(app, max_body, limits.body_seconds)

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return PAGE_HTML

    @app.get("/health")
    def health() -> HealthResponse:
        return service.info()

    @app.post("/predict", responses=error_responses(400, 408, 413, 415, 422))
    async def predict(req: SmilesRequest) -> PredictResponse:
        check_count(len(req.smiles), limits.max_smiles, "per /predict")
        return await run_in_threadpool(service.predict, req.smiles)

    @app.post("/draw", responses=error_responses(400, 408, 413, 415, 422))
    async def draw(req: SmilesRequest) -> DrawResponse:
        check_count(len(req.smiles), limits.max_drawn, "per /draw")
        try:
            return await run_in_threadpool(service.draw, req.smiles, req.target)
        except ValueError as err:  # unknown target
            raise HTTPException(422, str(err)) from None

    @app.post("/upload", openapi_extra={"requestBody": UPLOAD_BODY},
              responses={200: {"model": PredictResponse},
                         **error_responses(400, 408, 413, 415, 422)})
    async def upload(request: Request) -> PredictResponse:
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            raise HTTPException(415, "send the file as multipart/form-data, field 'file'")
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

    return BodyLimit(app, max_body, limits.body_seconds)


class PanelEndpoint(BaseModel):
    task: str
    kind: str
    units: Optional[str]
    metric: Optional[str]
    score: Optional[float]
    n: Optional[int]
    halfwidth: Optional[float]
    ece: Optional[float]
    predictor: str  # "head" (the network), or "booster": a one-table booster beat it there


class PanelResponse(BaseModel):
    columns: list[str]
    rows: list[dict[str, Union[float, bool, str, None]]]


class PanelDrawResponse(DrawResponse):
    score: str  # what an atom's score is (explain_endpoint): a change of what, in which units


def add_panel_routes(app: FastAPI, panel: PanelService, check_count) -> None:
    """``/admet``, ``/admet/endpoints``, ``/admet/predict`` and ``/admet/draw`` (module
    docstring)."""

    @app.get("/admet", response_class=HTMLResponse)
    def panel_page() -> str:
        return PANEL_HTML

    @app.get("/admet/endpoints")
    def panel_endpoints() -> list[PanelEndpoint]:
        return panel.endpoints()

    @app.post("/admet/predict", responses=error_responses(400, 408, 413, 415, 422))
    async def panel_predict(req: SmilesRequest) -> PanelResponse:
        check_count(len(req.smiles), panel.limits.max_smiles, "per /admet/predict")
        if req.target is not None:
            raise HTTPException(422, "/admet/predict takes no target: it predicts every endpoint")
        return await run_in_threadpool(panel.predict, req.smiles)

    @app.post("/admet/draw", responses=error_responses(400, 408, 413, 415, 422))
    async def panel_draw(req: SmilesRequest) -> PanelDrawResponse:
        check_count(len(req.smiles), panel.limits.max_drawn, "per /admet/draw")
        if req.target is None:
            raise HTTPException(422, "name the endpoint to draw in 'target' (GET "
                                     "/admet/endpoints lists them)")
        try:
            return await run_in_threadpool(panel.draw, req.smiles, req.target)
        except PanelError as err:  # an endpoint the panel does not show
            raise HTTPException(422, str(err)) from None
