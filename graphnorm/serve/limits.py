"""What one request may ask of the server, and the ASGI middleware that caps request bodies.

Every limit answers with a message that names it: a request over a per-request limit gets
HTTP 413 (408 for a body that takes too long to arrive) and ``{"detail": ...}``; a molecule
over a per-molecule limit gets that row's error, and the other rows their predictions.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    max_smiles: int = 10_000  # SMILES (rows) per request
    max_upload_bytes: int = 10 * 1024 * 1024  # a request body, and an upload after gunzip
    max_atoms: int = 150  # heavy atoms per molecule (featurizing costs atoms^2 x hops)
    max_smiles_chars: int = 1_000  # characters per SMILES, checked before RDKit parses it
    max_drawn: int = 50  # molecules per /draw request
    body_seconds: int = 30  # a request body must arrive within this (a slow client holds a slot)

    def __post_init__(self):
        for name, value in asdict(self).items():
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"server limit {name} must be a positive integer, got {value!r}")

    def to_dict(self) -> dict:
        return asdict(self)


DRAIN_FACTOR = 4  # a refused body is read up to 4x the limit, then the connection closes


class BodyRefused(Exception):
    """A body the server stops reading; ``status`` and ``detail`` are the answer (FastAPI
    wraps it in a 400 when it interrupts JSON parsing: errors.py unwraps it)."""
    status = 400

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class BodyTooLarge(BodyRefused):
    status = 413


class BodyTooSlow(BodyRefused):
    status = 408


class BodyLimit:
    """Refuses a request body over ``max_bytes`` with 413: at once when its Content-Length
    says so, else as soon as the streamed body passes the limit; and one that has not arrived
    ``max_seconds`` after the request began with 408."""

    def __init__(self, app, max_bytes: int, max_seconds: float = 30.0):
        self.app, self.max_bytes, self.max_seconds = app, max_bytes, max_seconds

    def too_large(self, length: int | None) -> BodyTooLarge:
        size = f"{length:,} bytes" if length is not None else "more"
        return BodyTooLarge(f"request body too large: {size}, the server accepts at most "
                            f"{self.max_bytes:,} bytes; split the input")

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        deadline = asyncio.get_running_loop().time() + self.max_seconds
        received, started, body_done, over = 0, False, False, False

        async def timed_receive():
            """The next message of a body still arriving, or BodyTooSlow at the deadline."""
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                return await asyncio.wait_for(receive(), max(remaining, 0.0))
            except asyncio.TimeoutError:
                raise BodyTooSlow(f"the request body did not arrive within {self.max_seconds:g} "
                                  f"s ({received:,} bytes came); send it at once") from None

        async def counted_receive():
            nonlocal received, body_done, over
            if body_done:  # e.g. waiting for a disconnect: no deadline then
                return await receive()
            message = await timed_receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if received > self.max_bytes:
                    over = True
                    raise self.too_large(None)
            return message

        async def tracked_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._drain(timed_receive, 0)
            return await self._answer(send, self.too_large(int(length)))
        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyRefused as refused:  # not answered inside the app (errors.py answers it there)
            if started:
                raise
            if over and not body_done:
                await self._drain(timed_receive, received)
            return await self._answer(send, refused)
        if over and not body_done:  # the app answered the 413: read on, so the client sees it
            await self._drain(timed_receive, received)

    async def _drain(self, receive, received: int) -> None:
        """Read (and drop) the rest of a refused body, up to DRAIN_FACTOR x the limit and
        within the time limit: a server that closes with unread data resets the connection,
        and the client may then lose the 413 answer while it is still sending."""
        more = True
        try:
            while more and received <= DRAIN_FACTOR * self.max_bytes:
                message = await receive()
                if message["type"] != "http.request":
                    return
                received += len(message.get("body", b""))
                more = message.get("more_body", False)
        except BodyTooSlow:
            pass  # the answer says what matters; the connection closes after it

    @staticmethod
    async def _answer(send, refused: BodyRefused):
        body = json.dumps({"detail": refused.detail}).encode()
        await send({"type": "http.response.start", "status": refused.status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})  # the body was not read to its end
        await send({"type": "http.response.body", "body": body})
