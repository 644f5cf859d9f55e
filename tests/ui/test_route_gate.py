"""Every HTTP route of the launched app behind the caller's role (`masc_ui.ui.route_gate`), and the image editors'
server function bounded per page session (`masc_ui.ui.editor_blobs`), replayed with raw HTTP.

One app per module: demo profile, temporary SQLite database, uploads capped at 1 MiB (so one page session holds
at most 3 MiB of editor blobs), an admin (`root`) and a rater (`rita`)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from masc_ui.ui.editor_blobs import MAX_EDITOR_LAYERS, SESSION_UPLOADS, MiB, blobs_of
from masc_ui.ui.roles import ADMIN_LOGIN_NEEDED
from masc_ui.ui.route_gate import ADMIN, ANONYMOUS, NEEDS_LOGIN, RATER, ROUTES, served_routes

ADMIN_LOGIN, RATER_LOGIN = ("root", "pw-root-123"), ("rita", "pw-rita-123")
UPLOAD_MB = 1
PLACEHOLDER = re.compile(r"\{[^}]+\}")


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
        data_dir=tmp_path_factory.mktemp("gate-data"),
        max_upload_mb=UPLOAD_MB,
        port=free_port(),
        users=f"{ADMIN_LOGIN[0]}:{ADMIN_LOGIN[1]}:admin,{RATER_LOGIN[0]}:{RATER_LOGIN[1]}:rater",
    )
    wb = build_workbench(settings)
    served = serve(wb, block=False)
    yield SimpleNamespace(url=served.local_url.rstrip("/"), wb=wb, blocks=served)
    served.close()
    wb.close()


def _client(app, login: tuple[str, str] | None) -> httpx.Client:
    http = httpx.Client(base_url=app.url, timeout=60)
    if login is not None:
        assert http.post("/login", data={"username": login[0], "password": login[1]}).status_code == 200
    return http


def _editor_ids(app) -> list[int]:
    config = _client(app, ADMIN_LOGIN).get("/config").json()
    ids = [c["id"] for c in config["components"] if c.get("type") == "imageeditor"]
    assert len(ids) == 2, ids  # the Score tab's mask editor and the video mask editor
    return ids


def _send_blob(http: httpx.Client, component_id: int, session: str, blob_id: str, kind: str, index, data: bytes):
    form = {
        "component_id": str(component_id),
        "fn_name": "accept_blobs",
        "session_hash": session,
        "type": kind,
        "index": str(index),
        "id": blob_id,
    }
    return http.post("/gradio_api/component_server", data=form, files={"file": ("blob.png", data)})


def _gate_said(body: bytes) -> str | None:
    """The route gate's refusal in a 401/403 answer's `body`, None when the gate let the request through."""
    try:
        detail = json.loads(body).get("detail")
    except (ValueError, AttributeError):
        return None
    return detail if detail in (NEEDS_LOGIN, ADMIN_LOGIN_NEEDED) else None


# --- every route is classified --------------------------------------------------------------------------------


def test_every_route_gradio_serves_is_classified(app):
    """A route a new Gradio adds fails here until someone decides which roles reach it (`route_gate.ROUTES`)."""
    served = {key for key, _ in served_routes(app.blocks.server_app.routes)}
    assert not served - set(ROUTES), f"routes nobody classified: {sorted(served - set(ROUTES))}"
    assert not set(ROUTES) - served, f"classified routes Gradio no longer serves: {sorted(set(ROUTES) - served)}"
    assert "POST /gradio_api/component_server" in served and ROUTES["POST /gradio_api/component_server"] == {ADMIN}


@pytest.mark.parametrize("role, login", [(ANONYMOUS, None), (RATER, RATER_LOGIN)])
def test_each_role_reaches_exactly_its_routes(app, role, login):
    """Every route of the server, called as `role` with placeholder parameters: refused by the gate (401 before a
    login, 403 for a rater) unless `ROUTES` lets the role reach it. Logging out comes last (it ends the login)."""
    http = _client(app, login)
    routes = sorted({key for key, _ in served_routes(app.blocks.server_app.routes)}, key=lambda k: k == "GET /logout")
    reached, refused = [], []
    for key in routes:
        method, path = key.split(" ", 1)
        url = PLACEHOLDER.sub("x", path)
        with http.stream(method, url, follow_redirects=False) as response:  # streams (heartbeat) are not read
            status = response.status_code
            said = _gate_said(response.read()) if status in (401, 403) else None
        if role in ROUTES[key]:
            assert said is None, (key, status, said)
            reached.append(key)
        else:
            expected = (401, NEEDS_LOGIN) if role == ANONYMOUS else (403, ADMIN_LOGIN_NEEDED)
            assert (status, said) == (expected if method != "HEAD" else (expected[0], None)), key  # HEAD: no body
            refused.append(key)
    assert "GET /" in reached and "POST /login" in reached and "POST /gradio_api/component_server" in refused
    assert ("GET /gradio_api/heartbeat/{session_hash}" in reached) == (role == RATER)
    assert ("POST /gradio_api/upload" in refused) and ("GET /gradio_api/file={path_or_url:path}" in reached) == (
        role == RATER
    )


def test_an_anonymous_visitor_gets_the_login_page_and_nothing_else(app):
    anonymous = _client(app, None)
    page = anonymous.get("/")
    assert page.status_code == 200 and '"auth_required":true' in page.text  # Gradio's login page
    for path in ("/config", "/gradio_api/info", "/openapi.json", "/gradio_api/queue/status"):
        answer = anonymous.get(path)
        assert (answer.status_code, answer.json()["detail"]) == (401, NEEDS_LOGIN), path
    assert anonymous.get("/no/such/page").status_code == 404


# --- the image editors' server function --------------------------------------------------------------------------


def test_a_rater_cannot_reach_the_image_editor_server_function(app):
    blobs = blobs_of(app.blocks)
    rater = _client(app, RATER_LOGIN)
    for component_id in _editor_ids(app):
        refused = _send_blob(rater, component_id, "rater-session", "y", "layer", 100_000_000, b"\0" * 1024)
        assert (refused.status_code, refused.json()["detail"]) == (403, ADMIN_LOGIN_NEEDED)
    assert blobs.held_bytes() == 0 and len(blobs) == 0  # nothing reached the editors


def test_an_admins_huge_layer_index_is_refused_with_a_clear_message(app):
    blobs = blobs_of(app.blocks)
    admin = _client(app, ADMIN_LOGIN)
    editor = _editor_ids(app)[0]
    for index in (100_000_000, MAX_EDITOR_LAYERS, -1):
        refused = _send_blob(admin, editor, "admin-index", "e1", "layer", index, b"\0" * 1024)
        assert refused.status_code == 422
        assert refused.json()["detail"] == (
            f"layer index {index} is out of range: an image editor here has at most "
            f"{MAX_EDITOR_LAYERS} layers (index 0 to {MAX_EDITOR_LAYERS - 1})"
        )
    assert blobs.held_bytes("admin-index") == 0
    for kind, index, message in (
        ("sticker", 0, "unknown editor blob type 'sticker'"),
        ("layer", "two", "layer index 'two' is not a whole number"),
    ):
        refused = _send_blob(admin, editor, "admin-index", "e1", kind, index, b"\0" * 1024)
        assert refused.status_code == 422 and message in refused.json()["detail"]
    kept = _send_blob(admin, editor, "admin-index", "e1", "layer", 0, b"\0" * 1024)
    assert kept.status_code == 200, kept.text
    assert blobs.held_bytes("admin-index") == 1024
    blobs.end_session("admin-index")


def test_a_sessions_editor_blobs_are_bounded_and_dropped_when_the_session_ends(app):
    blobs = blobs_of(app.blocks)
    admin = _client(app, ADMIN_LOGIN)
    editor = _editor_ids(app)[0]
    blob = b"\x89" * (UPLOAD_MB * MiB - 64 * 1024)  # just under the upload limit: Gradio's form parser takes it
    session = "admin-page-1"
    with admin.stream("GET", f"/gradio_api/heartbeat/{session}") as heartbeat:  # the page is open
        assert heartbeat.status_code == 200
        answers = [
            _send_blob(admin, editor, session, f"edit-{i}", "background", "null", blob)
            for i in range(SESSION_UPLOADS + 1)
        ]
        assert [a.status_code for a in answers] == [200] * SESSION_UPLOADS + [413]
        assert "one session holds at most 3 MiB: apply the edit or reload the page" in answers[-1].json()["detail"]
        assert blobs.held_bytes(session) == SESSION_UPLOADS * len(blob) <= SESSION_UPLOADS * UPLOAD_MB * MiB
        # Another page session has a budget of its own.
        assert _send_blob(admin, editor, "admin-page-2", "edit-p2", "background", "null", blob).status_code == 200
    # The page closed (its heartbeat stopped): Gradio's unload event drops the session's blobs.
    for _ in range(600):
        if blobs.held_bytes(session) == 0:
            break
        time.sleep(0.1)
    assert blobs.held_bytes(session) == 0
    assert blobs.held_bytes("admin-page-2") == len(blob)  # no heartbeat of that session ended
    blobs.end_session("admin-page-2")


def test_an_edit_is_dropped_once_an_event_reads_it(app):
    """The editor's preprocess reads an edit's blobs by id (what a realtime editor sends with its next event)."""
    import io

    import numpy as np
    from gradio.components.image_editor import EditorData
    from gradio.context import LocalContext
    from PIL import Image

    blobs = blobs_of(app.blocks)
    png = io.BytesIO()
    Image.new("RGBA", (4, 3), (255, 0, 0, 255)).save(png, format="PNG")
    blobs.put("admin-read", "edit-r", "background", None, png.getvalue())
    blobs.put("admin-read", "edit-r", "layer", 0, png.getvalue())
    editor = next(b for b in app.blocks.blocks.values() if getattr(b, "elem_id", None) == "mask-editor")
    token = LocalContext.blocks.set(app.blocks)
    try:
        value = editor.preprocess(EditorData(background=None, layers=[], composite=None, id="edit-r"))
    finally:
        LocalContext.blocks.reset(token)
    assert isinstance(value["background"], np.ndarray) and value["background"].shape[:2] == (3, 4)
    assert len(value["layers"]) == 1 and blobs.held_bytes("admin-read") == 0 and "edit-r" not in blobs


# --- single-user local mode -----------------------------------------------------------------------------------


def test_the_gate_is_installed_only_when_logins_are_configured(tmp_path: Path):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import launch_kwargs
    from masc_ui.ui.route_gate import RouteGate

    def gates(settings) -> list:
        return [m for m in launch_kwargs(settings)["app_kwargs"]["middleware"] if m.cls is RouteGate]

    assert gates(Settings(data_dir=tmp_path)) == []  # no logins: everything as without the gate
    assert len(gates(Settings(data_dir=tmp_path, users="a:b:admin"))) == 1
