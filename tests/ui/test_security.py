"""Issue 12's attacks replayed against the launched app (raw HTTP and gradio_client): each one now fails safely.

One app per module: demo profile, temporary SQLite database, an admin (`root`) and a rater (`rita`)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from gradio_client import Client, handle_file

from masc_ui.ui.upload import NOT_UPLOADED
from masc_ui.workbench.examples import EXAMPLES_DIR

ADMIN, RATER = ("root", "pw-root-123"), ("rita", "pw-rita-123")
RATER_ENDPOINTS = {
    "rate_open",
    "rate_submit",
    "rate_skip",
    "rate_flag",
    "rate_flag_by_enter",
    "rate_back",
    "rate_guide_step",
    "rate_guide_start",
    "rate_guide_show",
    "rate_guide_after_submit",
    "rate_guide_after_skip",
    "rate_guide_after_flag",
    "rate_guide_after_flag_by_enter",
    "rate_practice_answer",
    "rate_practice_next",
    "rate_practice_skip",
    "on_open",
    "rate_pair_open",
    "rate_pair_submit",
    "rate_pair_skip",
    "rate_pair_flag",
    "rate_pair_back",
}
NEEDS_EVENT_DATA = {"on_click", "on_select", "video_select"}
"""Endpoints whose handler takes a `gr.SelectData` (a click on an image or a table row)."""


@pytest.fixture(scope="module")
def app(demo_weights: Path, tmp_path_factory: pytest.TempPathFactory):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    data = tmp_path_factory.mktemp("sec-data")
    settings = Settings(
        profile="demo",
        demo_weights_dir=demo_weights,
        device="cpu",
        dtype="float32",
        data_dir=data,
        users=f"{ADMIN[0]}:{ADMIN[1]}:admin,{RATER[0]}:{RATER[1]}:rater",
        port=free_port(),
    )
    wb = build_workbench(settings)
    ex = EXAMPLES_DIR / "cat-on-grass"
    for i in range(3):
        sample = wb.scoring.make_sample([ex / "ref.jpg"], ex / "out.jpg", f"a cat, take {i}", "cat")
        wb.saving.save(sample, user=None, dataset="secret-set", method=f"secret-method-{i}", names=["clip_i"])
    wb.samples.set_for_rating("secret-set", True, user=None)  # raters' tasks come from datasets marked for rating
    served = serve(wb, block=False)
    yield SimpleNamespace(url=served.local_url.rstrip("/"), wb=wb, data=data, blocks=served)
    served.close()
    wb.close()


def _http(app, who) -> httpx.Client:
    http = httpx.Client(base_url=app.url, timeout=60)
    assert http.post("/login", data={"username": who[0], "password": who[1]}).status_code == 200
    return http


def _call(http: httpx.Client, api: str, data: list) -> tuple[str, object]:
    """POST /gradio_api/call/<api> then read its event stream: ("complete", outputs) or ("error", message)."""
    started = http.post(f"/gradio_api/call/{api}", json={"data": data})
    if started.status_code in (403, 422):  # refused by the route gate before Gradio read it (`event_refusal`)
        return "error", started.json()["detail"]
    assert started.status_code == 200, started.text
    event_id = started.json()["event_id"]
    kind, payload = "", None
    with http.stream("GET", f"/gradio_api/call/{api}/{event_id}") as stream:
        for line in stream.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind in ("complete", "error"):
                payload = json.loads(line.split(":", 1)[1].strip() or "null")
                break
    if kind == "error" and isinstance(payload, dict):
        payload = payload.get("error")
    return kind, payload


def _endpoint_inputs(http: httpx.Client) -> dict[str, list]:
    """api name -> plausible inputs of every named endpoint (the examples Gradio documents, None for files: a
    call must get past Gradio's own input checks to reach the handler)."""
    info = http.get("/gradio_api/info").json()
    out = {}
    for name, spec in info["named_endpoints"].items():
        values = []
        for p in spec["parameters"]:
            example = p.get("example_input")
            is_file = isinstance(example, dict) or "file" in json.dumps(p.get("type", "")).lower()
            values.append(None if is_file else example)
        out[name.lstrip("/")] = values
    return out


# --- 1. arbitrary file write through the export -------------------------------------------------------------------


def test_export_never_writes_outside_the_scratch_folder(app, tmp_path: Path):
    victim = tmp_path / "x" / "victim"
    store = app.wb.database.store
    store.samples.ensure_dataset(f"../../../../../..{victim}")  # a dataset name that looks like a path
    admin = _http(app, ADMIN)
    kind, out = _call(admin, "export", ["csv", f"../../../../../..{victim}"])
    assert kind == "complete", out
    path = Path(out[0]["path"])
    assert not victim.with_suffix(".csv").exists() and not victim.parent.exists()
    assert path.name.startswith("masc-export-") and ".." not in path.name and "/" not in path.name
    kind, out = _call(admin, "export", ["csv", "../../../../tmp/nope/victim"])  # unknown dataset: a message
    assert kind == "complete" and "is not in the database" in out[1] and not Path("/tmp/nope").exists()


# --- 2. server-side file read through a client-chosen path ----------------------------------------------------------


def test_a_path_the_client_did_not_upload_is_never_opened(app, tmp_path: Path):
    secret = tmp_path / "secret.png"
    from PIL import Image

    Image.new("RGB", (8, 8), "red").save(secret)
    blob = next(p for p in (app.data / "blobs").rglob("*") if p.is_file())
    admin = _http(app, ADMIN)
    answers = set()
    for target in (
        secret,
        blob,
        tmp_path / "missing.png",
        tmp_path,
        "/dev/zero",
        "/etc/passwd",
        "../../../../etc/passwd",
    ):
        for api, data in (
            ("render", ["ref0", 0.0, {"path": str(target)}, [], None]),
            ("run", [{"path": str(target)}, None, {"path": str(target)}, "p", "cat", ["clip_i"], False]),
        ):
            kind, message = _call(admin, api, data)
            assert kind == "error", (api, target, message)
            answers.add(message)
    assert answers == {NOT_UPLOADED}  # the same answer whether the path exists, is a folder or a device
    for target in (secret, blob, "/etc/passwd"):  # the video box: Gradio's own file checks refuse first, no message
        for payload in ({"path": str(target)}, {"path": str(target), "meta": {"_type": "gradio.FileData"}}):
            assert _call(admin, "video_load", [payload]) == ("error", None), (target, payload)


def test_uploaded_files_still_work_and_blobs_keep_the_uploaded_bytes(app):
    client = Client(app.url, auth=ADMIN, verbose=False)
    ex = EXAMPLES_DIR / "coffee-on-bricks"
    msg = client.predict(
        handle_file(str(ex / "ref.jpg")),
        None,
        handle_file(str(ex / "out.jpg")),
        "a cup",
        "coffee cup",
        ["clip_i"],
        "uploads",
        "",
        False,
        api_name="/save",
    )[0]
    assert "saved as sample #" in msg
    sample = app.wb.database.store.samples.list("uploads")[0]
    blob = app.wb.database.store.images.read(sample.output)
    assert blob == (ex / "out.jpg").read_bytes()  # the JPEG as uploaded, not a PNG of its pixels


# --- 3. roles -------------------------------------------------------------------------------------------------------


def test_a_rater_is_refused_by_every_admin_endpoint(app, capfd):
    capfd.readouterr()
    rater = _http(app, RATER)
    endpoints = _endpoint_inputs(_http(app, ADMIN))  # a rater's own description lists none of them (`role_view`)
    admin_only = sorted(set(endpoints) - RATER_ENDPOINTS)
    assert {
        "run",
        "explain",
        "save",
        "browse",
        "open_sample",
        "export",
        "export_pairwise",
        "agreement",
        "load_example",
        "render",
        "on_by_name",
        "leaderboard",
        "leaderboard_datasets",
        "compare",
        "compare_partners",
        "guide_save",
        "guide_load",
        "compare_take",
        "pairwise_report",
        "pairwise_datasets",
        "video_load",
        "video_select",
        "video_mask_brush",
        "video_mask_by_name",
        "video_mask_apply",
        "video_mask_discard",
        "video_mask_undo",
        "video_mask_clear",
        "draw_frame_plot",
        "browse_poster",
        "agreement_kind",
    } <= set(admin_only)
    for api in admin_only:
        kind, message = _call(rater, api, endpoints[api])
        if api in NEEDS_EVENT_DATA:  # Gradio refuses these before the handler: no browser event came with them
            assert kind == "error", (api, kind, message)
            continue
        assert kind == "error" and "admin login" in str(message), (api, kind, message)
    # gradio_client reads the rater's own API description, which has no admin endpoint to call at all.
    with pytest.raises(ValueError, match="Cannot find a function with `api_name`: /export"):
        Client(app.url, auth=RATER, verbose=False).predict("csv", "secret-set", api_name="/export")
    # A refusal is an answer, not a server fault: no traceback per refused call in the server's log (Gradio still
    # prints its own for the calls it fails before any handler, those without a browser event).
    log = capfd.readouterr().err
    assert "gradio.exceptions.Error" not in log and "admin login" not in log


def test_a_rater_sees_no_metric_method_sample_id_or_other_answer(app):
    store = app.wb.database.store
    store.ratings.ensure_rater("someone-else")
    for sample in store.samples.list("secret-set"):
        store.ratings.rate_sample("someone-else", sample.id, {"cp": 4, "pf": 0})
    rater = Client(app.url, auth=RATER, verbose=False)
    token, who, prompt, refs, out, cp, pf, reason, player, progress, msg = rater.predict(api_name="/rate_open")
    shown = json.dumps([token, who, prompt, progress, msg])
    assert "secret-method" not in shown and "clip" not in shown.lower() and "someone-else" not in shown
    assert cp is None and pf is None and not token.isdigit()
    ids = {str(s.id) for s in store.samples.list("secret-set")}
    assert token not in ids and "#" not in msg
    answered = rater.predict(token, 3, 2, "", api_name="/rate_submit")
    assert "saved your answer" in answered[-1] and "#" not in answered[-1]
    config = httpx.get(f"{app.url}/config", cookies=_http(app, RATER).cookies).text
    assert "secret-method" not in config


def _embedded(page: str, name: str) -> dict:
    """The JSON a page embeds as `window.<name>`."""
    start = page.index(f"window.{name} = ") + len(f"window.{name} = ")
    return json.loads(page[start : page.index(";</script>", start)])


def test_raters_and_visitors_are_told_only_about_their_own_part(app):
    login_page = httpx.get(f"{app.url}/")
    assert login_page.status_code == 200 and len(login_page.content) < 20_000
    assert _embedded(login_page.text, "gradio_api_info") == {"named_endpoints": {}, "unnamed_endpoints": {}}
    assert _embedded(login_page.text, "gradio_config")["components"] == []
    rater, admin = _http(app, RATER), _http(app, ADMIN)
    page = rater.get("/").text
    config, info = rater.get("/config").json(), rater.get("/gradio_api/info").json()
    assert _embedded(page, "gradio_api_info") == info
    assert {c["id"] for c in _embedded(page, "gradio_config")["components"]} == {c["id"] for c in config["components"]}
    assert info["named_endpoints"] and set(info["named_endpoints"]) <= {f"/{name}" for name in RATER_ENDPOINTS}
    elem_ids = {c["props"].get("elem_id") for c in config["components"]}
    assert {"tab-rate", "tab-pairs", "rate-submit", "pair-left"} <= elem_ids
    assert not elem_ids & {
        "status-line",
        "tab-score",
        "tab-browse",
        "tab-agreement",
        "tab-leaderboard",
        "tab-raters",
        "ref-image",
    }
    assert "clip_i" not in json.dumps(config) and "profile: demo" not in json.dumps(config)
    shown = {c["id"] for c in config["components"]}
    for event in config["dependencies"]:
        assert set(event["inputs"]) | set(event["outputs"]) <= shown, event
    assert "/save" in admin.get("/gradio_api/info").json()["named_endpoints"]
    assert "status-line" in {c["props"].get("elem_id") for c in admin.get("/config").json()["components"]}
    kind, message = _call(rater, "status_text", [])  # the operator's status line is not a rater's either
    assert kind == "error" and "admin login" in str(message)


# --- 4. quotas and hygiene ------------------------------------------------------------------------------------------


def test_gradio_cache_is_cleaned_and_uploads_are_capped(app):
    assert app.blocks.delete_cache == (300, 3600)
    assert app.blocks.max_file_size == 25 * 1024 * 1024


# --- 5. logins ------------------------------------------------------------------------------------------------------


def test_wrong_passwords_are_throttled_even_before_the_right_one(app):
    with httpx.Client(base_url=app.url, timeout=60) as http:
        codes = [
            http.post("/login", data={"username": ADMIN[0], "password": f"guess-{i}"}).status_code for i in range(7)
        ]
        assert codes[:5] == [400] * 5 and codes[-1] == 429
        right = http.post("/login", data={"username": ADMIN[0], "password": ADMIN[1]})
        assert right.status_code == 429 and "wait" in right.text
    app.wb.accounts.throttle.succeeded(ADMIN[0], "127.0.0.1")  # let the other tests of this module log in


# --- 6. errors that leak nothing ------------------------------------------------------------------------------------


def test_nul_in_a_prompt_is_refused_with_a_clear_message(app):
    client = Client(app.url, auth=ADMIN, verbose=False)
    ex = EXAMPLES_DIR / "cat-on-grass"
    table, message, *_ = client.predict(
        handle_file(str(ex / "ref.jpg")),
        None,
        handle_file(str(ex / "out.jpg")),
        "a cat\x00; DROP TABLE",
        "cat",
        ["clip_i"],
        False,
        api_name="/run",
    )
    assert "prompt contains a NUL character" in message and "INSERT" not in message
    saved = client.predict(
        handle_file(str(ex / "ref.jpg")),
        None,
        handle_file(str(ex / "out.jpg")),
        "a cat",
        "cat",
        ["clip_i"],
        "nul\x00set",
        "",
        False,
        api_name="/save",
    )[0]
    assert "dataset name contains a NUL character" in saved


def test_huge_sample_ids_get_a_message_not_a_driver_error(app):
    client = Client(app.url, auth=ADMIN, verbose=False)
    out = client.predict(10**20, api_name="/open_sample")
    said = out[-2]  # the message next to Open, in Browse (the video box comes last)
    assert "sample id must be a whole number" in said and "SQLite" not in said


def test_unexpected_errors_show_no_internals(app, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError(f"secret internals at {app.data}")

    monkeypatch.setattr(app.wb.samples, "browse", broken)
    admin = _http(app, ADMIN)
    kind, message = _call(admin, "browse", ["", "", "", "id", False, 1])
    assert kind == "error" and "something went wrong" in message and str(app.data) not in message


def test_a_store_error_hides_server_paths(app, tmp_path: Path):
    from masc_ui.settings import Settings
    from masc_ui.workbench import StoreError
    from masc_ui.workbench.database import Database

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    database = Database(Settings(data_dir=blocker / "data"))
    with pytest.raises(StoreError) as caught:
        database.datasets()
    assert str(tmp_path) not in str(caught.value) and "<server path>" in str(caught.value)
    assert str(blocker) in caught.value.detail  # the full text stays for the log and the local command line
    assert "DATABASE_URL" not in str(caught.value)


# --- 7. spreadsheet-safe exports ------------------------------------------------------------------------------------


def test_exported_csv_cells_are_not_formulas(app):
    import csv

    wb = app.wb
    ex = EXAMPLES_DIR / "coffee-on-bricks"
    sample = wb.scoring.make_sample([ex / "ref.jpg"], ex / "out.jpg", '=HYPERLINK("http://evil","x")', "=1+1")
    wb.saving.save(sample, user=None, dataset="formulas", method="@SUM(A1)", names=["clip_i"])
    admin = Client(app.url, auth=ADMIN, verbose=False)
    path, _ = admin.predict("csv", "formulas", api_name="/export")
    rows = list(csv.DictReader(open(path, newline="", encoding="utf-8")))
    assert rows[0]["subject"] == "'=1+1" and rows[0]["prompt"].startswith("'=HYPERLINK")
    assert rows[0]["method"] == "'@SUM(A1)"
    assert float(rows[0]["metric:clip_i"]) == pytest.approx(float(rows[0]["metric:clip_i"]))  # numbers stay numbers


def test_no_logins_on_a_public_address_is_announced(tmp_path: Path):
    from masc_ui.settings import Settings
    from masc_ui.workbench.users import Accounts, startup_warnings

    public = Settings(host="0.0.0.0", data_dir=tmp_path)
    assert "everyone who can reach it acts as admin" in startup_warnings(public, Accounts())[0]
    assert startup_warnings(Settings(data_dir=tmp_path), Accounts()) == []


# --- last: uses up the admin's export quota ------------------------------------------------------------------


def test_heavy_endpoints_are_rate_limited_per_client(app):
    admin = _http(app, ADMIN)
    answers = [_call(admin, "export", ["jsonl", "secret-set"]) for _ in range(8)]
    refused = [m for kind, m in answers if kind == "error"]
    assert refused and all("too many requests" in m for m in refused)
    assert answers[0][0] == "complete"


def test_answers_posted_straight_to_their_handler_still_need_a_rater_login(app):
    """The Rate tab's answers skip Gradio's queue (`rate_tab.ANSWER_QUEUE`: one request each, as the page sends
    them): that route asks for a login as the queue does, and a rater's answer reaches only their own task."""
    config = _http(app, RATER).get("/config").json()
    fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "rate_submit")
    body = {"data": [None, "not-the-task-on-screen", 3, 2, ""], "fn_index": fn_index, "session_hash": "straight1"}
    assert httpx.post(f"{app.url}/gradio_api/run/rate_submit", json=body, timeout=60).status_code == 401
    answered = _http(app, RATER).post("/gradio_api/run/rate_submit", json=body)
    assert answered.status_code == 200, answered.text
    assert "there is no task on screen" in answered.json()["data"][-1]  # this page session never opened a task
    # The admin's events still go through the queue only: no direct route to them.
    refused = _http(app, ADMIN).post(
        "/gradio_api/run/export", json={"data": ["csv", "secret-set"], "session_hash": "straight2"}
    )
    assert refused.status_code == 404, refused.text
