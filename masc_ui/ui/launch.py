"""How the app is served: safety settings, logins, theme, and the page assets (`page_assets`)."""

from __future__ import annotations

import gc
import os
import sys
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import anyio
import gradio as gr
from fastapi import HTTPException
from starlette.middleware import Middleware

from ..settings import Settings
from ..workbench.studies import Studies
from ..workbench.users import Accounts, LoginThrottled, startup_warnings
from .connection_cap import ConnectionCap
from .page_assets import CSS, KEYBOARD_JS
from .roles import TrustedProxies, client_address
from .route_gate import RouteGate
from .study_page import REDIRECT_JS

ASSETS_DIR = Path(__file__).resolve().parent.parent.parent / "assets"


def launch_kwargs(
    settings: Settings, accounts: Accounts | None = None, studies: Studies | None = None
) -> dict[str, Any]:
    """Keyword arguments of `Blocks.launch` for `settings`: no share link, no monitoring dashboard, no SSR
        (it would need Node), uploads capped at `max_upload_mb`, only `assets/` served from disk, the data
        directory, demo weights and checkpoint cache explicitly blocked, errors a handler did not turn into a message
        shown without their text (`show_error=False`), the connections an address holds without a login capped
    (`connection_cap.ConnectionCap`), and, when logins are configured, Argon2 password checks
        bounded and throttled (`login_checker`) and every HTTP route behind the caller's role (`route_gate.RouteGate`),
    which also answers the links of the crowd `studies` (none: study links are not served)."""
    accounts = accounts if accounts is not None else Accounts.from_settings(settings)
    blocked = [str(p) for p in (settings.data_dir, settings.resolved_demo_weights_dir, settings.resolved_cache_dir)]
    proxies = TrustedProxies(settings.trusted_proxies)
    kwargs: dict[str, Any] = dict(
        server_name=settings.host,
        server_port=settings.port,
        share=False,
        enable_monitoring=False,
        ssr_mode=False,
        max_file_size=f"{settings.max_upload_mb}mb",
        allowed_paths=[str(ASSETS_DIR)],
        blocked_paths=blocked,
        show_error=False,
        pwa=False,
        mcp_server=False,
        theme=gr.themes.Soft(),
        css=CSS,
        head=KEYBOARD_JS + REDIRECT_JS,
        footer_links=["gradio"],
        app_kwargs={
            "middleware": [
                Middleware(ClientAddressMiddleware, proxies=proxies),
                Middleware(ConnectionCap, limit=settings.max_connections_per_address, proxies=proxies),
            ]
        },
    )
    if accounts.logins_enabled:
        kwargs["app_kwargs"]["middleware"].append(
            Middleware(RouteGate, accounts=accounts, settings=settings, studies=studies)
        )
        kwargs["auth"] = login_checker(accounts)
        kwargs["auth_message"] = "MaSC Workbench: log in with your account."
    return kwargs


LOGIN_CHECKS_AT_ONCE = 2
"""Argon2 password checks running at once (each takes 64 MiB and tens of milliseconds of CPU): a spray of
logins costs at most this much memory and leaves the other cores to the app."""
LOGINS_WAITING = 32
"""Logins waiting for a check slot beyond which a login is answered 503 at once (try again in a moment)."""
TOO_MANY_LOGINS = "too many logins are being checked at once; try again in a few seconds"


def login_checker(accounts: Accounts):
    """Gradio's `auth` callable: the password check of `accounts` (`workbench.users.LoginThrottle`'s rules).

    In order, before any hash: an address that must wait is refused (429); when `LOGINS_WAITING` logins already
    wait for a check, 503. Then the Argon2 check runs in a worker thread, at most `LOGIN_CHECKS_AT_ONCE` at once
    (the event loop, which every other request needs, never runs one). A wrong password of a name that many
    guesses have hit is answered only after the delay the throttle gives it, waited without holding a thread."""
    slots = anyio.CapacityLimiter(LOGIN_CHECKS_AT_ONCE)

    async def check(username: str, password: str) -> bool:
        name, address, throttle = username or "", LOGIN_ADDRESS.get(None), accounts.throttle
        wait = throttle.wait_s(address)
        if wait > 0:
            raise HTTPException(status_code=429, detail=str(LoginThrottled(wait)))
        if slots.statistics().tasks_waiting >= LOGINS_WAITING:
            raise HTTPException(status_code=503, detail=TOO_MANY_LOGINS)
        right = await anyio.to_thread.run_sync(accounts.verify, name, password or "", limiter=slots)
        if right:
            throttle.succeeded(name, address)
            return True
        await anyio.sleep(throttle.failed(name, address))
        return False

    return check


LOGIN_ADDRESS: ContextVar[str | None] = ContextVar("masc_login_address")
"""The client address of the HTTP request being handled (set by `ClientAddressMiddleware`)."""


class ClientAddressMiddleware:
    """ASGI middleware recording each HTTP request's client address in `LOGIN_ADDRESS` (for login throttling):
    the connection's address, or, when the connection comes from one of the trusted `proxies`
    (`Settings.trusted_proxies`), the `X-Forwarded-For` entry they appended (`roles.TrustedProxies.client`)."""

    def __init__(self, app: Any, proxies: TrustedProxies) -> None:
        self.app = app
        self.proxies = proxies

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") in ("http", "websocket"):
            from starlette.requests import HTTPConnection

            LOGIN_ADDRESS.set(client_address(HTTPConnection(scope), self.proxies))
        await self.app(scope, receive, send)


def serve(wb, *, block: bool = True, settle: bool | None = None) -> gr.Blocks:
    """Build the app for workbench `wb` and launch it with `launch_kwargs(wb.settings, wb.accounts)`; returns the
    launched Blocks (its URL is `.local_url`). `block=False` returns once the server is up (tests, benchmarks);
    stop it with `.close()`. Risky setups (no logins on a public address, logins without an admin) are
    announced loudly on stderr first. Once the server is up, `settle_heap` runs when `settle` is true (default:
    when blocking, i.e. the app's own process; tests and benchmarks that launch apps in their own process choose)."""
    from .blocks import build_app

    for warning in startup_warnings(wb.settings, wb.accounts):
        print(warning, file=sys.stderr, flush=True)
    app = build_app(wb)
    # The rating tasks' files go to the browser from their own folders, static paths: Gradio then sends each one
    # as it is, instead of resolving it against every blocked and allowed path and copying it into its cache on
    # the event loop for every answer (files are written there by the app only: `workbench.blind_files`, pixels
    # only, named by a keyed hash; the file route still asks for a login). Gradio's list of static paths is the
    # process's: a process that launches several apps serves the folders of all of them.
    gr.set_static_paths([str(wb.ratings.image_folder), str(wb.pairwise.file_folder)])
    # Uvicorn, which Gradio starts, rewrites the client address from X-Forwarded-For for connections from the hosts
    # of this variable, 127.0.0.1 unless set: anyone on the machine could then be any address. Only the configured
    # proxies are trusted (`Settings.trusted_proxies`; none: nobody). Read when the server starts, just below.
    os.environ[FORWARDED_ALLOW_IPS] = str(TrustedProxies(wb.settings.trusted_proxies))
    # Gradio's own check that the page answers allows 3 s per try and gives up on the first timeout, which a busy
    # machine (a long garbage collection in a process holding several apps) can exceed; `wait_until_answering`
    # allows longer and names the URL when the page never answers.
    app.launch(
        prevent_thread_lock=True,
        quiet=not block,
        _frontend=False,
        **launch_kwargs(wb.settings, wb.accounts, wb.studies),
    )
    wait_until_answering(app.local_url)
    if block if settle is None else settle:
        settle_heap()
    if block:
        app.block_thread()
    return app


def wait_until_answering(url: str, *, within_s: float = 60.0) -> None:
    """Return once `url` (the launched app's local address) answers an HTTP HEAD with a page, a redirect or a login
    request; RuntimeError naming the address and the last try's answer (a status or a connection error) when it has
    not within `within_s` seconds (then a proxy set in HTTP_PROXY or ALL_PROXY most likely intercepts local
    addresses: add the host to NO_PROXY)."""
    import time

    import httpx

    deadline = time.monotonic() + within_s
    while True:
        try:
            code = httpx.head(url, timeout=10.0, verify=False).status_code
            if code in (200, 301, 302, 303, 307, 308, 401):
                return
            last = f"HTTP {code}"
        except httpx.HTTPError as exc:
            last = type(exc).__name__
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the app was started but {url} did not answer within {within_s:g} s (last try: {last}); if a "
                "proxy is set (HTTP_PROXY, ALL_PROXY), add this host to NO_PROXY and start again"
            )
        time.sleep(0.25)


def settle_heap() -> None:
    """Put everything alive now out of the cyclic garbage collector's reach (`gc.freeze`, after one last
    collection): the imported libraries, the built app and the models loaded so far, hundreds of thousands of
    objects that live as long as the process. Without it every full collection walks all of them with the
    interpreter lock held, pausing every request meanwhile under rating load (`bench/rating_load.py` prints the
    longest pause). Objects made later are collected as before; frozen ones are still
    freed when their last reference goes (only a reference cycle among them would stay). Then the youngest
    generation is collected after `YOUNG_GC_THRESHOLD` new objects instead of Python's 700 (see there). Not done by
    default in a process that launches many apps (tests): what a closed app leaves in cycles would never be
    collected."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GC_THRESHOLD, *gc.get_threshold()[1:])


FORWARDED_ALLOW_IPS = "FORWARDED_ALLOW_IPS"
"""Uvicorn's setting of the proxies whose X-Forwarded-For it believes (environment variable)."""
YOUNG_GC_THRESHOLD = 10_000
"""Net new objects that start a collection of the youngest generation in the app's process (Python's default:
700). A request builds thousands of short-lived objects (a response, its dicts and models), so with 700 the
collector runs about once per rating answer and a full collection every hundred, while the objects a burst leaves
behind are freed by their reference counts moments later anyway. Garbage in reference cycles waits at most that
many objects longer."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (for tests and benchmarks)."""
    import socket

    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])
