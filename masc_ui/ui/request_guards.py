"""Checks on a raw ASGI request that `route_gate.RouteGate` makes before the app reads it: where a state-changing
request comes from (cross-site request forgery), and how large its body may be."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing on the server (every other one is checked for its origin)."""
TRUSTED_FETCH_SITES = frozenset({"same-origin", "none"})
"""`Sec-Fetch-Site` values of a request the app's own page (or the user typing an address) made."""
CROSS_SITE = (
    "cross-site request refused: this address changes data and answers only the app's own pages; "
    "open the app itself and try again there"
)


class BodyTooLarge(HTTPException):
    """A request body longer than the route allows (`limited_receive`): HTTP 413 with `too_large`'s message (an
    HTTPException, so that FastAPI's body parsing passes it on as it is)."""

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413, detail=too_large(None, limit))
        self.limit = limit


def too_large(nbytes: int | None, limit: int) -> str:
    """The message of a refused body of `nbytes` (None: not declared) over `limit`."""
    size = f"of {size_text(nbytes)} " if nbytes is not None else ""
    return (
        f"request body {size}refused: this address accepts at most {size_text(limit)} per request; "
        "send less (a smaller file, a shorter text)"
    )


def header(scope: Any, name: str) -> str | None:
    """The first value of request header `name` (lower case), decoded as Latin-1; None when absent."""
    key = name.encode("latin-1")
    for k, v in scope.get("headers", ()):
        if k == key:
            return v.decode("latin-1")
    return None


def is_cross_site(scope: Any) -> bool:
    """True for a state-changing request (any method but GET, HEAD, OPTIONS; every web socket) that a browser sent
    from another site: its `Origin` names another host than the request's (`Host`, or `X-Forwarded-Host` set by
    a proxy), or is `null`, or, without `Origin`, its `Sec-Fetch-Site` is `cross-site` or `same-site` (a
    neighbouring app under the same domain, e.g. another Space). Requests without either header (command-line
    clients, gradio_client) are not a browser's and pass."""
    method = scope.get("method", "GET") if scope["type"] == "http" else "WEBSOCKET"
    if method in SAFE_METHODS:
        return False
    origin = header(scope, "origin")
    if origin is not None:
        if origin == "null":
            return True
        host = urlsplit(origin).netloc.lower()
        own = {
            h.strip().lower() for name in ("host", "x-forwarded-host") for h in (header(scope, name) or "").split(",")
        }
        return host not in own - {""}
    site = header(scope, "sec-fetch-site")
    return site is not None and site.lower() not in TRUSTED_FETCH_SITES


def content_length(scope: Any) -> int | None:
    """The request's declared body length; None when it declares none (or an unreadable one)."""
    text = header(scope, "content-length")
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def limited_receive(receive: Callable[[], Awaitable[dict]], limit: int) -> Callable[[], Awaitable[dict]]:
    """`receive` that raises BodyTooLarge once the body's bytes exceed `limit` (a body sent without a length,
    in chunks, is counted as it arrives)."""
    seen = 0

    async def bounded() -> dict:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
        return message

    return bounded


async def read_body(receive: Callable[[], Awaitable[dict]]) -> bytes:
    """The whole body of a request (through a `limited_receive`, so it is bounded)."""
    chunks = []
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def replay(body: bytes, receive: Callable[[], Awaitable[dict]]) -> Callable[[], Awaitable[dict]]:
    """A `receive` that gives the app `body` (already read) once, then waits on the real one (disconnects)."""
    sent = False

    async def again() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


def size_text(nbytes: int) -> str:
    """`nbytes` for a message: bytes, KiB or MiB."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    if nbytes < 1024 * 1024:
        return f"{round(nbytes / 1024, 1):g} KiB"
    return f"{round(nbytes / (1024 * 1024), 1):g} MiB"
