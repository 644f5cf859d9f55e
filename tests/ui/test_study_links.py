"""Crowd study links against the launched app over raw HTTP (`route_gate.RouteGate.study_link`): without the right
secret or a participant id nothing is created and the answer is plain text; a valid link starts or resumes the
participant with a session cookie of its own; a participant reaches the Rate tab of their study and nothing else (no
other tab, no admin or rater-only event, no admin route); a finished participant of a study with a redirect URL is
sent there.

One app per module: demo profile, temporary SQLite database, an admin (`root`) and a rater (`rita`)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from gold_samples import save_samples

from masc_ui.ui.route_gate import NOT_SERVED, PARTICIPANT_ONLY
from masc_ui.workbench.studies import LINK_UNKNOWN, NEEDS_PARTICIPANT

ADMIN, RATER = ("root", "pw-root-123"), ("rita", "pw-rita-123")
DONE_URL = "https://app.prolific.com/submissions/complete?cc=C0DE42"


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
        data_dir=tmp_path_factory.mktemp("study-data"),
        users=f"{ADMIN[0]}:{ADMIN[1]}:admin,{RATER[0]}:{RATER[1]}:rater",
        port=free_port(),
    )
    wb = build_workbench(settings)
    save_samples(wb, tmp_path_factory.mktemp("study-images"), 4)
    served = serve(wb, block=False)
    yield SimpleNamespace(url=served.local_url.rstrip("/"), wb=wb, blocks=served)
    served.close()
    wb.close()


def _study(app, **more):
    fields = dict(user=None, dataset="d", name="pilot", tasks=2, completion_code="C0DE42")
    fields.update(more)
    return app.wb.studies.create(**fields)


def _raters(app) -> set[str]:
    return {r.username for r in app.wb.database.store.ratings.raters()}


def _open(app, path: str) -> tuple[httpx.Client, httpx.Response]:
    http = httpx.Client(base_url=app.url, timeout=60)
    return http, http.get("/" + path.lstrip("/"), follow_redirects=False)


def test_a_link_without_the_right_secret_creates_nothing_and_says_so_in_plain_text(app):
    link = _study(app)
    study_id, secret = link.token.split(".")
    before = _raters(app)
    for path in (
        "study/",
        f"study/{study_id}",
        f"study/{study_id}.?PROLIFIC_PID=p1",
        f"study/{study_id}.{secret[::-1]}?PROLIFIC_PID=p1",
        f"study/{int(study_id) + 50}.{secret}?PROLIFIC_PID=p1",
        f"study/{secret}?PROLIFIC_PID=p1",
    ):
        http, answer = _open(app, path)
        assert (answer.status_code, answer.text) == (404, LINK_UNKNOWN), path
        assert answer.headers["content-type"].startswith("text/plain")
        assert "set-cookie" not in answer.headers
        assert http.get("/config").status_code == 401  # no session came with it
    http, answer = _open(app, f"study/{link.token}")
    assert (answer.status_code, answer.text) == (400, NEEDS_PARTICIPANT)
    assert "set-cookie" not in answer.headers
    assert _open(app, f"study/{link.token}?PROLIFIC_PID=a%20b")[1].status_code == 400
    assert httpx.post(f"{app.url}/study/{link.token}?PROLIFIC_PID=p1").status_code == 405
    assert httpx.head(f"{app.url}/study/{link.token}?PROLIFIC_PID=p1").status_code == 405
    assert _raters(app) == before
    assert app.wb.studies.participants(user=None, study_id=link.study.id) == []
    app.wb.studies.close(user=None, study_id=link.study.id)
    assert _open(app, f"study/{link.token}?PROLIFIC_PID=p1")[1].status_code == 410
    assert _raters(app) == before


def test_a_link_starts_a_participant_once_with_a_session_cookie_of_its_own(app):
    link = _study(app)
    http, answer = _open(app, f"study/{link.token}?PROLIFIC_PID=5f8a&STUDY_ID=S1&SESSION_ID=X1")
    assert answer.status_code == 303 and answer.headers["location"] == "../"
    assert answer.headers["referrer-policy"] == "no-referrer"
    cookies = answer.headers.get_list("set-cookie")
    assert len(cookies) == 2 and all("HttpOnly" in c and "SameSite=lax" in c for c in cookies)
    assert "set-cookie" not in http.get("/").headers  # the page
    config = http.get("/config").json()
    assert config["username"] == f"study{link.study.id}:5f8a"
    ids = {c.get("props", {}).get("elem_id") for c in config["components"]}
    assert {"rate-submit", "rate-cp", "tab-rate"} <= ids
    assert not ids & {"tab-pairs", "tab-score", "tab-raters", "tab-browse", "logout", "pair-submit"}
    info = http.get("/gradio_api/info").json()
    assert info["named_endpoints"] and all(
        name.startswith("/rate_") and not name.startswith("/rate_pair") for name in info["named_endpoints"]
    )
    # The same participant id again: the same participant, never a second one.
    again, answer = _open(app, f"study/{link.token}?PROLIFIC_PID=5f8a&SESSION_ID=X2")
    assert answer.status_code == 303
    assert again.get("/config").json()["username"] == config["username"]
    found = app.wb.studies.participants(user=None, study_id=link.study.id)
    assert [(p.participant, p.platform_study, p.platform_session) for p in found] == [("5f8a", "S1", "X2")]


def test_a_participant_reaches_nothing_but_their_rating_page(app):
    link = _study(app)
    http, _ = _open(app, f"study/{link.token}?participant=nosy")
    blocks = app.blocks
    for method, path in (
        ("GET", "/openapi.json"),
        ("GET", "/gradio_api/user"),
        ("POST", "/gradio_api/upload"),
        ("POST", "/gradio_api/component_server"),
        ("GET", "/monitoring"),
    ):
        answer = http.request(method, path)
        assert (answer.status_code, answer.json()["detail"]) == (403, PARTICIPANT_ONLY), path
    assert http.get("/no-such-route").json()["detail"] == NOT_SERVED
    # Events: another tab's (a rater's pairwise event, an admin's) are refused before Gradio reads them.
    for name in ("rate_pair_open", "open_sample"):
        index = next(i for i, fn in blocks.fns.items() if fn.api_name == name)
        answer = http.post("/gradio_api/queue/join", json={"fn_index": index, "data": [], "session_hash": "abcdefgh12"})
        assert (answer.status_code, answer.json()["detail"]) == (403, PARTICIPANT_ONLY), name
    answer = http.post("/gradio_api/run/rate_pair_submit", json={"data": []})
    assert answer.status_code == 403
    # Logging in with the participant's rater name is impossible: it is no login.
    login = httpx.post(f"{app.url}/login", data={"username": f"study{link.study.id}:nosy", "password": "x"})
    assert login.status_code == 400


def test_a_finished_participant_is_sent_to_the_redirect_url(app):
    link = _study(app, tasks=1, completion_code=None, redirect_url=DONE_URL)
    http, _ = _open(app, f"study/{link.token}?participant=quick")
    rater = f"study{link.study.id}:quick"
    assert http.get("/", follow_redirects=False).status_code == 200
    task = app.wb.ratings.next_task(rater)
    app.wb.ratings.submit(rater, task.sample_id, {"cp": 2, "pf": 2})
    assert app.wb.ratings.next_task(rater) is None
    answer = http.get("/", follow_redirects=False)
    assert (answer.status_code, answer.headers["location"]) == (303, DONE_URL)
    _, answer = _open(app, f"study/{link.token}?participant=quick")
    assert answer.status_code == 303  # the link again: the page, which sends them on
