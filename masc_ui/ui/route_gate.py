"""Every HTTP route of the server behind the caller's role, checked before Gradio reads the request.

Gradio serves some eighty routes of its own (pages, files, uploads, the queue, the component server functions,
...); some ask for a login, none knows the app's roles, and `roles.guard_endpoints` sees only the event functions.
`RouteGate` (ASGI middleware that `launch.launch_kwargs` installs when logins are configured) answers each request
by the route it names and the caller's role:

- `ROUTES` lists every route Gradio serves, as FastAPI declares it ("METHOD path"), with the roles that reach it:
  anonymous visitors (no valid session cookie) reach the login page and what it loads, raters what the Rate tabs
  and API clients of the `rate_*` endpoints use, admins everything;
- default deny: a request no listed route matches is answered 404 for every role, so a route that a later Gradio
  adds stays closed until someone decides who may reach it (`tests/ui/test_route_gate.py` names the routes a new
  Gradio serves that `ROUTES` does not list);
- the login is the one Gradio itself reads from the session cookie (its `GET /gradio_api/user` handler), the role
  the account's (`Accounts.role_of`).

The page, `/config` and `/gradio_api/info` of everyone but admins are the gate's own answers (`role_view`): a
visitor's login page and a rater's page describe only their own part of the app.

Before any of that, the gate refuses a state-changing request another site's page made (`request_guards`:
`Origin` / `Sec-Fetch-Site`), answers `POST /logout` itself (`GET /logout` logs nobody out: 405) and ends a login
session that outlived its idle or absolute lifetime (`SessionClock`). After it, every body is bounded per route
before anything parses it (`body_limit`; 413 with the limit), and uploads count against the login's hourly quota. An event request is refused there too when a rater names an event
raters may not run, or an event that needs the browser's event data comes without it (`event_refusal`): before
Gradio reads it, so no traceback reaches the log.

A visitor whose cookie names a login session the server no longer knows (it restarted, or ended the session by its
lifetime) gets the login page saying so, once (`session_cookies`; the stale cookies are cleared with it).

A crowd study's link (`GET /study/<study id>.<secret>?PROLIFIC_PID=...`, `workbench.studies`) is answered by the gate
itself (`study_link`): a valid link starts or resumes the participant and gives the browser a session of its own (the
same session cookies and lifetimes as a login's, `SameSite=Lax`, `HttpOnly`), then sends it to the page; a wrong or
unknown link is answered 404 in plain text, a link without a participant id 400, a closed study's 410, and nothing is
created. A participant (role `participant`) reaches what a rater reaches, cut down further: their page is the Rate
tab alone (`role_view.participant_view`), and an event outside it is refused (`event_refusal`); a finished
participant of a study with a redirect URL who opens the page is sent there.

Raters still reach the queue and the event routes: which event they may run is decided per function by
`roles.guard_endpoints`. Without logins (single-user local mode) no gate is installed: every caller acts as admin.
"""

from __future__ import annotations

import inspect
import json
import secrets
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import anyio
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse
from starlette.routing import compile_path

from ..errors import InputError, WorkbenchError
from ..settings import Settings
from ..workbench.quotas import UploadQuota, UploadQuotaExceeded
from ..workbench.session_cookies import EndedSessions, app_cookie_id
from ..workbench.studies import Studies, StudyClosed, StudyLinkUnknown
from ..workbench.users import AccessDenied, Accounts, SessionClock
from . import role_view
from .request_guards import (
    CROSS_SITE,
    BodyTooLarge,
    content_length,
    is_cross_site,
    limited_receive,
    read_body,
    replay,
    too_large,
)
from .roles import ADMIN_LOGIN_NEEDED, for_raters

ANONYMOUS, RATER, ADMIN, PARTICIPANT = "anonymous", "rater", "admin", "participant"
EVERYONE = frozenset({ANONYMOUS, RATER, ADMIN, PARTICIPANT})
LOGGED_IN = frozenset({RATER, ADMIN})
RATING = LOGGED_IN | {PARTICIPANT}
"""Who reaches the rating routes: logins and crowd study participants."""
ADMINS = frozenset({ADMIN})

LOGIN_PAGE_ROUTES = (
    "GET /",
    "HEAD /",
    "GET /assets/{path:path}",
    "GET /static/{path:path}",
    "GET /theme.css",
    "GET /gradio_api/theme.css",
    "GET /favicon.ico",
    "GET /robots.txt",
    "POST /login",
    "POST /login/",
    "GET /logout",  # answered by the gate itself: 405 (a GET logs nobody out); POST /logout logs out
    # Asked once by the launching process itself, without a cookie (`Blocks.launch`): it starts the queue.
    "GET /gradio_api/startup-events",
)
"""What a visitor who is not logged in reaches: the login page (Gradio's answer to `GET /` without a login), its
scripts, styles and fonts, the login and logout."""
RATER_ROUTES = (
    "GET /config",
    "GET /config/",
    "GET /gradio_api/info",
    "GET /gradio_api/info/",
    "POST /gradio_api/queue/join",
    "GET /gradio_api/queue/data",
    "GET /gradio_api/heartbeat/{session_hash}",
    "POST /gradio_api/run/{api_name}",
    "POST /gradio_api/run/{api_name}/",
    "POST /gradio_api/api/{api_name}",
    "POST /gradio_api/api/{api_name}/",
    "POST /gradio_api/call/{api_name}",
    "POST /gradio_api/call/{api_name}/",
    "GET /gradio_api/call/{api_name}/{event_id}",
    "GET /gradio_api/file={path_or_url:path}",
    "HEAD /gradio_api/file={path_or_url:path}",
    "POST /gradio_api/cancel",
    "POST /gradio_api/reset",
    "POST /gradio_api/reset/",
)
"""What a rater (and a study participant) reaches besides the login page: the app's config, the queue and the direct event routes (the Rate
tabs' events and answers; gradio_client's `predict`), the heartbeat that keeps a page session, and Gradio's file
route (the task images; it serves only Gradio's cache and the app's static folders)."""
ADMIN_ROUTES = (
    "GET /openapi.json",
    "HEAD /openapi.json",
    "GET /svelte/{path:path}",
    "GET /gradio_api/deep_link",
    "GET /pwa_icon",
    "GET /pwa_icon/{size}",
    "GET /manifest.json",
    "GET /monitoring",
    "GET /monitoring/summary",
    "GET /monitoring/{key}",
    "GET /gradio_api/user",
    "GET /gradio_api/user/",
    "GET /gradio_api/login_check",
    "GET /gradio_api/login_check/",
    "GET /gradio_api/token",
    "GET /gradio_api/token/",
    "GET /gradio_api/app_id",
    "GET /gradio_api/app_id/",
    "GET /gradio_api/dev/reload",
    "GET /gradio_api/runs",
    "GET /gradio_api/runs/",
    "POST /gradio_api/run-history/connect",
    "GET /gradio_api/run-history/buckets",
    "GET /gradio_api/run-history/records",
    "GET /gradio_api/run-history/records/{endpoint}/{record_id}/assets/{asset_id}",
    "GET /gradio_api/openapi.json",
    "GET /gradio_api/custom_component/{id}/{environment}/{type}/{file_name}",
    "GET /gradio_api/proxy={url_path:path}",
    "HEAD /gradio_api/proxy={url_path:path}",
    "GET /gradio_api/file/{path:path}",
    "POST /gradio_api/stream/{event_id}",
    "POST /gradio_api/stream/{event_id}/close",
    "GET /gradio_api/stream/{session_hash}/{run}/{component_id}/playlist.m3u8",
    "GET /gradio_api/stream/{session_hash}/{run}/{component_id}/{segment_id}.{ext}",
    "GET /gradio_api/stream/{session_hash}/{run}/{component_id}/playlist-file",
    "POST /gradio_api/call/v2/{api_name}",
    "POST /gradio_api/call/v2/{api_name}/",
    "GET /gradio_api/call/v2/{api_name}/{event_id}",
    "POST /gradio_api/component_server",
    "POST /gradio_api/component_server/",
    "GET /gradio_api/queue/status",
    "GET /gradio_api/upload_progress",
    "POST /gradio_api/upload",
    "POST /gradio_api/process_recording",
    "POST /gradio_api/vibe-edit",
    "POST /gradio_api/vibe-edit/",
    "POST /gradio_api/undo-vibe-edit",
    "POST /gradio_api/undo-vibe-edit/",
    "GET /gradio_api/vibe-code",
    "GET /gradio_api/vibe-code/",
    "POST /gradio_api/vibe-code",
    "POST /gradio_api/vibe-code/",
    "POST /gradio_api/vibe-starter-queries",
    "POST /gradio_api/vibe-starter-queries/",
)
"""What only admins reach: uploads and the component server functions (the Score tab's), streams, API docs,
Gradio's monitoring, run history, proxy and developer routes, and the login introspection routes no page uses."""


def _roles_of(groups: Iterable[tuple[Iterable[str], frozenset[str]]]) -> dict[str, frozenset[str]]:
    table: dict[str, frozenset[str]] = {}
    for routes, roles in groups:
        for route in routes:
            if route in table:
                raise ValueError(f"route {route!r} is listed twice")
            table[route] = roles
    return table


ROUTES: dict[str, frozenset[str]] = _roles_of(
    ((LOGIN_PAGE_ROUTES, EVERYONE), (RATER_ROUTES, RATING), (ADMIN_ROUTES, ADMINS))
)
"""Every route Gradio 6.31 serves for this app ("METHOD path") -> the roles that reach it."""
CURRENT_USER_ROUTE = "GET /gradio_api/user"
"""Gradio's handler that reads the logged-in name from the session cookie; the gate asks it."""
NEEDS_LOGIN = "log in first: this part of the app needs a login"
NOT_SERVED = "this app serves nothing at that address"
MiB = 1024 * 1024
FILES_PER_UPLOAD = 8
"""Files of the upload limit one upload request may carry (a multi-file box sends its files together)."""
RATER_EVENT_BYTES = 64 * 1024
"""Largest body of a rater's event request (a task token, two scores and a reason need a few hundred bytes)."""
SMALL_BODY_BYTES = 64 * 1024
"""Largest body of any other request (the login form, logout, the queue's cancel and reset; most send none)."""
UPLOAD_ROUTES = frozenset(
    {
        "POST /gradio_api/upload",
        "POST /gradio_api/component_server",
        "POST /gradio_api/component_server/",
        "POST /gradio_api/process_recording",
    }
)
"""Routes that take files (admins only): bounded by the upload limit and counted against the login's quota."""
EVENT_ROUTES = frozenset(
    {
        "POST /gradio_api/queue/join",
        "POST /gradio_api/run/{api_name}",
        "POST /gradio_api/run/{api_name}/",
        "POST /gradio_api/api/{api_name}",
        "POST /gradio_api/api/{api_name}/",
        "POST /gradio_api/call/{api_name}",
        "POST /gradio_api/call/{api_name}/",
        "POST /gradio_api/call/v2/{api_name}",
        "POST /gradio_api/call/v2/{api_name}/",
    }
)
"""Routes that run an event: their body is the event's JSON (`Settings.max_event_kb`; raters `RATER_EVENT_BYTES`)."""
NEEDS_EVENT_DATA = (
    "this event answers a click in the page (on an image or a table row) and needs the browser's event data; "
    "use the app's page for it"
)
LOGOUT_PATHS = ("/logout", "/logout/")
LOGOUT_BY_POST = "log out with the Log out button (POST /logout): a link or a GET request logs nobody out"
HEARTBEAT_PREFIX = "/gradio_api/heartbeat/"
"""The page's heartbeat: it keeps a page session, but is no use of the login session (the page sends it unasked)."""
STUDY_PREFIX = "/study/"
"""The path of crowd study links (`study_link`)."""
PARTICIPANT_ONLY = "a study participant reaches only the study's rating page"
PARTICIPANT_COOKIE_SAMESITE = "lax"
"""A participant arrives from the crowd platform's site by a link: Lax cookies come with that top-level visit and
with the page's own requests, never with another site's requests."""
WEBSOCKET_POLICY_VIOLATION = 1008
"""The close code of a refused web socket (RFC 6455: the message violates the server's policy)."""


def served_routes(routes: Iterable[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """("METHOD path", route) for every route of a FastAPI app's `routes`, routers included by FastAPI opened up:
    one entry per method, "WEBSOCKET path" for web sockets and "* path" for what has no methods (a mount)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            context = getattr(route, "include_context", None)
            yield from served_routes(included.routes, prefix + (getattr(context, "prefix", "") or ""))
            continue
        path = prefix + getattr(route, "path", "")
        methods = getattr(route, "methods", None)
        if methods:
            yield from ((f"{method} {path}", route) for method in sorted(methods))
        elif "websocket" in type(route).__name__.lower():
            yield f"WEBSOCKET {path}", route
        else:
            yield f"* {path}", route


class RouteGate:
    """ASGI middleware: each HTTP or web-socket request reaches the app only when `ROUTES` lets the caller's role
    reach the route it names (see the module docstring); otherwise 401 (not logged in), 403 (a rater) or 404 (no
    listed route), as JSON `{"detail": ...}`, before the request body is read."""

    def __init__(
        self, app: Any, accounts: Accounts, settings: Settings | None = None, studies: Studies | None = None
    ) -> None:
        settings = settings or Settings()
        self.app = app
        self.accounts = accounts
        self.studies = studies
        """Crowd studies (`workbench.studies.Studies`); None: study links are not served (404)."""
        self.sessions = SessionClock(settings.session_idle_minutes * 60.0, settings.session_max_hours * 3600.0)
        """Idle and absolute lifetime of every login session (`Settings.session_idle_minutes`, `session_max_hours`)."""
        self.upload_bytes = settings.max_upload_mb * MiB * FILES_PER_UPLOAD + MiB
        """Largest upload request: `FILES_PER_UPLOAD` files of the upload limit, and room for the form around them."""
        self.event_bytes = settings.max_event_kb * 1024
        self.uploads = UploadQuota(settings.upload_quota_mb * MiB)
        """Bytes each login may upload per hour (`Settings.upload_quota_mb`)."""
        self._patterns = [
            (key, key.split(" ", 1)[0], compile_path(key.split(" ", 1)[1])[0], roles) for key, roles in ROUTES.items()
        ]
        """("METHOD path", method, path regex as Starlette matches it, roles) of every listed route."""
        self._current_user: Callable[[HTTPConnection], Any] | None = None
        self.cookie_id = app_cookie_id(settings.data_dir)
        """The login cookies' name id, the same on every start over this data directory (`session_cookies`); None:
        Gradio's random one."""
        self.ended = EndedSessions()
        """Sessions this server ended by their lifetime (their cookies say "expired", not "restarted")."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "GET") if scope["type"] == "http" else "WEBSOCKET"
        path = _route_path(scope)
        server = scope["app"]
        if self.cookie_id is not None and getattr(server, "cookie_id", None) != self.cookie_id:
            server.cookie_id = self.cookie_id  # before any login sets a cookie: Gradio reads the name from here
        if is_cross_site(scope):
            await self._refuse(scope, receive, send, 403, CROSS_SITE)
            return
        if path in LOGOUT_PATHS and method != "HEAD":
            if method == "POST":
                await self._logout(scope, receive, send)
            else:
                await self._refuse(scope, receive, send, 405, LOGOUT_BY_POST)
            return
        if path.startswith(STUDY_PREFIX) and scope["type"] == "http":
            await self.study_link(scope, receive, send, method, path)
            return
        roles = self.roles_reaching(method, path)
        if not roles:
            await self._refuse(scope, receive, send, 404, NOT_SERVED)
            return
        user, role = await self._caller(scope, use=not path.startswith(HEARTBEAT_PREFIX))
        if role == PARTICIPANT and path == "/" and method == "GET" and user is not None:
            done = await self._finished_redirect(user)
            if done is not None:
                await RedirectResponse(done, status_code=303)(scope, receive, send)
                return
        if role in roles:
            ended = self.ended_notice(scope, server) if role == ANONYMOUS and path == "/" else None
            own = role_view.answer(scope, path, user, role, ended=ended) if scope["type"] == "http" else None
            if own is not None:
                await own(scope, receive, send)
            elif scope["type"] == "websocket":
                await self.app(scope, receive, send)
            else:
                await self._bounded(scope, receive, send, self.route_of(method, path), user, role)
        elif role == ANONYMOUS:
            await self._refuse(scope, receive, send, 401, NEEDS_LOGIN)
        elif role == PARTICIPANT:
            await self._refuse(scope, receive, send, 403, PARTICIPANT_ONLY)
        else:
            await self._refuse(scope, receive, send, 403, ADMIN_LOGIN_NEEDED)

    async def study_link(self, scope: Any, receive: Any, send: Any, method: str, path: str) -> None:
        """Answer a crowd study link (see the module docstring): start or resume its participant, give the browser
        the participant's session and send it to the page; refuse anything else in plain text, creating nothing."""
        if self.studies is None:
            await self._refuse(scope, receive, send, 404, NOT_SERVED)
            return
        if method != "GET":  # a HEAD (a link checker, a preview) starts nobody
            await PlainTextResponse("open a study link in the browser (GET)", status_code=405)(scope, receive, send)
            return
        request = Request(scope)
        token = path[len(STUDY_PREFIX) :]
        query = {key: request.query_params[key] for key in request.query_params}
        try:
            joined = await anyio.to_thread.run_sync(self.studies.open_link, token, query)
        except StudyLinkUnknown as exc:
            answer = PlainTextResponse(str(exc), status_code=404)
        except StudyClosed as exc:
            answer = PlainTextResponse(str(exc), status_code=410)
        except InputError as exc:
            answer = PlainTextResponse(str(exc), status_code=400)
        except WorkbenchError as exc:
            answer = PlainTextResponse(f"the study cannot be opened now: {exc}", status_code=503)
        else:
            server = scope["app"]
            session = secrets.token_urlsafe(16)
            server.tokens[session] = joined.rater
            answer = RedirectResponse("../" * (path.count("/") - 1) or "./", status_code=303)
            secure, plain = _cookie_names(server)
            answer.set_cookie(secure, session, httponly=True, samesite=PARTICIPANT_COOKIE_SAMESITE, secure=True)
            answer.set_cookie(plain, session, httponly=True, samesite=PARTICIPANT_COOKIE_SAMESITE)
        answer.headers["Cache-Control"] = "no-store"
        answer.headers["Referrer-Policy"] = "no-referrer"  # the link's secret never leaves in a Referer header
        await answer(scope, receive, send)

    async def _finished_redirect(self, user: str) -> str | None:
        """The redirect URL of a finished participant's study (None while they rate, or without one)."""
        if self.studies is None:
            return None
        try:
            done = await anyio.to_thread.run_sync(self.studies.finished, user)
        except WorkbenchError:
            return None
        return done.redirect_url if done is not None else None

    def body_limit(self, route: str | None, role: str) -> int:
        """Most bytes the body of a request to `route` ("METHOD path" of `ROUTES`) may hold for `role`."""
        if route in UPLOAD_ROUTES:
            return self.upload_bytes
        if route in EVENT_ROUTES:
            return self.event_bytes if role == ADMIN else RATER_EVENT_BYTES
        return SMALL_BODY_BYTES

    async def _bounded(self, scope: Any, receive: Any, send: Any, route: str | None, user: str | None, role: str):
        """Pass the request on with its body bounded (`body_limit`): refused before it is read when its declared
        length is over the limit (413), or when it is an upload past the login's quota (429); cut off with 413 as
        soon as a body sent without a length passes the limit."""
        limit = self.body_limit(route, role)
        declared = content_length(scope)
        if declared is not None and declared > limit:
            await self._refuse(scope, receive, send, 413, too_large(declared, limit))
            return
        if route in UPLOAD_ROUTES:
            try:
                self.uploads.take(user or "", declared if declared is not None else limit)
            except UploadQuotaExceeded as exc:
                await self._refuse(scope, receive, send, 429, str(exc))
                return
        started = False

        async def watched(message: Any) -> None:
            nonlocal started
            started = started or message.get("type") == "http.response.start"
            await send(message)

        receive = limited_receive(receive, limit)
        try:
            if route in EVENT_ROUTES:
                body = await read_body(receive)
                refused = event_refusal(scope["app"].get_blocks(), route, _route_path(scope), body, role)
                if refused is not None:
                    await self._refuse(scope, receive, send, *refused)
                    return
                receive = replay(body, receive)
            await self.app(scope, receive, watched)
        except BodyTooLarge as exc:
            if started:
                raise
            await self._refuse(scope, receive, send, 413, exc.detail)

    def route_of(self, method: str, path: str) -> str | None:
        """The first listed route ("METHOD path") that `method path` matches; None when none does."""
        return next((key for key, m, pattern, _ in self._patterns if m == method and pattern.match(path)), None)

    async def _logout(self, scope: Any, receive: Any, send: Any) -> None:
        """End the request's login session on the server and clear its cookies (a 200 even without one)."""
        server = scope["app"]
        token = _session_token(scope, server)
        if token is not None:
            server.tokens.pop(token, None)
            self.sessions.forget(token)
        response = JSONResponse({"detail": "logged out"})
        for name in _cookie_names(server):
            response.delete_cookie(key=name, path="/")
        await response(scope, receive, send)

    @staticmethod
    async def _refuse(scope: Any, receive: Any, send: Any, status: int, message: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": WEBSOCKET_POLICY_VIOLATION})
            return
        await JSONResponse({"detail": message}, status_code=status)(scope, receive, send)

    def ended_notice(self, scope: Any, server: Any) -> tuple[str, tuple[str, ...]] | None:
        """(what the login page says, the cookies to clear) for a visitor whose cookie of this app names a session
        the server does not know (`session_cookies`: ended by its lifetime, else by a restart); None for a visitor
        without one, and when the app's cookie name is not kept (`cookie_id` None: a restart is not told apart)."""
        if self.cookie_id is None:
            return None
        cookies = HTTPConnection(scope).cookies
        names = _cookie_names(server)
        stale = next((cookies[name] for name in names if cookies.get(name)), None)
        if stale is None or stale in getattr(server, "tokens", {}):
            return None
        return self.ended.ended_notice(stale), names

    def roles_reaching(self, method: str, path: str) -> frozenset[str]:
        """The roles that reach `method path`: those of every listed route it matches (all of them, when several
        do: FastAPI serves the first, the gate does not guess which); empty when none does."""
        found: frozenset[str] | None = None
        for _, route_method, pattern, roles in self._patterns:
            if route_method == method and pattern.match(path):
                found = roles if found is None else found & roles
        return found or frozenset()

    async def _caller(self, scope: Any, *, use: bool = True) -> tuple[str | None, str]:
        """(login name, role) of the request's session cookie; (None, ANONYMOUS) without a valid one. A session
        past its idle or absolute lifetime (`sessions`) is ended here; `use` counts the request as a use of it."""
        server = scope["app"]
        token = _session_token(scope, server)
        if token is not None and not self.sessions.alive(token, use=use):
            server.tokens.pop(token, None)
            self.ended.add(token)
            return None, ANONYMOUS
        connection = Request(scope) if scope["type"] == "http" else HTTPConnection(scope)
        user = self._current_user_reader(server)(connection)
        if inspect.isawaitable(user):
            user = await user
        if not user:
            return None, ANONYMOUS
        try:
            return user, self.accounts.role_of(user)
        except AccessDenied:
            pass
        if self.studies is not None and await self._is_participant(user):
            return user, PARTICIPANT
        return None, ANONYMOUS

    async def _is_participant(self, user: str) -> bool:
        assert self.studies is not None
        try:
            return await anyio.to_thread.run_sync(self.studies.is_participant, user)
        except WorkbenchError:
            return False

    def _current_user_reader(self, app: Any) -> Callable[[HTTPConnection], Any]:
        if self._current_user is None:
            found = [route.endpoint for key, route in served_routes(app.routes) if key == CURRENT_USER_ROUTE]
            if not found:
                raise RuntimeError(
                    f"Gradio no longer serves {CURRENT_USER_ROUTE}: the route gate cannot tell who is logged in"
                )
            self._current_user = found[0]
        return self._current_user


def event_refusal(blocks: Any, route: str, path: str, body: bytes, role: str) -> tuple[int, str] | None:
    """(status, message) refusing an event request before Gradio reads it, None to let it through: a rater's call
    of an event raters may not run (403), or a call of an event that needs the browser's event data (a click on an
    image, a table row) without it (422), which Gradio would fail with a logged traceback. A body that is not the
    JSON of an event is Gradio's to answer."""
    try:
        data = json.loads(body) if body else {}
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    fn = _event_of(blocks, route, path, data)
    if fn is None:
        return None
    if role == PARTICIPANT and fn._id not in role_view.participant_view(blocks).dependency_ids:
        return 403, PARTICIPANT_ONLY
    if role != ADMIN and not for_raters(fn.fn):
        return 403, ADMIN_LOGIN_NEEDED
    if getattr(fn, "collects_event_data", False) and not isinstance(data.get("event_data"), dict):
        return 422, NEEDS_EVENT_DATA
    return None


def _event_of(blocks: Any, route: str, path: str, data: dict) -> Any:
    """The `BlockFunction` an event request names: by `fn_index` on the queue, by api name on the direct routes."""
    if route == "POST /gradio_api/queue/join":
        index = data.get("fn_index")
        return blocks.fns.get(index) if isinstance(index, int) else None
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return next((fn for fn in blocks.fns.values() if fn.api_name == name), None)


def _cookie_names(server: Any) -> tuple[str, str]:
    """The two cookies Gradio keeps a login session's token in (the `Secure` one and the plain one)."""
    return f"access-token-{server.cookie_id}", f"access-token-unsecure-{server.cookie_id}"


def has_login_session(scope: Any) -> bool:
    """The request carries the token of a login session the server knows (its `access-token-*` cookie)."""
    server = scope.get("app")
    return getattr(server, "cookie_id", None) is not None and _session_token(scope, server) is not None


def _session_token(scope: Any, server: Any) -> str | None:
    """The request's login session token, as Gradio looks it up; None without a valid one."""
    cookies = HTTPConnection(scope).cookies
    token = next((cookies[name] for name in _cookie_names(server) if cookies.get(name)), None)
    return token if token is not None and token in getattr(server, "tokens", {}) else None


def _route_path(scope: Any) -> str:
    """The request's path inside the app (the part after the ASGI root path), as the router matches it."""
    path, root = scope["path"], scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("/", ""):
        return path[len(root) :] or "/"
    return path
