"""The cap on connections an address holds open without a login: the middleware on its own (held requests counted
until their response, refused past the limit, released when they end, logged-in requests not counted), and the
launched app refusing an anonymous address's next connection while it holds the limit with slow login bodies."""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from masc_ui.ui.connection_cap import ConnectionCap, too_many
from masc_ui.ui.roles import TrustedProxies


def _scope(host: str, cookie: str | None = None, kind: str = "http", app=None) -> dict:
    headers = [(b"cookie", cookie.encode())] if cookie else []
    return {"type": kind, "method": "GET", "path": "/", "headers": headers, "client": (host, 5000), "app": app}


def test_held_requests_count_until_they_end_and_the_next_is_refused():
    release = asyncio.Event()
    served: list[str] = []

    async def held(scope, receive, send):
        await release.wait()
        served.append(scope["client"][0])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    server = SimpleNamespace(tokens={"good-token": object()}, cookie_id="c1")
    cap = ConnectionCap(held, limit=3, proxies=TrustedProxies(""))

    async def call(scope) -> list[dict]:
        sent: list[dict] = []

        async def send(message):
            sent.append(message)

        async def receive():
            return {"type": "http.request", "body": b""}

        await cap(scope, receive, send)
        return sent

    async def scenario():
        first = [asyncio.create_task(call(_scope("10.0.0.7", app=server))) for _ in range(3)]
        await asyncio.sleep(0.05)
        assert cap.open_now("10.0.0.7") == 3
        refused = await call(_scope("10.0.0.7", app=server))
        assert refused[0]["status"] == 429 and too_many(3).encode() in refused[1]["body"]
        socket_closed = await call(_scope("10.0.0.7", kind="websocket", app=server))
        assert socket_closed == [{"type": "websocket.close", "code": 1008}]
        other = asyncio.create_task(call(_scope("10.0.0.8", app=server)))  # another address has its own count
        logged_in = asyncio.create_task(call(_scope("10.0.0.7", "access-token-c1=good-token", app=server)))
        forged = asyncio.create_task(call(_scope("10.0.0.7", "access-token-c1=made-up", app=server)))
        await asyncio.sleep(0.05)
        assert cap.open_now("10.0.0.8") == 1 and cap.open_now("10.0.0.7") == 3
        release.set()
        done = await asyncio.gather(*first, other, logged_in, forged)
        assert [d[0]["status"] for d in done] == [200, 200, 200, 200, 200, 429]
        assert cap.open_now("10.0.0.7") == 0 and cap.open_now("10.0.0.8") == 0
        again = await call(_scope("10.0.0.7", app=server))
        assert again[0]["status"] == 200

    # Its own thread: an earlier test of the session may leave an event loop running in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, scenario()).result()


@pytest.fixture()
def app(demo_weights: Path, tmp_path):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    settings = Settings(
        profile="demo",
        demo_weights_dir=demo_weights,
        device="cpu",
        dtype="float32",
        data_dir=tmp_path / "data",
        users="root:pw-root-123:admin",
        port=free_port(),
        max_connections_per_address=4,
    )
    wb = build_workbench(settings)
    served = serve(wb, block=False)
    yield SimpleNamespace(url=served.local_url.rstrip("/"), port=settings.port)
    served.close()
    wb.close()


def _slow_login(port: int) -> socket.socket:
    """A login request whose body never finishes arriving: it stays open on the server."""
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(
        b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: 1000\r\n\r\nusername=ro"
    )
    return conn


def test_an_anonymous_address_holding_the_limit_is_refused_and_a_login_is_not(app):
    admin = httpx.Client(base_url=app.url, timeout=30)
    assert admin.post("/login", data={"username": "root", "password": "pw-root-123"}).status_code == 200
    held = [_slow_login(app.port) for _ in range(4)]
    try:
        for _ in range(100):
            answer = httpx.get(f"{app.url}/", timeout=30)
            if answer.status_code == 429:
                break
        assert answer.status_code == 429 and "too many open connections from your address" in answer.json()["detail"]
        assert admin.get("/config").status_code == 200  # a logged-in user is not counted
    finally:
        for conn in held:
            conn.close()
    for _ in range(100):
        if httpx.get(f"{app.url}/", timeout=30).status_code == 200:
            break
    assert httpx.get(f"{app.url}/", timeout=30).status_code == 200
