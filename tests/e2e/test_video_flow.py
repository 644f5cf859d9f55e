"""End to end in Debian's Chromium with a video output: a researcher uploads a reference and a short synthetic video,
masks the subject on a frame, runs, sees the frame strip and the per-frame plot, explains a frame, saves; Browse
shows the video's poster, opens it back in the Score tab and marks its dataset for rating; a rater then gets the
video task, plays it and rates it. Screenshots (1400x1000 and 800x900) go to test-artifacts/e2e/."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from tests.video_files import encode_video, synthetic_frames

from .conftest import ROLES, SMALL, USERS, WIDE, login
from .steps import STEP_MS, brush_mask, open_tab, pick_option, upload, wait_text

pytestmark = pytest.mark.e2e
FRAMES = 6
"""`video_frames` of this module's app: frames the image metrics score (a short strip, a quick Run)."""


@pytest.fixture(scope="module")
def video_app(demo_weights: Path, tmp_path_factory: pytest.TempPathFactory):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    data = tmp_path_factory.mktemp("e2e-video-data")
    settings = Settings(
        profile="demo",
        demo_weights_dir=demo_weights,
        device="cpu",
        dtype="float32",
        data_dir=data,
        users=",".join(f"{u}:{p}:{ROLES[u]}" for u, p in USERS.items()),
        port=free_port(),
        video_frames=FRAMES,
    )
    wb = build_workbench(settings)
    app = serve(wb, block=False)
    yield SimpleNamespace(url=app.local_url.rstrip("/"), wb=wb)
    app.close()
    wb.close()


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("e2e-video-files")
    frames = synthetic_frames(24, width=160, height=96)
    video, ref = folder / "generated.webm", folder / "reference.png"
    video.write_bytes(encode_video(frames, "webm"))  # VP9: every Chromium build plays it
    Image.fromarray(frames[0]).save(ref)
    return SimpleNamespace(video=video, ref=ref)


def _both_sizes(page, shots, name: str) -> None:
    shots(page, name)
    page.set_viewport_size(SMALL)
    shots(page, f"{name}-800x900")
    page.set_viewport_size(WIDE)


def test_score_save_and_rate_a_video(browser, video_app, media, shots):
    page = login(browser, video_app.url, "alice")
    upload(page, "#ref-image", media.ref)
    wait_text(page, "#mask-message", "no mask yet")
    brush_mask(page, "#mask-editor", "#mask-use-brush", "#mask-message", "brush mask:")  # reference 1's (CP needs it)
    upload(page, "#out-image", media.ref)  # an output image first: the video then takes its place
    page.locator("#out-image img").wait_for(timeout=STEP_MS)
    upload(page, "#out-video", media.video)
    page.locator("#prompt textarea").fill("a green square sliding right")
    page.locator("#subject textarea").fill("square")
    wait_text(page, "#video-note", "24 frames at 24 fps")
    page.wait_for_function(f"document.querySelectorAll('#frame-strip img').length === {FRAMES}", timeout=STEP_MS)
    wait_text(page, "#metric-pick", "GmeScore")  # the video metrics are offered while a video is loaded
    page.wait_for_function("() => !document.querySelector('#out-image img')", timeout=STEP_MS)  # one output
    page.locator("#frame-strip").scroll_into_view_if_needed()
    _both_sizes(page, shots, "video-uploaded")

    # The subject's mask, drawn on frame 0 with the brush: reused on every frame, and the page says so.
    page.locator("#frame-strip img").first.click()
    wait_text(page, "#frame-title", "frame 0")
    brush_mask(page, "#video-mask-editor", "#video-mask-brush", "#video-mask-message", "reused on every frame")
    assert "reused unchanged on every frame" in wait_text(page, "#video-mask-note", "Mask rule")
    page.locator("#video-mask-view img").wait_for(timeout=STEP_MS)

    page.locator("#run").click()
    wait_text(page, "#run-message", "scored")
    wait_text(page, "#score-table", f"mean over {FRAMES} sampled frames")
    page.wait_for_function(
        "() => { const i = document.querySelector('#frame-plot img');"
        " return i && i.complete && i.naturalWidth > 300; }",
        timeout=STEP_MS,
    )
    rows = page.locator("#score-table tr[data-metric]").evaluate_all("rows => rows.map(r => r.dataset.metric)")
    assert {"cp", "pf", "clip_i", "gmescore"} <= set(rows), rows
    page.locator("#frame-plot").scroll_into_view_if_needed()
    _both_sizes(page, shots, "video-run")

    # A frame of the strip, then Explain: that frame's MaSC maps.
    page.locator("#frame-strip img").nth(3).click()
    wait_text(page, "#frame-title", "Selected: frame")
    page.locator("#explain").click()
    explained = wait_text(page, "#explain-message", "maps of frame")
    assert "map(s) drawn" in explained
    wait_text(page, "#explain-notes", "of the output video")
    page.locator("#best-map img").wait_for(timeout=STEP_MS)
    page.locator("#best-map").scroll_into_view_if_needed()
    _both_sizes(page, shots, "frame-explained")

    page.locator("#save").click()
    saved = wait_text(page, "#score-message", "sample #")
    sid = int(re.search(r"sample #(\d+)", saved).group(1))
    wait_text(page, "#sample-link", f"Stored sample #{sid}")
    stored = video_app.wb.database.store
    sample = stored.samples.get(sid)
    assert stored.images.media_type(sample.output) == "video/webm"
    assert stored.images.read(sample.output) == media.video.read_bytes()
    page.locator("#score-message").scroll_into_view_if_needed()
    _both_sizes(page, shots, "video-saved")

    # An example pair replaces the video (a new sample)...
    page.locator("#example-pick").scroll_into_view_if_needed()
    pick_option(page, "#example-pick", "Cat on the grass")
    page.locator("#example-load").click()
    wait_text(page, "#load-message", "loaded example")
    page.wait_for_function("() => !document.querySelector('#out-video video')", timeout=STEP_MS)
    page.locator("#video-panel").wait_for(state="hidden", timeout=STEP_MS)
    page.wait_for_function(
        "() => !document.querySelector('#metric-pick').innerText.includes('GmeScore')", timeout=STEP_MS
    )

    # ... Browse shows the video's poster, marks its dataset for rating, and Open brings it back with its mask.
    open_tab(page, "Browse and export")
    wait_text(page, "#browse-message", "sample(s)")
    page.locator("#browse-sample-id input").fill(str(sid))
    page.locator("#browse-sample-id input").press("Enter")
    wait_text(page, "#browse-open-message", "poster (first) frame of the output video")
    page.locator("#browse-poster img").wait_for(timeout=STEP_MS)
    pick_option(page, "#browse-dataset", "workbench")
    page.locator("#browse-mark").click()
    wait_text(page, "#browse-message", "now marked for rating")
    _both_sizes(page, shots, "browse-poster")
    page.locator("#browse-open").click()
    wait_text(page, "#load-message", "its output is a video")
    page.locator("#out-video video").wait_for(timeout=STEP_MS)
    wait_text(page, "#video-note", "24 frames at 24 fps")
    assert "drawn on frame 0" in wait_text(page, "#video-mask-note", "reused unchanged on every frame")
    page.wait_for_function(f"document.querySelectorAll('#frame-strip img').length === {FRAMES}", timeout=STEP_MS)
    page.locator("#frame-strip").scroll_into_view_if_needed()
    shots(page, "video-opened")
    # An output image in its turn replaces the video: a new sample.
    upload(page, "#out-image", media.ref)
    page.wait_for_function("() => !document.querySelector('#out-video video')", timeout=STEP_MS)
    page.locator("#video-panel").wait_for(state="hidden", timeout=STEP_MS)
    wait_text(page, "#sample-link", "New sample")
    assert not page.errors, page.errors
    page.close()

    # The rater gets the video task, and it plays: a <video> whose src loads.
    rater = login(browser, video_app.url, "bob")
    open_tab(rater, "Rate")
    wait_text(rater, "#rate-prompt", "a green square sliding right")
    player = rater.locator("#rate-out-video video")
    player.wait_for(timeout=STEP_MS)
    rater.wait_for_function(
        "() => { const v = document.querySelector('#rate-out-video video');"
        " return v && v.src && v.readyState >= 2 && v.videoWidth === 160; }",
        timeout=STEP_MS,
    )
    src = player.get_attribute("src")
    assert rater.evaluate("async (u) => (await fetch(u)).status", src) in (200, 206)  # 206: a range request
    assert not rater.locator("#rate-out").is_visible()  # the image box gives way to the player
    rater.evaluate("() => document.querySelector('#rate-out-video video').play()")
    rater.wait_for_function("() => document.querySelector('#rate-out-video video').currentTime > 0", timeout=STEP_MS)
    _both_sizes(rater, shots, "rater-video")
    rater.evaluate("() => document.activeElement?.blur()")
    rater.keyboard.press("3")
    rater.keyboard.press("2")
    rater.keyboard.press("Enter")
    wait_text(rater, "#rate-message", "saved your answer")
    ratings = video_app.wb.database.store.ratings.current(rater="bob")
    assert {(r.sample_id, r.criterion, r.score) for r in ratings} == {(sid, "cp", 3), (sid, "pf", 2)}
    wait_text(rater, "#rate-prompt", "No task left")
    assert not rater.locator("#rate-out-video").is_visible()  # no task: the player is hidden again
    assert not rater.errors, rater.errors
    rater.close()


@pytest.mark.parametrize("viewport", [WIDE, SMALL], ids=["1400x1000", "800x900"])
def test_a_video_starting_at_one_second_has_one_time_base(browser, video_app, media, shots, tmp_path, viewport):
    """An MP4 whose first timestamp is 1.0 s (12 frames at 8 fps, 1.5 s): the strip, the selected frame and the
    mask's note count from the first frame, as the plot's axis does (`test_video_panel`)."""
    late = tmp_path / "late.mp4"
    late.write_bytes(encode_video(synthetic_frames(12, width=160, height=96), "mp4", fps=8, start_s=1.0))
    page = login(browser, video_app.url, "alice", viewport)
    upload(page, "#ref-image", media.ref)
    upload(page, "#out-video", late)
    wait_text(page, "#video-note", "1.50 s, 12 frames at 8 fps")
    page.wait_for_function(f"document.querySelectorAll('#frame-strip img').length === {FRAMES}", timeout=STEP_MS)
    captions = page.locator("#frame-strip").inner_text()
    expected = [f"#{i} · {i / 8:.2f} s" for i in (0, 2, 4, 6, 8, 11)]  # linspace(0, 11, 6)
    assert all(c in captions for c in expected) and "1.00 s" not in captions.replace("#8 · 1.00 s", ""), captions
    page.locator("#frame-strip img").nth(3).click()
    assert "(0.75 s)" in wait_text(page, "#frame-title", "Selected: frame 6")
    brush_mask(page, "#video-mask-editor", "#video-mask-brush", "#video-mask-message", "reused on every frame")
    assert "drawn on frame 6 (0.75 s)" in wait_text(page, "#video-mask-note", "Mask rule")
    page.locator("#preset-subject").click()
    page.locator("#run").click()
    wait_text(page, "#run-message", "scored")
    page.wait_for_function(
        "() => { const i = document.querySelector('#frame-plot img'); return i && i.complete && i.naturalWidth > 300; }",
        timeout=STEP_MS,
    )
    page.locator("#frame-strip").scroll_into_view_if_needed()
    shots(page, "late-video-strip", full_page=False)
    page.locator("#frame-plot").scroll_into_view_if_needed()
    shots(page, "late-video-plot", full_page=False)
    assert not page.errors, page.errors
    page.close()
