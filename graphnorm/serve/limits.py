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
            return await self._refuse(send, int(length))
        received, started = 0, False

        async def counted_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
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
                await self._refuse(send, None)

    async def _refuse(self, send, length):
        size = f"{length:,} bytes" if length is not None else "more"
        body = json.dumps({"detail": f"request body too large: {size}, the server accepts at "
                           f"most {self.max_bytes:,} bytes; split the input"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
