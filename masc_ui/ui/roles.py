"""Every endpoint of the app behind one gate: roles, per-client rate limits, and errors that leak nothing.

Gradio keeps the endpoints of tabs a rater does not see (anyone can call them with gradio_client or raw HTTP),
so `guard_endpoints` wraps every registered function after the app is built:
- default deny: a rater may call only the rating endpoints (api names starting with `rate_`) and the functions
  given as `for_raters` (the page-load handlers); any other call by a rater is refused. The use cases check the
  role again (`masc_ui.workbench.users.Accounts`), so a handler added later stays closed even if it forgets;
- heavy endpoints take one request from the caller's rate-limit bucket (`masc_ui.workbench.quotas`); the caller
  is the login name, or the client's address when the app runs without logins;
- an exception a handler did not turn into a message is logged with its traceback and shown as a plain
  "something went wrong" (no traceback, SQL or server path reaches the browser).
The HTTP routes themselves (Gradio's files, uploads, queue, component server functions) are behind the same roles
one step earlier, in `route_gate`.
"""

from __future__ import annotations

import functools
import inspect
import ipaddress
import logging
from collections.abc import Callable, Iterable
from typing import Any

import gradio as gr
from gradio.context import LocalContext

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.quotas import RateLimits

log = logging.getLogger(__name__)

RATER_PREFIX = "rate_"
"""Api names of the endpoints raters may call."""
HEAVY = {
    "run": "model",
    "explain": "model",
    "explain_catalogue": "model",
    "mask_sensitivity": "model",
    "on_click": "model",
    "on_undo": "model",
    "on_by_name": "model",
    "save": "save",
    "save_new": "save",
    "export": "export",
    "agreement": "analysis",
    "browse": "analysis",
    "compare": "model",
    "leaderboard": "analysis",
    "pairwise_report": "analysis",
    "video_load": "model",
    "video_mask_by_name": "model",
    "browse_poster": "preview",
}
"""Api name -> rate-limit kind (`masc_ui.workbench.quotas.LIMITS`)."""
ADMIN_LOGIN_NEEDED = "this part of the app needs an admin login; raters only rate their own tasks"
"""What a rater is told for an endpoint or a route (`route_gate`) that only admins reach."""
UNEXPECTED = "something went wrong on the server; the error was logged. Try again, or tell the administrator."


def client_of(request: Any, proxies: TrustedProxies | None = None) -> str:
    """The caller's rate-limit key: its login name, else its address (`client_address`)."""
    name = getattr(request, "username", None)
    if name:
        return f"user:{name}"
    return f"address:{client_address(request, proxies)}"


class TrustedProxies:
    """The reverse proxies whose `X-Forwarded-For` the app believes (`Settings.trusted_proxies`)."""

    def __init__(self, text: str | None) -> None:
        self.networks = tuple(
            ipaddress.ip_network(t.strip(), strict=False) for t in (text or "").split(",") if t.strip()
        )

    def __str__(self) -> str:
        """The networks, comma-separated (as uvicorn's `forwarded_allow_ips` reads them)."""
        return ",".join(str(network) for network in self.networks)

    def __contains__(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def client(self, host: str, forwarded: str | None) -> str:
        """The client's address of a connection from `host` carrying `X-Forwarded-For: forwarded`: `host` unless it
        is a trusted proxy; then the last forwarded entry that is not a trusted proxy (each proxy appends the
        address it was reached from, so entries further left are whatever the client chose to send)."""
        if host not in self or not forwarded:
            return host
        for entry in reversed([e.strip() for e in forwarded.split(",")]):
            if entry and entry not in self:
                return entry
        return host


def client_address(request: Any, proxies: TrustedProxies | None = None) -> str:
    """The client's address of `request`: the connection's, or, from a trusted proxy, the entry of
    `X-Forwarded-For` that proxy appended (`TrustedProxies.client`); without `proxies` the header is ignored."""
    host = getattr(getattr(request, "client", None), "host", None) or "unknown"
    headers = getattr(request, "headers", None) or {}
    forwarded = headers.get("x-forwarded-for") if hasattr(headers, "get") else None
    return (proxies or NO_PROXIES).client(host, forwarded)


def guard_endpoints(
    app: gr.Blocks, wb: Workbench, *, for_raters: Iterable[Callable] = (), limits: RateLimits | None = None
) -> None:
    """Wrap every function registered on `app` (see the module docstring)."""
    limits = limits or RateLimits()
    allowed = {id(fn) for fn in for_raters}
    for block_fn in app.fns.values():
        for component in block_fn.inputs:
            _quiet_input_checks(component)
        fn = block_fn.fn
        if fn is None or getattr(fn, "_masc_guarded", False):
            continue
        api_name = block_fn.api_name if isinstance(block_fn.api_name, str) else ""
        raters_ok = api_name.startswith(RATER_PREFIX) or id(fn) in allowed
        block_fn.fn = _guarded(fn, wb, raters_ok, HEAVY.get(api_name), limits)


NO_PROXIES = TrustedProxies(None)


def refusal(message: str) -> gr.Error:
    """The error a caller is shown for `message`, without Gradio printing its traceback to the server's log: a
    refused role, a quota or a bad input is an answer, not a fault of the server (under load or an attack, a
    30-line traceback per refused call flooded the log; `bench/rating_load.py`'s rate-limited Saves)."""
    return gr.Error(message, print_exception=False)


def _guarded(fn: Callable, wb: Workbench, raters_ok: bool, kind: str | None, limits: RateLimits) -> Callable:
    proxies = TrustedProxies(wb.settings.trusted_proxies)

    def check() -> None:
        request = LocalContext.request.get(None)
        user = getattr(request, "username", None)
        if user is not None and not raters_ok and not wb.accounts.is_admin(user):
            raise refusal(ADMIN_LOGIN_NEEDED)
        if kind is not None:
            try:
                limits.take(client_of(request, proxies), kind)
            except WorkbenchError as exc:
                raise refusal(str(exc)) from None

    def unexpected(exc: Exception) -> gr.Error:
        log.error("unexpected error in %s", getattr(fn, "__name__", fn), exc_info=exc)
        return refusal(UNEXPECTED)  # logged once just above, with its traceback

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            check()
            try:
                yield from fn(*args, **kwargs)
            except gr.Error:
                raise
            except WorkbenchError as exc:
                raise refusal(str(exc)) from None
            except Exception as exc:
                raise unexpected(exc) from None
    elif inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            check()
            try:
                return await fn(*args, **kwargs)
            except gr.Error:
                raise
            except WorkbenchError as exc:
                raise refusal(str(exc)) from None
            except Exception as exc:
                raise unexpected(exc) from None
    else:

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            check()
            try:
                return fn(*args, **kwargs)
            except gr.Error:
                raise
            except WorkbenchError as exc:
                raise refusal(str(exc)) from None
            except Exception as exc:
                raise unexpected(exc) from None

    wrapper._masc_guarded = True  # type: ignore[attr-defined]
    wrapper._masc_for_raters = raters_ok  # type: ignore[attr-defined]
    return wrapper


def _quiet_input_checks(component: Any) -> None:
    """Make the input checks of `component` (Gradio's own: a Radio value outside its choices, ...) refusals: the
    caller gets the message, the log no traceback (Gradio prints one for every `gr.Error` that asks for it)."""
    preprocess = getattr(component, "preprocess", None)
    if preprocess is None or getattr(preprocess, "_masc_quiet", False):
        return

    @functools.wraps(preprocess)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        try:
            return preprocess(*args, **kwargs)
        except gr.Error as exc:
            if not exc.print_exception:
                raise
            raise refusal(str(exc.message)) from None

    quiet._masc_quiet = True  # type: ignore[attr-defined]
    component.preprocess = quiet


def for_raters(fn: Callable | None) -> bool:
    """True for a function `guard_endpoints` lets raters call (what a rater's page may hold: `role_view`)."""
    return bool(getattr(fn, "_masc_for_raters", False))
