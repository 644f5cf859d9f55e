"""A cap on the requests and streams one client address may hold open at once without a login: an anonymous
visitor (or anyone, in an app without logins) who opens connections and keeps them (slow bodies, held event
streams, heartbeats) takes a file descriptor and memory each; past `Settings.max_connections_per_address` the next
one is refused at once (HTTP 429, a web socket closed with 1008) instead of filling the server's file table.

Requests that carry a valid login session are not counted: a logged-in user is bounded by the role gate's rules
(body limits, upload quota, rate limits), and the cap must not lock an annotation team behind one office address
out. The address is the connection's, or the entry a trusted proxy appended (`roles.client_address`).
"""

from __future__ import annotations

import threading
from typing import Any

from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse

from .roles import TrustedProxies, client_address
from .route_gate import WEBSOCKET_POLICY_VIOLATION, has_login_session


def too_many(limit: int) -> str:
    """The message of a refused connection."""
    return (
        f"too many open connections from your address ({limit} at once without a login); "
        "close other tabs of the app, or wait a moment and try again"
    )


class ConnectionCap:
    """ASGI middleware counting, per client address, the HTTP requests (until their response is sent) and web
    sockets (until they close) in flight without a login session, and refusing one past `limit`."""

    def __init__(self, app: Any, limit: int, proxies: TrustedProxies) -> None:
        self.app = app
        self.limit = limit
        self.proxies = proxies
        self._open: dict[str, int] = {}
        """Address -> connections open now (addresses with none are dropped, so it holds only live ones)."""
        self._lock = threading.Lock()

    def open_now(self, address: str) -> int:
        """Connections `address` holds open now (counted ones)."""
        with self._lock:
            return self._open.get(address, 0)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") not in ("http", "websocket") or has_login_session(scope):
            await self.app(scope, receive, send)
            return
        address = client_address(HTTPConnection(scope), self.proxies)
        with self._lock:
            held = self._open.get(address, 0)
            if held < self.limit:
                self._open[address] = held + 1
        if held >= self.limit:
            await _refuse(scope, receive, send, too_many(self.limit))
            return
        try:
            await self.app(scope, receive, send)
        finally:
            with self._lock:
                left = self._open.get(address, 1) - 1
                if left > 0:
                    self._open[address] = left
                else:
                    self._open.pop(address, None)


async def _refuse(scope: Any, receive: Any, send: Any, message: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": WEBSOCKET_POLICY_VIOLATION})
        return
    await JSONResponse({"detail": message}, status_code=429)(scope, receive, send)
