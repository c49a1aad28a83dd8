"""What one request may ask of the server, and the ASGI middleware that caps request bodies.

Every limit answers with a message that names it: a request over a per-request limit gets
HTTP 413 and ``{"detail": ...}``; a molecule over a per-molecule limit gets that row's error,
and the other rows their predictions.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    max_smiles: int = 10_000  # SMILES (rows) per request
    max_upload_bytes: int = 10 * 1024 * 1024  # a request body, and an upload after gunzip
    max_atoms: int = 150  # heavy atoms per molecule (featurizing costs atoms^2 x hops)
    max_smiles_chars: int = 1_000  # characters per SMILES, checked before RDKit parses it
    max_drawn: int = 50  # molecules per /draw request

    def __post_init__(self):
        for name, value in asdict(self).items():
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"server limit {name} must be a positive integer, got {value!r}")

    def to_dict(self) -> dict:
        return asdict(self)


DRAIN_FACTOR = 4  # a refused body is read up to 4x the limit, then the connection closes


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    """Answers 413 to a request whose body exceeds ``max_bytes``: at once when its
    Content-Length says so, else as soon as the streamed body passes the limit."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._drain(receive, 0)
            return await self._refuse(send, int(length))
        received, started, body_done = 0, False, False

        async def counted_receive():
            nonlocal received, body_done
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if received > self.max_bytes:
                    raise BodyTooLarge()
            return message

        async def tracked_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyTooLarge:
            if not started:
                if not body_done:
                    await self._drain(receive, received)
                await self._refuse(send, None)

    async def _drain(self, receive, received: int) -> None:
        """Read (and drop) the rest of a refused body, up to DRAIN_FACTOR x the limit: a
        server that closes with unread data resets the connection, and the client may then
        lose the 413 answer while it is still sending."""
        more = True
        while more and received <= DRAIN_FACTOR * self.max_bytes:
            message = await receive()
            if message["type"] != "http.request":
                return
            received += len(message.get("body", b""))
            more = message.get("more_body", False)

    async def _refuse(self, send, length):
        size = f"{length:,} bytes" if length is not None else "more"
        body = json.dumps({"detail": f"request body too large: {size}, the server accepts at "
                           f"most {self.max_bytes:,} bytes; split the input"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
