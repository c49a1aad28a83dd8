"""How the server answers a request it cannot take: a 4xx with a JSON ``detail``, never a 5xx.

FastAPI's own handler for request validation errors renders each error's ``input`` with
``jsonable_encoder``, which decodes ``bytes`` as UTF-8: a body of random bytes sent as
``application/octet-stream`` reaches validation as raw bytes, the decode fails inside the
handler, and the client gets a 500 while the traceback (the validation error printed in full,
body included) goes to the log. The handlers here render errors from scratch instead: every
``input`` becomes a short escaped prefix, and a body that was not sent as JSON is answered 415.
"""
from __future__ import annotations

import logging
import reprlib
from typing import Any, Optional, Union

from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .limits import BodyRefused

log = logging.getLogger("graphnorm.serve")

PREFIX_CHARS = 80  # what of a rejected body may reach a response or the log


class ErrorResponse(BaseModel):
    detail: str


class ValidationIssue(BaseModel):
    type: str
    loc: list[Union[str, int]]
    msg: str
    input: Optional[str] = None  # the offending value, as a short escaped prefix


class ValidationErrorResponse(BaseModel):
    """422: ``detail`` is a message, or one issue per invalid field of the JSON body."""
    detail: Union[str, list[ValidationIssue]]


def _short_repr() -> reprlib.Repr:
    r = reprlib.Repr()  # nested containers: a few items each, never the whole structure
    r.maxlevel, r.maxlist, r.maxdict, r.maxstring, r.maxother = 3, 6, 6, PREFIX_CHARS, PREFIX_CHARS
    return r


_SHORT = _short_repr()


def escaped_prefix(value: Any, limit: int = PREFIX_CHARS) -> str:
    """``repr`` of at most ``limit`` characters (or bytes) of ``value``, with its size when cut:
    non-printable bytes and characters come out escaped, so the text is safe to log."""
    if isinstance(value, (bytes, bytearray, str)):
        unit = "characters" if isinstance(value, str) else "bytes"
        text = repr(bytes(value[:limit]) if not isinstance(value, str) else value[:limit])
        return text if len(value) <= limit else f"{text}... ({len(value):,} {unit})"
    text = _SHORT.repr(value)
    return text if len(text) <= 2 * limit else text[:2 * limit] + "..."


def _loc_part(part) -> Union[str, int]:
    if isinstance(part, int) and not isinstance(part, bool):
        return part
    return part[:PREFIX_CHARS] if isinstance(part, str) else escaped_prefix(part, 40)


def safe_issues(errors) -> list[dict]:
    """Pydantic's errors with only JSON-safe, bounded fields (no raw input, no ``ctx`` objects)."""
    issues = []
    for err in errors:
        value, msg = err.get("input"), str(err.get("msg", ""))
        if err.get("type") == "json_invalid":  # FastAPI's input is {} then; the reason is in ctx
            value, msg = None, f"{msg}: {err.get('ctx', {}).get('error', '')}"
        issues.append({"type": str(err.get("type", "invalid")),
                       "loc": [_loc_part(part) for part in err.get("loc", ())],
                       "msg": msg[:200], "input": None if value is None else escaped_prefix(value)})
    return issues


def _is_json(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/")
                                          and kind.endswith("+json"))


async def validation_error_handler(request: Request, exc: RequestValidationError) -> Response:
    """422 with bounded issues; 415 when the body reached validation as bytes (not sent as
    JSON), where FastAPI's handler would have failed with a 500."""
    content_type = request.headers.get("content-type", "")
    if isinstance(exc.body, (bytes, bytearray)) and not _is_json(content_type):
        detail = (f"the body was sent as {escaped_prefix(content_type or 'no content type', 60)}"
                  f" ({len(exc.body):,} bytes, starting {bytes(exc.body[:24])!r}); send JSON "
                  "with Content-Type: application/json")
        log.info("415 %s %s: %s", request.method, request.url.path, detail)
        return JSONResponse({"detail": detail}, status_code=415)
    issues = safe_issues(exc.errors())
    first = issues[0] if issues else {}
    log.info("422 %s %s: %d issue(s), first %s at %s (input %s)", request.method,
             request.url.path, len(issues), first.get("type"), first.get("loc"), first.get("input"))
    return JSONResponse({"detail": issues}, status_code=422)


async def body_refused_handler(request: Request, exc: BodyRefused) -> Response:
    """413 / 408 from the body caps (limits.BodyLimit) when they stop a body mid-read."""
    log.info("%d %s %s: %s", exc.status, request.method, request.url.path, exc.detail)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status,
                        headers={"connection": "close"})  # the rest of the body is unread


async def http_error_handler(request: Request, exc: HTTPException) -> Response:
    """FastAPI's answer to HTTPException, with a message that says why a body could not be
    parsed at all (FastAPI says only "There was an error parsing the body")."""
    cause = exc.__cause__
    if exc.status_code == 400 and isinstance(cause, BodyRefused):  # FastAPI wrapped it
        return await body_refused_handler(request, cause)
    if exc.status_code == 400 and isinstance(cause, UnicodeDecodeError):
        detail = (f"the body is not JSON text: it does not decode as {cause.encoding} at byte "
                  f"{cause.start:,} ({cause.reason}); send JSON encoded as UTF-8")
        log.info("400 %s %s: %s", request.method, request.url.path, detail)
        return JSONResponse({"detail": detail}, status_code=400)
    if exc.status_code == 400 and isinstance(cause, RecursionError):
        detail = "the JSON body is nested too deeply to parse; send {\"smiles\": [...]}"
        log.info("400 %s %s: %s", request.method, request.url.path, detail)
        return JSONResponse({"detail": detail}, status_code=400)
    return await http_exception_handler(request, exc)


def install_error_handlers(app) -> None:
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.add_exception_handler(HTTPException, http_error_handler)
    app.add_exception_handler(BodyRefused, body_refused_handler)


def error_responses(*statuses: int) -> dict:
    """OpenAPI declarations of the 4xx answers an operation may give (schemas above)."""
    why = {400: "the body cannot be parsed (not UTF-8, not multipart as declared)",
           408: "the body did not arrive within the server's time limit",
           413: "too many SMILES, or a body over the size limit",
           415: "the body was not sent with the content type the operation reads",
           422: "the body is valid JSON but not a valid request, or an upload cannot be read"}
    return {s: {"model": ValidationErrorResponse if s == 422 else ErrorResponse,
                "description": why[s]} for s in statuses}
