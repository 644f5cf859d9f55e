"""A login session the server no longer knows is said on the login page (`masc_ui.workbench.session_cookies`,
`masc_ui.ui.route_gate.RouteGate.ended_notice`), over raw HTTP: the server restarted over the same data directory,
or it ended the session by its lifetime; said once, and never for a cookie of another app on the same host."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import httpx

from masc_ui.workbench.session_cookies import COOKIE_ID_FILE, EXPIRED, RESTARTED, app_cookie_id

RATER = ("rita", "pw-rita-123")


def _serve(data_dir: Path, demo_weights: Path):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    settings = Settings(
        profile="demo",
        demo_weights_dir=demo_weights,
        device="cpu",
        dtype="float32",
        data_dir=data_dir,
        users=f"root:pw-root-123:admin,{RATER[0]}:{RATER[1]}:rater",
        port=free_port(),
    )
    wb = build_workbench(settings)
    return wb, serve(wb, block=False)


def _auth_message(page: httpx.Response) -> str | None:
    """The login message of a login page (Gradio's config embedded in it)."""
    found = re.search(r"window\.gradio_config = (\{.*?\});\s*</script>", page.text, re.S)
    assert found, page.text[:300]
    return json.loads(found.group(1)).get("auth_message")


def _cleared(page: httpx.Response) -> set[str]:
    """Names of the cookies the answer deletes (an expired Set-Cookie)."""
    return {
        h.split("=", 1)[0]
        for h in page.headers.get_list("set-cookie")
        if "max-age=0" in h.lower() or "expires=thu, 01 jan 1970" in h.lower()
    }


def test_a_restart_is_said_once_on_the_login_page(demo_weights: Path, tmp_path: Path):
    data = tmp_path / "data"
    wb, app = _serve(data, demo_weights)
    try:
        url = app.local_url.rstrip("/")
        http = httpx.Client(base_url=url, timeout=60)
        assert http.post("/login", data={"username": RATER[0], "password": RATER[1]}).status_code == 200
        cookies = dict(http.cookies)
        cookie_id = (data / COOKIE_ID_FILE).read_text().strip()
        assert set(cookies) == {f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"}
        assert "gradio_config" in httpx.get(url, cookies=cookies).text  # logged in: the app
        assert "session-ended" not in httpx.get(url, cookies=cookies).text
    finally:
        app.close()
        wb.close()
    wb, app = _serve(data, demo_weights)  # the same data directory
    try:
        url = app.local_url.rstrip("/")
        assert httpx.get(f"{url}/config", cookies=cookies).status_code == 401  # the old session is gone
        page = httpx.get(url, cookies=cookies)
        message = _auth_message(page)
        assert message.startswith("MaSC Workbench: log in with your account.")
        assert f'<p id="session-ended" role="alert"><strong>⚠ {html.escape(RESTARTED)}</strong></p>' in message
        assert _cleared(page) == set(cookies)  # said once: the stale cookies go with it
        assert _auth_message(httpx.get(url)) == "MaSC Workbench: log in with your account."
        other = {"access-token-someotherapp": "x", "access-token-unsecure-someotherapp": "x"}
        page = httpx.get(url, cookies=other)  # another app's cookie on this host: not ours to speak of
        assert "session-ended" not in _auth_message(page) and not _cleared(page)
        # The server ends a session by its idle lifetime: that is what its cookie then says.
        http = httpx.Client(base_url=url, timeout=60)
        assert http.post("/login", data={"username": RATER[0], "password": RATER[1]}).status_code == 200
        assert http.get("/config").status_code == 200  # the gate's clock starts with this use
        gate = app.server_app.middleware_stack
        while not hasattr(gate, "ended_notice"):
            gate = gate.app
        clock = gate.sessions._clock
        gate.sessions._clock = lambda: clock() + gate.sessions.idle_s + 1
        try:
            assert http.get("/config").status_code == 401
        finally:
            gate.sessions._clock = clock
        assert html.escape(EXPIRED) in _auth_message(http.get("/"))
    finally:
        app.close()
        wb.close()


def test_the_cookie_id_is_kept_in_the_data_directory(tmp_path: Path):
    first = app_cookie_id(tmp_path / "d")
    assert first and app_cookie_id(tmp_path / "d") == first and app_cookie_id(tmp_path / "e") != first
    assert (tmp_path / "d" / COOKIE_ID_FILE).stat().st_mode & 0o777 == 0o600
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    assert app_cookie_id(not_a_folder) is None  # Gradio's random id then; a restart is not told apart
