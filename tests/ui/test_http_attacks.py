"""An attacker against the launched app over raw HTTP: forged cross-site requests, logging users out with a link,
sessions that never end, huge bodies, uploads without end, forged proxy headers, password sprays, refused input
that floods the log, connections held open (`masc_ui.ui.route_gate` and the checks it makes).

One app per module: demo profile, temporary SQLite database, an admin (`root`) and a rater (`rita`)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from masc_ui.ui.request_guards import CROSS_SITE
from masc_ui.ui.route_gate import LOGOUT_BY_POST, NEEDS_LOGIN, RouteGate

ADMIN, RATER = ("root", "pw-root-123"), ("rita", "pw-rita-123")


@pytest.fixture(scope="module")
def app(demo_weights: Path, tmp_path_factory: pytest.TempPathFactory):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    settings = Settings(
        profile="demo",
        demo_weights_dir=demo_weights,
        device="cpu",
        dtype="float32",
        data_dir=tmp_path_factory.mktemp("attack-data"),
        users=f"{ADMIN[0]}:{ADMIN[1]}:admin,{RATER[0]}:{RATER[1]}:rater",
        port=free_port(),
    )
    wb = build_workbench(settings)
    served = serve(wb, block=False)
    yield SimpleNamespace(url=served.local_url.rstrip("/"), wb=wb, blocks=served, gate=_gate(served))
    served.close()
    wb.close()


def _gate(blocks) -> RouteGate:
    """The running app's route gate (Starlette builds the middleware stack on the first request)."""
    httpx.get(blocks.local_url)
    layer = blocks.server_app.middleware_stack
    while not isinstance(layer, RouteGate):
        layer = layer.app
    return layer


def _login(app, who) -> httpx.Client:
    http = httpx.Client(base_url=app.url, timeout=60)
    assert http.post("/login", data={"username": who[0], "password": who[1]}).status_code == 200
    return http


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- logout, session lifetime, cross-site requests ------------------------------------------------------------------


def test_a_get_logs_nobody_out_and_a_post_ends_the_session_on_the_server(app):
    rater = _login(app, RATER)
    answer = rater.get("/logout", follow_redirects=False)
    assert (answer.status_code, answer.json()["detail"]) == (405, LOGOUT_BY_POST)
    assert rater.get("/config").status_code == 200  # still logged in
    stolen = dict(rater.cookies)
    assert rater.post("/logout").status_code == 200
    again = httpx.get(f"{app.url}/config", cookies=stolen)  # the old cookie is worth nothing now
    assert (again.status_code, again.json()["detail"]) == (401, NEEDS_LOGIN)


def test_sessions_end_after_their_idle_and_absolute_lifetime(app):
    clock = FakeClock()
    app.gate.sessions._clock = clock
    try:
        idle, longest = app.gate.sessions.idle_s, app.gate.sessions.max_s
        assert (idle, longest) == (120 * 60.0, 24 * 3600.0)  # the documented defaults
        rater = _login(app, RATER)
        assert rater.get("/config").status_code == 200
        clock.now += idle - 1
        assert rater.get("/config").status_code == 200  # used in time: the idle clock starts again
        clock.now += idle + 1
        assert rater.get("/config").status_code == 401
        rater = _login(app, RATER)
        for _ in range(int(longest // (idle / 2)) + 1):  # used every half idle time, never idle
            assert rater.get("/config").status_code == 200
            clock.now += idle / 2
        assert rater.get("/config").status_code == 401
    finally:
        app.gate.sessions._clock = __import__("time").monotonic


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
    ],
)
@pytest.mark.parametrize("path", ["/gradio_api/upload", "/gradio_api/component_server", "/logout", "/login"])
def test_state_changing_requests_from_another_site_are_refused(app, headers, path):
    admin = _login(app, ADMIN)
    answer = admin.post(path, headers=headers, files={"files": ("a.txt", b"hello")})
    assert (answer.status_code, answer.json()["detail"]) == (403, CROSS_SITE)
    assert admin.get("/config").status_code == 200  # the cross-site logout did not log anybody out


def test_the_apps_own_page_still_posts(app):
    admin = _login(app, ADMIN)
    own = app.url.removeprefix("http://")
    answer = admin.post(
        "/gradio_api/upload",
        headers={"origin": app.url, "sec-fetch-site": "same-origin"},
        files={"files": ("a.txt", b"hello")},
    )
    assert answer.status_code == 200, (own, answer.text)


# --- request bodies and uploads -----------------------------------------------------------------------------------


def test_a_huge_event_body_is_refused_before_it_is_read(app):
    rater = _login(app, RATER)
    reason = "x" * (2 * 1024 * 1024)
    answer = rater.post("/gradio_api/call/rate_flag", json={"data": ["token", reason]})
    assert answer.status_code == 413 and "at most 64 KiB per request" in answer.json()["detail"], answer.text

    def chunks():  # no Content-Length: counted as it arrives
        yield b'{"data": ["token", "'
        for _ in range(64):
            yield b"x" * 16384
        yield b'"]}'

    answer = rater.post("/gradio_api/call/rate_flag", content=chunks(), headers={"content-type": "application/json"})
    assert answer.status_code == 413 and "at most 64 KiB" in answer.json()["detail"], answer.text
    assert rater.post("/login", data={"username": "x", "password": "y" * 100_000}).status_code == 413
    small = rater.post("/gradio_api/call/rate_flag", json={"data": ["token", "a reason"]})
    assert small.status_code == 200, small.text  # an ordinary answer still goes through


def test_raters_upload_nothing_and_each_login_has_an_upload_quota(app):
    from masc_ui.workbench.quotas import UploadQuota

    rater = _login(app, RATER)
    assert rater.post("/gradio_api/upload", files={"files": ("a.png", b"x" * 1000)}).status_code == 403
    admin, quota = _login(app, ADMIN), app.gate.uploads
    app.gate.uploads = UploadQuota(3 * 1024 * 1024)
    try:
        blob = b"x" * (2 * 1024 * 1024)
        assert admin.post("/gradio_api/upload", files={"files": ("a.bin", blob)}).status_code == 200
        refused = admin.post("/gradio_api/upload", files={"files": ("b.bin", blob)})
        assert refused.status_code == 429 and "upload quota reached" in refused.json()["detail"], refused.text
        assert "MASC_UPLOAD_QUOTA_MB" in refused.json()["detail"]
    finally:
        app.gate.uploads = quota


# --- logins: forwarded addresses, per-account throttling, bounded hash checks ------------------------------------


@pytest.fixture()
def fresh_throttle(app):
    """A throttle with no failures and a clock that stands still (a wait never ends by itself), and the app's again
    afterwards (every test here logs in from 127.0.0.1)."""
    from masc_ui.workbench.users import LoginThrottle

    kept, app.wb.accounts.throttle = app.wb.accounts.throttle, LoginThrottle(clock=FakeClock())
    yield app.wb.accounts.throttle
    app.wb.accounts.throttle = kept


@pytest.fixture()
def behind_proxy(app):
    """The app told that 127.0.0.1 is its reverse proxy (`Settings.trusted_proxies`), for one test."""
    from masc_ui.ui.launch import ClientAddressMiddleware
    from masc_ui.ui.roles import TrustedProxies

    layer = app.blocks.server_app.middleware_stack
    while not isinstance(layer, ClientAddressMiddleware):
        layer = layer.app
    kept, layer.proxies = layer.proxies, TrustedProxies("127.0.0.1")
    yield
    layer.proxies = kept


def _try_login(app, name: str, password: str, forwarded: str | None = None) -> int:
    headers = {"x-forwarded-for": forwarded} if forwarded else {}
    return httpx.post(
        f"{app.url}/login", data={"username": name, "password": password}, headers=headers, timeout=300
    ).status_code


def test_a_forged_forwarded_header_is_not_a_new_address(app, fresh_throttle):
    """Without a trusted proxy X-Forwarded-For is ignored: a spray over many names with a new forged address each
    time is throttled as the one address it comes from."""
    statuses = [_try_login(app, f"guess{i}", "wrong", forwarded=f"203.0.113.{i}") for i in range(8)]
    assert statuses[:5] == [400] * 5 and 429 in statuses[5:], statuses


def test_behind_a_trusted_proxy_only_the_entry_it_appended_counts(app, fresh_throttle, behind_proxy):
    for i in range(7):
        _try_login(app, f"spray{i}", "wrong", forwarded="198.51.100.7")
    assert fresh_throttle.wait_s("198.51.100.7") > 0
    # Entries the client put in front of the proxy's own are whatever it chose: still the same client.
    assert _try_login(app, "spray9", "wrong", forwarded="10.9.9.9, 198.51.100.7") == 429
    assert _try_login(app, *RATER, forwarded="198.51.100.8") == 200  # another client of the proxy


def test_guesses_against_an_account_never_lock_out_its_owner(app, fresh_throttle, behind_proxy):
    """An attacker hitting the admin's name from several addresses gets its wrong answers slowed down; the admin,
    from an address that has not failed, logs in at once with the right password."""
    from masc_ui.workbench.users import FREE_FAILURES

    for i in range(FREE_FAILURES + 1):
        assert _try_login(app, ADMIN[0], "wrong", forwarded=f"192.0.2.{i}") == 400
    assert fresh_throttle.failed(ADMIN[0], None) > 0  # the name's wrong answers are delayed now...
    assert _try_login(app, *ADMIN, forwarded="198.51.100.50") == 200  # ...and its owner is not refused


def test_password_checks_are_bounded_and_a_throttled_address_costs_no_hash(app, fresh_throttle, behind_proxy):
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from masc_ui.ui.launch import LOGIN_CHECKS_AT_ONCE

    accounts, lock = app.wb.accounts, threading.Lock()
    running, most, calls = [0], [0], [0]
    verify = accounts.verify

    def counted(name: str, password: str) -> bool:
        with lock:
            running[0] += 1
            calls[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return verify(name, password)
        finally:
            with lock:
                running[0] -= 1

    accounts.verify = counted
    try:
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda i: _try_login(app, f"s{i}", "w", forwarded=f"192.0.2.{100 + i}"), range(8)))
        assert statuses == [400] * 8 and calls[0] == 8
        assert most[0] <= LOGIN_CHECKS_AT_ONCE, most[0]
        for i in range(7):
            _try_login(app, f"someone{i}", "wrong", forwarded="192.0.2.200")
        before = calls[0]
        assert _try_login(app, "someone", "wrong", forwarded="192.0.2.200") == 429
        assert calls[0] == before  # refused before any hash was computed
    finally:
        del accounts.verify


# --- refused input leaves no traceback ----------------------------------------------------------------------------


def _events(app, *names: str) -> list[dict]:
    config = _login(app, ADMIN).get("/config").json()
    return [d for d in config["dependencies"] if d["api_name"] in names]


def test_refused_input_writes_no_traceback(app, capfd):
    rater, admin = _login(app, RATER), _login(app, ADMIN)
    capfd.readouterr()
    for _ in range(50):
        started = rater.post("/gradio_api/call/rate_submit", json={"data": ["token", 7, 9, ""]})
        assert started.status_code == 200, started.text
        answer = rater.get(f"/gradio_api/call/rate_submit/{started.json()['event_id']}").text
        assert "event: error" in answer and "is not in the list of choices" in answer, answer
    selects = _events(app, "on_click", "on_select", "video_select")
    assert len(selects) == 3
    for event in selects:
        join = {"data": [None] * len(event["inputs"]), "fn_index": event["id"], "session_hash": "s", "event_data": None}
        refused = rater.post("/gradio_api/queue/join", json=join)
        assert refused.status_code == 403 and "admin login" in refused.json()["detail"], refused.text
        refused = admin.post("/gradio_api/queue/join", json=join)
        assert refused.status_code == 422 and "needs the browser's event data" in refused.json()["detail"]
        assert rater.post(f"/gradio_api/call/{event['api_name']}", json={"data": []}).status_code == 403
    log = capfd.readouterr().err
    assert "Traceback" not in log and "TypeError" not in log, log[-2000:]
