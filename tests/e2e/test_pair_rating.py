"""End to end in Debian's Chromium: a rater judges pairs with the keyboard alone, is refused a half answer, goes back,
changes an answer, and the database then holds exactly those answers; another rater judges a pair of videos (both
clips playing side by side) by keyboard. Screenshots go to test-artifacts/e2e/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image, ImageOps

from masc_ui.workbench.examples import EXAMPLES_DIR
from tests.video_files import encode_video, synthetic_frames

from .conftest import login
from .steps import open_tab
from .test_browser_flows import STEP_MS, wait_text

pytestmark = pytest.mark.e2e
METHODS = ("method-a", "method-b", "method-c")
"""Three methods of one reference and prompt: three pairs."""


def _seed(wb, folder: Path) -> dict[int, str]:
    """Outputs of METHODS for the cat reference (visibly different images); sample id -> method."""
    cat, coffee = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"
    mirrored = folder / "mirrored.png"
    ImageOps.mirror(Image.open(cat / "out.jpg")).save(mirrored)
    methods = {}
    for method, out in zip(METHODS, (cat / "out.jpg", mirrored, coffee / "out.jpg")):
        sample = wb.scoring.make_sample([cat / "ref.jpg"], out, "a cat sitting on green grass", "cat")
        methods[wb.recorder.save(sample, {}, user=None, dataset="pairs-e2e", method=method).sample_id] = method
    return methods


def _answered(page, criterion: str, winner: str) -> None:
    page.wait_for_function(
        f"document.querySelector(\"#pair-{criterion} input[value='{winner}']\")?.checked", timeout=STEP_MS
    )


def _in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] + box["width"] <= size["width"]
    )


def test_judge_pairs_by_keyboard_go_back_and_change_one(browser, app_server, shots, tmp_path: Path):
    wb = app_server.wb
    methods = _seed(wb, tmp_path)
    wb.samples.set_for_rating("pairs-e2e", True, user=None)  # the Rate tab shows a task: the page has loaded
    page = login(browser, app_server.url, "bob")
    wait_text(page, "#rate-prompt", "Prompt")  # the page has loaded: a rater lands on the Rate tab
    # Errors of this tab only: on main, the hidden Score tab's image editor throws once while the page loads
    # ("reading 'canvas'" in its destroy), before this tab is opened.
    errors_before = len(page.errors)
    open_tab(page, "Rate pairs")
    wait_text(page, "#pair-progress", "judged 0 / assigned 3 / total 3")
    wait_text(page, "#pair-prompt", "a cat sitting on green grass")
    page.wait_for_function(
        "document.querySelectorAll('#pair-left img, #pair-right img, #pair-refs img').length >= 3", timeout=STEP_MS
    )
    for player in ("#pair-left-video", "#pair-right-video"):
        assert not page.locator(player).is_visible()  # image outputs: the players give way to the images
    panel = page.locator("#pair-panel").inner_text()
    sources = page.locator("#pair-panel img").evaluate_all("imgs => imgs.map(i => i.src)")
    folder = str(wb.pairwise.file_folder)  # the blind files' folder (workbench.blind_files), not Gradio's cache
    names = [src.rsplit("/", 1)[-1] for src in sources]
    assert names and all(folder in src for src in sources), sources
    assert all(re.fullmatch("[0-9a-f]{64}[.]png", name) for name in names), names  # a keyed hash, a PNG
    stored = {wb.database.store.samples.get(sid).output for sid in methods}
    assert not any(name.removesuffix(".png") in stored for name in names)  # not the stored files' SHA-256
    assert "method" not in panel and "method" not in " ".join(sources)  # blind: no method name
    assert "#" not in panel and "sample" not in panel.lower()  # and no sample id
    shots(page, "first-pair")
    for selector in ("#pair-refs", "#pair-left", "#pair-right"):
        assert _in_view(page, selector), selector  # the reference and both outputs without scrolling
    page.set_viewport_size({"width": 800, "height": 900})
    shots(page, "first-pair-narrow")
    assert page.evaluate("document.documentElement.scrollWidth") <= 800  # nothing cut off at the side
    page.set_viewport_size({"width": 1400, "height": 1000})

    page.locator("body").focus()
    page.keyboard.press("ArrowLeft")  # concept preservation: left; the highlight moves to prompt following
    _answered(page, "cp", "left")
    page.keyboard.press("Enter")  # half an answer: refused, kept on screen
    wait_text(page, "#pair-message", "choose left, right or tie for prompt following")
    assert page.locator("#pair-cp input[value='left']").is_checked()
    assert wb.database.store.pairwise.current(rater="bob") == []
    shots(page, "half-answer-refused")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("x")  # both outputs bad at prompt following
    _answered(page, "pf", "tie")
    page.wait_for_function("document.querySelector('#pair-bad-pf input').checked", timeout=STEP_MS)
    page.keyboard.press("Enter")
    wait_text(page, "#pair-progress", "judged 1 /")

    expected = {1: {"cp": ("left", False), "pf": ("tie", True)}}
    for position, (cp, pf) in ((2, ("ArrowRight", "ArrowRight")), (3, ("ArrowDown", "ArrowLeft"))):
        wait_text(page, "#pair-prompt", f"Pair {position}")
        page.keyboard.press(cp)
        page.keyboard.press(pf)
        winner = {"ArrowLeft": "left", "ArrowRight": "right", "ArrowDown": "tie"}
        _answered(page, "cp", winner[cp])
        _answered(page, "pf", winner[pf])
        page.keyboard.press("Enter")
        wait_text(page, "#pair-progress", f"judged {position} /")
        expected[position] = {"cp": (winner[cp], False), "pf": (winner[pf], False)}
    wait_text(page, "#pair-prompt", "No pair left for you")
    assert "saved your answers" in page.locator("#pair-message").inner_text()

    page.keyboard.press("b")  # back to pair 3 (its answers on screen) and again to pair 2
    wait_text(page, "#pair-prompt", "Pair 3")
    _answered(page, "cp", "tie")
    page.keyboard.press("b")
    wait_text(page, "#pair-prompt", "Pair 2")
    _answered(page, "cp", "right")
    _answered(page, "pf", "right")
    shots(page, "went-back")
    page.keyboard.press("ArrowLeft")  # change pair 2's concept preservation, keep its prompt following
    _answered(page, "cp", "left")
    page.keyboard.press("Enter")
    wait_text(page, "#pair-message", "saved your answers")
    wait_text(page, "#pair-prompt", "No pair left for you")
    expected[2]["cp"] = ("left", False)
    shots(page, "changed")

    tasks = wb.database.store.pairwise.tasks(rater="bob")
    assert sorted(x.position for x in tasks) == [1, 2, 3]
    stored = {x.position: {c: (j.winner, j.both_bad) for c, j in x.judgments.items()} for x in tasks}
    assert stored == expected
    current = wb.database.store.pairwise.current(rater="bob")
    assert len(current) == 6 and all(j.status == "rated" and j.seconds_spent is not None for j in current)
    revisions = {(next(x.position for x in tasks if x.id == j.task_id), j.criterion): j.revision for j in current}
    assert revisions == {(1, "cp"): 1, (1, "pf"): 1, (2, "cp"): 2, (2, "pf"): 1, (3, "cp"): 1, (3, "pf"): 1}
    assert {methods[x.left_sample_id] for x in tasks} | {methods[x.right_sample_id] for x in tasks} == set(METHODS)
    assert not page.errors[errors_before:], page.errors
    page.close()


VIDEO_METHODS = ("clip-one", "clip-two")
VIDEO_PROMPT = "a green square sliding right"


def test_judge_a_pair_of_videos_by_keyboard(browser, app_server, shots, tmp_path: Path):
    wb = app_server.wb
    methods = {}
    for k, method in enumerate(VIDEO_METHODS):  # VP9 in WebM: Debian's Chromium plays it
        frames = synthetic_frames(24 + 12 * k, width=160, height=96)
        video = tmp_path / f"{method}.webm"
        video.write_bytes(encode_video(frames, "webm", metadata={"title": f"made by {method}"}))
        reference = tmp_path / "reference.png"
        Image.fromarray(frames[0]).save(reference)
        sample = wb.scoring.make_sample([reference], video, VIDEO_PROMPT, "square")
        methods[wb.recorder.save(sample, {}, user=None, dataset="pair-videos", method=method).sample_id] = method
    wb.samples.set_for_rating("pair-videos", True, user=None)  # the Rate tab shows a task: the page has loaded
    page = login(browser, app_server.url, "carol")
    wait_text(page, "#rate-prompt", "Prompt")
    errors_before = len(page.errors)  # errors of this tab only (see the test above)
    open_tab(page, "Rate pairs")
    wait_text(page, "#pair-prompt", VIDEO_PROMPT)
    wait_text(page, "#pair-prompt", "both play in a loop")
    for side in ("left", "right"):
        page.wait_for_function(
            f"() => {{ const v = document.querySelector('#pair-{side}-video video');"
            " return v && v.src && v.readyState >= 2 && v.videoWidth === 160; }",
            timeout=STEP_MS,
        )
        assert not page.locator(f"#pair-{side} img").is_visible()  # the player in place of the image
    sources = page.locator("#pair-panel video").evaluate_all("vs => vs.map(v => v.src)")
    names = [src.rsplit("/", 1)[-1] for src in sources]
    assert len(names) == 2 and all(len(n) == len("0" * 64 + ".webm") and n.endswith(".webm") for n in names), names
    assert not any(m in " ".join(sources) for m in VIDEO_METHODS)  # blind: no method in the files' names
    assert "clip-" not in page.locator("#pair-panel").inner_text()
    for side in ("left", "right"):  # both play (looping), whatever the browser's autoplay policy said
        page.evaluate(f"() => document.querySelector('#pair-{side}-video video').play()")
        page.wait_for_function(
            f"() => document.querySelector('#pair-{side}-video video').currentTime > 0", timeout=STEP_MS
        )
    shots(page, "video-pair")
    for selector in ("#pair-refs", "#pair-left-video", "#pair-right-video"):
        assert _in_view(page, selector), selector  # the reference and both players without scrolling
    page.set_viewport_size({"width": 800, "height": 900})
    shots(page, "video-pair-narrow")
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    page.set_viewport_size({"width": 1400, "height": 1000})

    page.locator("body").focus()
    page.keyboard.press("ArrowRight")  # concept preservation: right
    page.keyboard.press("ArrowDown")  # prompt following: tie
    _answered(page, "cp", "right")
    _answered(page, "pf", "tie")
    page.keyboard.press("Enter")
    wait_text(page, "#pair-message", "saved your answers")
    wait_text(page, "#pair-progress", "judged 1 /")
    video_tasks = [x for x in wb.database.store.pairwise.tasks(rater="carol") if x.left_sample_id in methods]
    assert len(video_tasks) == 1 and {x.right_sample_id for x in video_tasks} <= set(methods)
    stored = {c: (j.winner, j.both_bad, j.status) for c, j in video_tasks[0].judgments.items()}
    assert stored == {"cp": ("right", False, "rated"), "pf": ("tie", False, "rated")}
    shots(page, "video-pair-judged")
    page.keyboard.press("b")  # back to the video pair from what came next (a pair of images, or none): the players
    wait_text(page, "#pair-prompt", VIDEO_PROMPT)  # hidden in between come back with the clips and the answers
    _answered(page, "cp", "right")
    _answered(page, "pf", "tie")
    for side in ("left", "right"):
        page.wait_for_function(
            f"() => {{ const v = document.querySelector('#pair-{side}-video video');"
            " return v && v.readyState >= 2 && v.videoWidth === 160; }",
            timeout=STEP_MS,
        )
    assert not page.errors[errors_before:], page.errors
    page.close()
