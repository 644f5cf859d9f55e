"""End to end in Debian's Chromium with a video output: a researcher uploads a reference and a short synthetic video,
runs, sees the frame strip, the per-frame plot and a frame's overlays, saves; a rater then gets the video task and
it plays. Screenshots (1400x1000 and 800x900) go to test-artifacts/e2e/."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from tests.video_files import encode_video, synthetic_frames

from .conftest import ROLES, USERS, login
from .test_browser_flows import STEP_MS, wait_text

pytestmark = pytest.mark.e2e
KNOWN_RATER_ERROR = "Cannot read properties of undefined (reading 'canvas')"
FRAMES = 6
"""`video_frames` of this module's app: frames the image metrics score (a short strip, a quick Run)."""


@pytest.fixture(scope="module")
def video_app(demo_weights: Path, tmp_path_factory: pytest.TempPathFactory):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import Workbench

    data = tmp_path_factory.mktemp("e2e-video-data")
    settings = Settings(profile="demo", demo_weights_dir=demo_weights, device="cpu", dtype="float32",
                        data_dir=data, users=",".join(f"{u}:{p}:{ROLES[u]}" for u, p in USERS.items()),
                        port=free_port(), video_frames=FRAMES)
    wb = Workbench.open(settings)
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


def brush_stroke(page, editor: str, length: int = 100) -> None:
    """One horizontal brush stroke across the middle of the ImageEditor `editor`."""
    page.wait_for_function(f"document.querySelectorAll('{editor} canvas').length > 0", timeout=STEP_MS)
    page.locator(editor).get_by_role("button", name="Brush", exact=True).click()
    canvas = page.locator(f"{editor} canvas").first.bounding_box()
    cx, cy = canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2
    page.mouse.move(cx - length / 2, cy)
    page.mouse.down()
    for step in range(1, 11):
        page.mouse.move(cx - length / 2 + step * length / 10, cy + (step % 3) * 3)
    page.mouse.up()
    page.wait_for_timeout(500)


def test_score_save_and_rate_a_video(browser, video_app, media, shots):
    page = login(browser, video_app.url, "alice")
    page.locator("#ref-image input[type=file]").set_input_files(str(media.ref))
    wait_text(page, "#mask-message", "no mask yet")
    brush_stroke(page, "#mask-editor")  # reference 1's mask (CP needs it)
    page.locator("#mask-use-brush").click()
    wait_text(page, "#mask-message", "brush mask:")
    page.locator("#out-video input[type=file]").set_input_files(str(media.video))
    page.locator("#prompt textarea").fill("a green square sliding right")
    page.locator("#subject textarea").fill("square")
    wait_text(page, "#video-note", "24 frames at 24 fps")
    page.wait_for_function(f"document.querySelectorAll('#frame-strip img').length === {FRAMES}", timeout=STEP_MS)
    wait_text(page, "#metric-pick", "GmeScore")  # the video metrics are offered while a video is loaded
    shots(page, "video-uploaded")

    # Draw the video's mask on frame 0 with the brush: reused on every frame, and the page says so.
    page.locator("#frame-strip img").first.click()
    wait_text(page, "#frame-title", "Frame 0")
    brush_stroke(page, "#video-mask-editor")
    page.locator("#video-mask-brush").click()
    wait_text(page, "#video-mask-note", "reused unchanged on every frame")

    page.locator("#run").click()
    wait_text(page, "#score-table", f"mean over {FRAMES} sampled frames")
    page.wait_for_function("() => { const i = document.querySelector('#frame-plot img');"
                           " return i && i.complete && i.naturalWidth > 300; }", timeout=STEP_MS)
    rows = page.locator("#score-table tr[data-metric]").evaluate_all("rows => rows.map(r => r.dataset.metric)")
    assert {"cp", "pf", "clip_i", "gmescore"} <= set(rows), rows
    page.locator("#frame-plot").scroll_into_view_if_needed()
    shots(page, "video-run")

    # A frame of the strip: its MaSC overlays.
    page.locator("#frame-strip img").nth(3).click()
    page.locator("#frame-best-map img").wait_for(timeout=STEP_MS)
    wait_text(page, "#frame-notes", "this frame: CP")
    page.locator("#frame-best-map").scroll_into_view_if_needed()
    shots(page, "frame-explained")

    page.locator("#save").click()
    wait_text(page, "#score-message", "sample #")
    shots(page, "video-saved")
    page.set_viewport_size({"width": 800, "height": 900})
    shots(page, "video-saved-narrow")
    assert not page.errors, page.errors
    stored = video_app.wb.database.store
    sample = stored.samples.get(max(s.id for s in stored.samples.list("workbench")))
    assert stored.images.media_type(sample.output) == "video/webm"
    assert stored.images.read(sample.output) == media.video.read_bytes()
    page.close()

    # The rater gets the video task, and it plays: a <video> whose src loads.
    rater = login(browser, video_app.url, "bob")
    wait_text(rater, "#rate-prompt", "a green square sliding right")
    player = rater.locator("#rate-out-video video")
    player.wait_for(timeout=STEP_MS)
    rater.wait_for_function("() => { const v = document.querySelector('#rate-out-video video');"
                            " return v && v.src && v.readyState >= 2 && v.videoWidth === 160; }", timeout=STEP_MS)
    src = player.get_attribute("src")
    assert rater.evaluate("async (u) => (await fetch(u)).status", src) in (200, 206)  # 206: a range request
    assert not rater.locator("#rate-out img").is_visible()  # the image box gives way to the player
    rater.evaluate("() => document.querySelector('#rate-out-video video').play()")
    rater.wait_for_function("() => document.querySelector('#rate-out-video video').currentTime > 0",
                            timeout=STEP_MS)
    shots(rater, "rater-video")
    rater.set_viewport_size({"width": 800, "height": 900})
    shots(rater, "rater-video-narrow")
    rater.set_viewport_size({"width": 1400, "height": 1000})
    rater.locator("body").focus()
    rater.keyboard.press("3")
    rater.keyboard.press("2")
    rater.keyboard.press("Enter")
    wait_text(rater, "#rate-message", "saved your answer")
    ratings = video_app.wb.database.store.ratings.current(rater="bob")
    assert {(r.sample_id, r.criterion, r.score) for r in ratings} == {(sample.id, "cp", 3), (sample.id, "pf", 2)}
    # Known, not from this flow: with a video task on screen, Chromium also reports this error on main (the rater's
    # hidden Score tab); any other page error fails the test.
    assert not [e for e in rater.errors if e != KNOWN_RATER_ERROR], rater.errors
    rater.close()
