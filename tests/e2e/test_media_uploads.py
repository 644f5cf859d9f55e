"""Uploads in the Score tab as a new user makes them, in Debian's Chromium at 1400x1000 and 800x900: an image with
transparency is shown as it is scored (flattened onto white: the upload's preview, the mask editor and the mask
view alike, in a dark page theme too, where a transparent pixel would show the page through); files that are not
what their slot takes get a message about that kind of file, under that slot, and the slot is emptied for the next
upload. Screenshots go to test-artifacts/e2e/."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from .conftest import ARTIFACTS, SMALL, WIDE, login
from .steps import STEP_MS, beside, text_of, upload, wait_text

pytestmark = pytest.mark.e2e
RED = (200, 40, 40)


@pytest.fixture(scope="module")
def half_transparent(tmp_path_factory) -> Path:
    """200x200 RGBA: the left half fully transparent (black underneath), the right half opaque red."""
    arr = np.zeros((200, 200, 4), np.uint8)
    arr[:, 100:] = (*RED, 255)
    path = tmp_path_factory.mktemp("rgba") / "half-transparent.png"
    Image.fromarray(arr, "RGBA").save(path)
    return path


def _beside_red(shot: Path) -> tuple[np.ndarray, np.ndarray]:
    """(the image's transparent half as the page shows it, what the page shows left of the image): pixels of the
    element screenshot `shot` along its middle row, left of the red half."""
    arr = np.asarray(Image.open(shot).convert("RGB"), np.int32)
    row = arr[arr.shape[0] // 2]
    red = np.flatnonzero(np.abs(row - RED).sum(axis=1) < 60)
    assert red.size > 20, f"no red half in {shot}"
    width = red[-1] - red[0] + 1
    outside = red[0] - int(1.05 * width)
    return row[red[0] - int(0.9 * width) : red[0] - int(0.1 * width)], row[: max(outside, 0)]


@pytest.mark.parametrize("viewport", [WIDE, SMALL], ids=["1400x1000", "800x900"])
def test_a_transparent_upload_is_shown_as_scored(browser, app_server, shots, half_transparent, viewport, request):
    page = login(browser, app_server.url, "alice", viewport)
    page.emulate_media(color_scheme="dark")
    page.reload()
    page.locator("#status-line").wait_for(timeout=STEP_MS)
    upload(page, "#ref-image", half_transparent)
    wait_text(page, "#ref-notes", "flattened onto white")
    page.locator("#mask-view img").wait_for(timeout=STEP_MS)
    page.wait_for_function("document.querySelectorAll('#mask-editor canvas').length > 0", timeout=STEP_MS)
    page.wait_for_timeout(1000)  # the editor draws its background after the canvas appears
    page.locator("#ref-image").scroll_into_view_if_needed()
    shots(page, "dark-rgba-uploaded", full_page=False)
    for name, selector in (("preview", "#ref-image"), ("editor", "#mask-editor canvas"), ("view", "#mask-view")):
        shot = ARTIFACTS / f"{request.node.name}-{name}.png"
        page.locator(selector).first.screenshot(path=str(shot))
        transparent, around = _beside_red(shot)
        assert transparent.min() >= 245, f"{name}: the transparent half shows {transparent.min(axis=0)}, not white"
        if name != "editor":  # the editor's toolbar sits left of its picture
            assert around.size and around.max() < 200, f"{name}: white beyond the image's edge (a box too large)"
    assert not page.errors, page.errors
    page.close()


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> SimpleNamespace:
    from tests.video_files import encode_video, synthetic_frames

    folder = tmp_path_factory.mktemp("bad-uploads")
    mp4 = encode_video(synthetic_frames(24, width=160, height=96), "mp4")
    files = SimpleNamespace(
        noise=folder / "noise.mp4",
        truncated=folder / "truncated.mp4",
        good=folder / "good.webm",
        text=folder / "notes.png",
    )
    files.noise.write_bytes(np.random.default_rng(7).bytes(40_000))
    files.truncated.write_bytes(mp4[: len(mp4) // 2])
    files.good.write_bytes(encode_video(synthetic_frames(24, width=160, height=96), "webm"))
    files.text.write_text("these are my notes, not a picture\n" * 20)
    return files


def _video_box_empty(page) -> None:
    """Wait until the video box is empty and takes a new upload (its drop zone is back)."""
    page.wait_for_function(
        "() => !document.querySelector('#out-video video') && document.querySelector('#out-video input[type=file]')",
        timeout=STEP_MS,
    )


@pytest.mark.parametrize("viewport", [WIDE, SMALL], ids=["1400x1000", "800x900"])
def test_refused_uploads_are_said_under_their_slot_and_the_slot_is_emptied(
    browser, app_server, shots, bad_files, viewport
):
    page = login(browser, app_server.url, "alice", viewport)
    for bad in (bad_files.noise, bad_files.truncated):  # one after the other: no ✕ needed in between
        upload(page, "#out-video", bad)
        said = wait_text(page, "#video-upload-notes", f"output video ({bad.name}): not a video FFmpeg can read")
        assert "upload an MP4 (H.264) or WebM (VP9) file" in said
        assert "Errno" not in said and "Pillow" not in said and "PNG, JPEG or WebP" not in said, said
        _video_box_empty(page)
        assert beside(page, "#video-upload-notes", "#out-video", reach=40)
        page.locator("#out-video").scroll_into_view_if_needed()
        shots(page, f"refused-{bad.stem}", full_page=False)
    assert not page.locator("#video-panel").is_visible()
    upload(page, "#out-video", bad_files.good)
    wait_text(page, "#video-note", "24 frames at 24 fps")
    page.wait_for_function("() => !document.querySelector('#video-upload-notes').innerText.trim()", timeout=STEP_MS)

    upload(page, "#ref-image", bad_files.text)
    said = wait_text(page, "#ref-notes", "reference image 1 (notes.png): not an image")
    assert beside(page, "#ref-notes", "#ref-image", reach=40)
    assert "not an image" not in text_of(page, "#upload-notes") + text_of(page, "#video-upload-notes")
    page.locator("#ref-image").scroll_into_view_if_needed()
    shots(page, "refused-text-reference", full_page=False)
    assert not page.errors, page.errors
    page.close()
