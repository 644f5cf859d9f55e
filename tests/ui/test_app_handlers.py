"""The app's handlers through gradio_client against the launched app (demo profile, temporary DB)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file

from masc_ui.metrics.registry import list_metrics
from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import USERS

ALL_METRICS = ["cp", "pf", "clip_i", "clip_i_seg", "clip_t", "clipscore", "pickscore", "dino_i", "vqascore", "itmscore"]


def _values(table_html: str) -> dict[str, str]:
    """metric -> shown value text of the score table."""
    rows = re.findall(r'<tr data-metric="([a-z0-9_]+)".*?<td[^>]*data-value="[^"]*">([^<]*)</td>', table_html)
    return dict(rows)


def _run(client: Client, ref: str, out: str, prompt: str, subject: str, names=ALL_METRICS, x100=False):
    """(score table, Run's message, out-of-date note, status line)."""
    return client.predict(handle_file(ref), None, handle_file(out), prompt, subject, names, x100, api_name="/run")


def _load(client: Client, name: str) -> tuple[str, str, str, str, str]:
    """Load an example: (reference path, output path, prompt, subject, Load's message)."""
    shown = client.predict(name, "workbench", api_name="/load_example")
    assert shown[-1] is None  # the output video box is emptied
    return shown[-6], shown[-4], shown[-3], shown[-2], shown[13]


def _open(client: Client, sample_id: int) -> dict:
    """Open a stored sample from Browse: what the Score tab and Browse then show, by name."""
    shown = client.predict(sample_id, api_name="/open_sample")
    names = (
        "scores",
        "stale",
        "cp_map",
        "best_map",
        "lines",
        "pf_map",
        "explain_notes",
        "run_msg",
        "explain_msg",
        "save_msg",
        "frame_plot",
        "catalogue_pictures",
        "catalogue_notes",
        "catalogue_stale",
        "sensitivity_table",
        "sensitivity_stale",
        "ref",
        "extra",
        "out",
        "prompt",
        "subject",
        "dataset",
        "method",
        "example",
        "load_msg",
        "link",
        "open_msg",
        "video",
    )
    assert len(shown) == len(names)
    return dict(zip(names, shown))


def test_login_is_required(served):
    with pytest.raises(ValueError, match="config|login|auth"):  # gradio_client's AuthenticationError is one
        Client(served.url, verbose=False)
    with pytest.raises(ValueError, match="config|login|auth"):
        Client(served.url, auth=("alice", "wrong"), verbose=False)


def test_demo_banner_and_status_line(client):
    html = str(client.config)
    assert "demo weights: numbers are not meaningful" in html
    assert "--profile paper" in html
    status = client.predict(api_name="/status_text")
    assert "profile: demo" in status and "device: cpu" in status and "dtype: float32" in status


def test_events_do_not_rebuild_gradios_monitoring_summary(served, client):
    """Gradio rebuilds a pandas summary of every past event after each event for its monitoring page (off here):
    per-event CPU that grows with uptime. The app turns that off; events still run and are still counted."""
    queue = served.app._queue
    before = queue.events_recorded
    for _ in range(3):
        assert "profile: demo" in client.predict(api_name="/status_text")
    assert queue.events_recorded >= before + 3
    assert queue.cached_event_analytics_summary == {"functions": {}}  # never computed


def test_example_pair_scores_every_metric_side_by_side(client):
    ref, out, prompt, subject, msg = _load(client, "cat-on-grass")
    assert subject == "cat" and "with its masks" in msg
    table, message, stale, status = _run(client, ref, out, prompt, subject)
    assert stale == ""
    values = _values(table)
    assert list(values) == ALL_METRICS
    for name, text in values.items():
        assert re.fullmatch(r"-?\d+(\.\d+)?(e[-+]\d+)?", text), (name, text)  # significant digits
        assert len(re.sub(r"e.*|[-.]", "", text).lstrip("0")) == 4 or text == "0", (name, text)
    assert "higher is better" in table and "[-1, 1]" in table and "[0, 2.5]" in table
    assert 'title="Mean over reference-mask patches' in table  # the convention as a tooltip
    assert "demo weights: numbers are not meaningful" in table
    assert "models loaded:" in status and "siglip" in status
    x100_table = _run(client, ref, out, prompt, subject, names=["cp"], x100=True)[0]
    assert float(_values(x100_table)["cp"]) == pytest.approx(float(values["cp"]) * 100, abs=0.06)


def test_missing_masks_and_prompt_show_na_with_reason(served):
    fresh = Client(served.url, auth=("bob", USERS["bob"]), verbose=False)  # new session: no masks
    ex = EXAMPLES_DIR / "coffee-on-bricks"
    table = _run(fresh, str(ex / "ref.jpg"), str(ex / "out.jpg"), "", "coffee cup")[0]
    values = _values(table)
    assert values["cp"].startswith("n/a (") and "mask" in values["cp"]
    assert values["pf"].startswith("n/a (")
    assert values["clip_t"].startswith("n/a (") and "prompt" in values["clip_t"]
    assert re.fullmatch(r"-?\d+\.\d{4}", values["clip_i"])


def test_bad_uploads_get_a_clear_message(client, tmp_path: Path):
    ex = EXAMPLES_DIR / "cat-on-grass"
    text = tmp_path / "notes.png"
    text.write_text("this is not an image")
    table, message, *_ = _run(client, str(text), str(ex / "out.jpg"), "a cat", "cat", names=["clip_i"])
    assert table == "" and "reference image 1" in message and "not an image" in message
    truncated = tmp_path / "cut.jpg"
    truncated.write_bytes((ex / "out.jpg").read_bytes()[:2000])
    message = _run(client, str(ex / "ref.jpg"), str(truncated), "a cat", "cat", names=["clip_i"])[1]
    assert "output image" in message and ("truncated" in message or "damaged" in message)


def test_explain_draws_four_maps(client):
    ref, out, prompt, subject, _ = _load(client, "cat-on-grass")
    cp_map, best_map, lines, pf_map, notes, message, stale, _ = client.predict(
        handle_file(ref), None, handle_file(out), prompt, subject, api_name="/explain"
    )
    from PIL import Image

    for path in (cp_map, best_map, lines, pf_map):
        assert path and Path(path).is_file()
    w, h = Image.open(ref).size
    assert Image.open(cp_map).size[0] == w and Image.open(cp_map).size[1] > h  # legend strip below
    assert message.startswith("4 map(s) drawn (CP ") and stale == ""
    assert notes.startswith("**MaSC CP ") and "*CP map:*" in notes and "*PF map:*" in notes


def test_save_twice_does_not_duplicate(client, served):
    ref, out, prompt, subject, _ = _load(client, "coffee-on-bricks")
    inputs = (handle_file(ref), None, handle_file(out), prompt, subject, ["cp", "clip_i"], "handlers", "m1", False)
    first = client.predict(*inputs, api_name="/save")[0]
    second = client.predict(*inputs, api_name="/save")[0]
    assert "saved as sample #" in first and "2 new mask(s), 2 new metric value(s)" in first
    assert "nothing changed" in second
    store = served.wb.database.store
    samples = store.samples.list("handlers")
    assert len(samples) == 1
    values = store.metrics.history(samples[0].id)
    assert sorted(v.metric for v in values) == ["clip_i", "cp"]
    assert all(v.provenance.code_version and v.provenance.model_id for v in values)
    assert len(store.masks.current(samples[0].id)) == 2
    fresh = Client(served.url, auth=("bob", USERS["bob"]), verbose=False)
    shown = _open(fresh, samples[0].id)
    assert (shown["prompt"], shown["subject"], shown["dataset"], shown["method"]) == (prompt, subject, "handlers", "m1")
    assert "stored scores" in shown["load_msg"] and f"Stored sample #{samples[0].id}" in shown["link"]
    assert shown["video"] is None  # an image sample: the video box stays empty
    registered = {spec.name for spec in list_metrics()}  # the stored report lists every registered image metric
    stored = shown["scores"]
    assert set(_values(stored)) == registered and re.fullmatch(r"-?\d+\.\d{4}", _values(stored)["cp"])
    note = fresh.predict("out", 0.5, handle_file(shown["ref"]), None, handle_file(shown["out"]), api_name="/render")[3]
    assert note.startswith("mask source: imported")
    again = fresh.predict(
        handle_file(shown["ref"]),
        None,
        handle_file(shown["out"]),
        prompt,
        subject,
        ["cp", "clip_i"],
        "handlers",
        "m1",
        False,
        api_name="/save",
    )[0]
    assert f"saved to sample #{samples[0].id}" in again and "nothing changed" in again  # the opened sample, no copy
    assert len(store.samples.list("handlers")) == 1


def _seed_samples(served, n: int = 3) -> list[int]:
    wb = served.wb
    ids = []
    for name in ("cat-on-grass", "coffee-on-bricks"):
        ex = EXAMPLES_DIR / name
        for i in range(n):
            s = wb.scoring.make_sample([ex / "ref.jpg"], ex / "out.jpg", f"prompt {i} of {name}", name.split("-")[0])
            ids.append(
                wb.saving.save(s, user=None, dataset="rating", method=f"m{i}", names=["clip_i", "dino_i"]).sample_id
            )
    wb.samples.set_for_rating("rating", True, user=None)  # raters' tasks come from datasets marked for rating
    return ids


def current_of(served, rater: str, sample_id: int) -> dict:
    """criterion -> (status, score) of `rater`'s current ratings of a sample."""
    return {
        r.criterion: (r.status, r.score)
        for r in served.wb.database.store.ratings.current(rater=rater, sample_id=sample_id)
    }


def test_rating_flow_commits_and_can_go_back(served):
    _seed_samples(served)
    c = Client(served.url, auth=("alice", USERS["alice"]), verbose=False)
    screen, who, prompt, refs, out, cp, pf, reason, player, progress, msg = c.predict(api_name="/rate_open")
    assert "alice" in who and "Prompt" in prompt and refs and out
    assert player.get("visible") is False and not player.get("value"), player  # an image task: no player
    assert "m0" not in prompt and "clip" not in prompt.lower()  # blind: no method, no metric
    assert re.search(r"rated 0 / assigned \d+ / total \d+", progress)
    seen = []
    for cp_score, pf_score in ((3, 2), (1, 4), (0, 0)):
        before = served.wb.database.store.ratings.current(rater="alice")
        screen, who, prompt, refs, out, cp, pf, reason, _, progress, msg = c.predict(
            screen, cp_score, pf_score, "", api_name="/rate_submit"
        )
        after = served.wb.database.store.ratings.current(rater="alice")
        assert len(after) == len(before) + 2, msg  # committed before the next task is shown
        assert "#" not in msg and screen and not screen.isdigit()  # the browser never sees a sample id
        seen.append(({r.sample_id for r in after} - {r.sample_id for r in before}).pop())
    assert "rated 3 /" in progress
    back = c.predict(api_name="/rate_back")
    assert "back to your previous task" in back[-1] and str(back[5]) == "0" and str(back[6]) == "0"
    kept = c.predict(back[0], None, None, "", api_name="/rate_skip")  # a skip keeps the answer
    assert "kept your answer (CP 0, PF 0)" in kept[-1]
    assert current_of(served, "alice", seen[-1]) == {"cp": ("rated", 0), "pf": ("rated", 0)}
    back = c.predict(api_name="/rate_back")
    c.predict(back[0], 2, 3, "", api_name="/rate_submit")
    current = {(r.sample_id, r.criterion): r for r in served.wb.database.store.ratings.current(rater="alice")}
    assert current[(seen[-1], "cp")].score == 2 and current[(seen[-1], "pf")].score == 3
    assert current[(seen[0], "cp")].score == 3 and current[(seen[1], "pf")].score == 4
    assert current[(seen[-1], "cp")].revision == 2


def test_submit_without_scores_is_refused_and_keeps_the_task(served):
    _seed_samples(served, n=1)
    c = Client(served.url, auth=("bob", USERS["bob"]), verbose=False)
    first = c.predict(api_name="/rate_open")
    result = c.predict(first[0], None, 2, "", api_name="/rate_submit")
    assert "not saved" in result[-1] and "concept preservation" in result[-1]
    assert result[2] == {"__type__": "update"}  # prompt and images left as they are on screen
    again = c.predict(api_name="/rate_open")  # back to the tab: nothing was stored, the same task stays on screen
    assert again[0] == again[2] == {"__type__": "update"} and "rated 0 /" in again[-2]
    unflagged = c.predict(first[0], None, None, "  ", api_name="/rate_flag")
    assert "not saved" in unflagged[-1] and "reason box" in unflagged[-1]  # a flag needs a reason
    assert served.wb.database.store.ratings.current(rater="bob") == []
    flagged = c.predict(first[0], None, None, "the output is blank", api_name="/rate_flag_by_enter")
    assert "(flagged)" in flagged[-1] and "1 flagged not rated" in flagged[-2]
    notes = {r.note for r in served.wb.database.store.ratings.current(rater="bob")}
    assert notes == {"the output is blank"}
    skipped = c.predict(flagged[0], None, None, "", api_name="/rate_skip")
    assert "skipped" in skipped[-1]


def test_an_answer_to_a_task_no_longer_on_screen_is_refused(served):
    """Enter then S pressed quickly: the skip arrives for the task Submit already moved past; nothing is stored."""
    _seed_samples(served, n=2)
    c = Client(served.url, auth=("bob", USERS["bob"]), verbose=False)
    first = c.predict(api_name="/rate_open")
    c.predict(first[0], 3, 3, "", api_name="/rate_submit")
    before = served.wb.database.store.ratings.current(rater="bob")
    late = c.predict(first[0], None, None, "", api_name="/rate_skip")
    assert "nothing saved: the task changed" in late[-1]
    assert served.wb.database.store.ratings.current(rater="bob") == before


def test_browse_filter_open_and_export(client, served):
    _seed_samples(served, n=1)
    *_, table, msg, rating = client.predict("rating", "", "", "id", False, api_name="/browse")
    headers, rows = table["headers"], table["data"]
    assert {"CLIP-I", "DINO-I", "human CP (mean)", "human PF (mean)"} <= set(headers)  # display names, not code names
    assert headers[-1] == "prompt" and "is marked for rating" in rating
    assert rows and all(r[headers.index("dataset")] == "rating" for r in rows)
    *_, only_m0, _, _ = client.predict("rating", "m0", "", "CLIP-I", True, api_name="/browse")
    assert {r[headers.index("method")] for r in only_m0["data"]} == {"m0"}
    sid = rows[0][0]
    opened = _open(client, sid)
    assert f"opened sample #{sid}" in opened["load_msg"] and opened["open_msg"] == f"opened sample #{sid}"
    assert Path(opened["ref"]).is_file() and opened["prompt"] == rows[0][headers.index("prompt")]
    assert (opened["dataset"], opened["method"]) == ("rating", rows[0][headers.index("method")])
    shown = _values(opened["scores"])
    assert shown["clip_i"] == rows[0][headers.index("CLIP-I")]  # one way of writing a value in both tables
    assert shown["cp"] == "n/a (not stored for this sample: press Run to compute it)"
    for bad, said in ((999_999, "#999999 is not in the database"), (0, "whole number from 1")):
        failed = _open(client, bad)
        assert said in failed["open_msg"] and failed["prompt"] == {"__type__": "update"}  # the Score tab untouched
    path, note = client.predict("csv", "rating", api_name="/export")
    with open(path, newline="") as fh:
        exported = list(csv.DictReader(fh))
    assert len(exported) == len(rows) and "exported" in note
    jsonl, _ = client.predict("jsonl", "rating", api_name="/export")
    assert Path(jsonl).read_text().count("\n") == len(rows)


def test_agreement_tab_matches_cli_table(served):
    ids = _seed_samples(served, n=3)
    store = served.wb.database.store
    for rater in ("carol", "dave"):
        store.ratings.ensure_rater(rater)
        for k, sid in enumerate(ids):
            store.ratings.rate_sample(rater, sid, {"cp": (k + (rater == "dave")) % 5, "pf": k % 5})
    c = Client(served.url, auth=("alice", USERS["alice"]), verbose=False)
    c.predict("(all datasets)", api_name="/on_show")  # the tab's datasets, as opening the tab lists them
    table, text, plot, metric, warnings, message = c.predict("rating", "cp", None, 200, api_name="/agreement")
    assert message.startswith("computed on up to 6 sample(s)")
    assert "fewer than 30" in warnings and "single rater" not in warnings
    assert {row[1] for row in table["data"]} >= {"CLIP-I", "DINO-I", "humans"}
    assert metric["value"] == "clip_i" and ["CLIP-I", "clip_i"] in metric["choices"]  # a metric with values to plot
    from masc_ui.analysis import agreement_table, format_table
    from masc_ui.datasets.agreement_source import load_agreement_data

    expected = format_table(agreement_table(load_agreement_data(store, "rating"), None, criterion="cp", n_boot=200))
    assert text == "raters counted: all\n" + expected  # the raters it counts, then the table
    assert plot is not None


def test_data_dir_and_database_are_not_served(served):
    with httpx.Client(base_url=served.url) as http:
        assert http.post("/login", data={"username": "alice", "password": USERS["alice"]}).status_code in (
            200,
            302,
            303,
        )
        db = next(served.data_dir.glob("*.sqlite3"))
        for target in (db, Path(__file__), served.settings.resolved_demo_weights_dir / "clip" / "config.json"):
            r = http.get(f"/gradio_api/file={target}")
            assert r.status_code in (403, 404), (target, r.status_code)
        asset = EXAMPLES_DIR / "cat-on-grass" / "ref.jpg"
        assert http.get(f"/gradio_api/file={asset}").status_code == 200


def test_odd_modes_work_and_decompression_bombs_are_refused(client, tmp_path: Path):
    import numpy as np
    from PIL import Image

    ex = EXAMPLES_DIR / "cat-on-grass"
    grey16 = tmp_path / "ref16.png"
    Image.fromarray(np.asarray(Image.open(ex / "ref.jpg").convert("L"), dtype=np.uint16) * 257).save(grey16)
    cmyk = tmp_path / "out-cmyk.jpg"
    Image.open(ex / "out.jpg").convert("CMYK").save(cmyk)
    table, message, *_ = _run(client, str(grey16), str(cmyk), "a cat", "cat", names=["clip_i", "dino_i"])
    assert all(re.fullmatch(r"-?\d+\.\d{4}", v) for v in _values(table).values()), message
    bomb = tmp_path / "bomb.png"
    Image.new("1", (10_000, 10_000)).save(bomb, optimize=True)
    assert bomb.stat().st_size < 200_000
    table, message, *_ = _run(client, str(ex / "ref.jpg"), str(bomb), "a cat", "cat", names=["clip_i"])
    assert table == "" and "output image (bomb.png)" in message and "too large to open safely" in message


def test_several_references_are_scored_against_each(served):
    c = Client(served.url, auth=("bob", USERS["bob"]), verbose=False)
    cat, coffee = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"
    one = _values(_run(c, str(cat / "ref.jpg"), str(cat / "out.jpg"), "a cat", "cat", names=["clip_i"])[0])
    table = c.predict(
        handle_file(str(cat / "ref.jpg")),
        [handle_file(str(coffee / "ref.jpg"))],
        handle_file(str(cat / "out.jpg")),
        "a cat",
        "cat",
        ["clip_i"],
        False,
        api_name="/run",
    )[0]
    two = _values(table)
    assert two["clip_i"] != one["clip_i"]  # mean over both references
    targets = c.predict(
        "ref0",
        0.5,
        handle_file(str(cat / "ref.jpg")),
        [handle_file(str(coffee / "ref.jpg"))],
        handle_file(str(cat / "out.jpg")),
        api_name="/on_images",
    )[0]
    assert targets["choices"] == [["reference 1", "ref0"], ["reference 2", "ref1"], ["output", "out"]]


def test_mask_handlers_by_name_and_clear(client):
    ref, out, prompt, subject, _ = _load(client, "cat-on-grass")
    images = (handle_file(ref), None, handle_file(out))
    view, sam_view, candidates, msg, proposed = client.predict("out", 0.5, *images, api_name="/render")
    assert "mask source: imported" in msg and Path(view).is_file() and proposed is None
    view, _, _, msg, proposed = client.predict("out", "cat", 0.9, 0.5, *images, api_name="/on_by_name")
    assert "not applied" in msg and proposed and Path(proposed).is_file()  # offered next to the current mask
    assert client.predict("out", 0.5, *images, api_name="/render")[3].startswith("mask source: imported")
    msg = client.predict("out", 0.5, *images, api_name="/on_discard")[3]
    assert "discarded" in msg
    msg = client.predict("out", 0.5, *images, api_name="/on_clear_mask")[3]
    assert msg.startswith("mask cleared")
    table = _run(client, ref, out, prompt, subject, names=["pf", "clip_i_seg"])[0]
    assert all(v.startswith("n/a (") for v in _values(table).values())
    msg = client.predict("out", 0.5, *images, api_name="/on_undo_mask")[3]
    assert "imported" in msg  # the cleared mask is back
    msg = client.predict("ref0", 0.5, *images, api_name="/on_undo")[3]
    assert msg == "nothing to undo"


def test_other_users_are_served_while_scoring_runs(served, monkeypatch):
    import threading

    entered, release = threading.Event(), threading.Event()
    real_score = served.wb.scoring.score

    def slow_score(*args, **kwargs):
        entered.set()
        assert release.wait(120), "the test never released the scoring call"
        return real_score(*args, **kwargs)

    monkeypatch.setattr(served.wb.scoring, "score", slow_score)
    scorer = Client(served.url, auth=("alice", USERS["alice"]), verbose=False)
    rater = Client(served.url, auth=("bob", USERS["bob"]), verbose=False)
    ex = EXAMPLES_DIR / "cat-on-grass"
    job = scorer.submit(
        handle_file(str(ex / "ref.jpg")),
        None,
        handle_file(str(ex / "out.jpg")),
        "a cat",
        "cat",
        ["clip_i"],
        False,
        api_name="/run",
    )
    try:
        assert entered.wait(120)
        who = rater.predict(api_name="/rate_open")[1]  # answered while the Run is still inside the model call
        browse_note = rater.predict("", "", "", "id", False, api_name="/browse")[-2]
        assert "bob" in who and "sample(s)" in browse_note
        assert not job.done()
    finally:
        release.set()
    assert re.fullmatch(r"-?\d+\.\d{4}", _values(job.result()[0])["clip_i"])


def test_without_logins_the_rate_tab_refuses_to_rate(served, tmp_path: Path):
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    settings = served.settings.replace(users=None, port=free_port(), data_dir=tmp_path / "open-data")
    wb = build_workbench(settings, models=served.wb.models)
    app = serve(wb, block=False)
    try:
        c = Client(app.local_url, verbose=False)
        opened = c.predict(api_name="/rate_open")
        assert opened[1].startswith("**Log in to rate.**") and "MASC_USERS" in opened[1]
        submitted = c.predict("", 3, 3, "", api_name="/rate_submit")
        assert submitted[-1] == "⚠ log in to rate"
        assert wb.database.store.ratings.raters() == []
    finally:
        app.close()
        wb.close()


def test_a_video_output_through_the_handlers(served, tmp_path: Path):
    """The video box loads the strip; Run and Save score and store the video on screen (no output image); Browse's
    poster is its first frame; Open brings it back into the video box as the stored bytes."""
    from PIL import Image

    from tests.video_files import encode_video, synthetic_frames

    frames = synthetic_frames(8)
    video, ref = tmp_path / "clip.mp4", tmp_path / "ref.png"
    video.write_bytes(encode_video(frames, "mp4"))
    Image.fromarray(frames[0]).save(ref)
    c = Client(served.url, auth=("alice", USERS["alice"]), verbose=False)
    loaded = c.predict(handle_file(str(video)), api_name="/video_load")
    note = next(x for x in loaded if isinstance(x, str) and "fps" in x)
    assert "8 frames at 24 fps" in note and "the 8 frames below" in note
    table = c.predict(handle_file(str(ref)), None, None, "a square", "square", ["clip_i"], False, api_name="/run")[0]
    assert "mean over 32 sampled frames (8 distinct: a short video)" in table, table
    saved = c.predict(
        handle_file(str(ref)), None, None, "a square", "square", ["clip_i"], "videos", "", False, api_name="/save"
    )[0]
    sid = int(re.search(r"sample #(\d+)", saved).group(1))
    store = served.wb.database.store
    stored = store.samples.get(sid)
    assert store.images.media_type(stored.output) == "video/mp4"
    assert store.images.read(stored.output) == video.read_bytes()
    poster, caption = c.predict(sid, api_name="/browse_poster")
    assert "poster (first) frame of the output video" in caption, poster
    assert Image.open(poster).size == (96, 64)
    fresh = Client(served.url, auth=("bob", USERS["bob"]), verbose=False)
    shown = _open(fresh, sid)
    assert (
        shown["out"] is None
        and Path(shown["video"]["video"] if isinstance(shown["video"], dict) else shown["video"]).read_bytes()
        == video.read_bytes()
    )
    assert "its output is a video" in shown["load_msg"] and f"Stored sample #{sid}" in shown["link"]
    again = fresh.predict(
        handle_file(shown["ref"]), None, None, "a square", "square", ["clip_i"], "videos", "", False, api_name="/save"
    )[0]
    assert f"saved to sample #{sid}" in again and "nothing changed" in again  # the opened video sample, no copy
