"""End to end in Debian's Chromium: a rater judges pairs with the keyboard alone, is refused a half answer, goes back,
changes an answer, and the database then holds exactly those answers. Screenshots go to test-artifacts/e2e/."""
from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageOps

from masc_ui.workbench.examples import EXAMPLES_DIR

from .steps import open_tab
from .conftest import login
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
        sample = wb.make_sample([cat / "ref.jpg"], out, "a cat sitting on green grass", "cat")
        methods[wb.recorder.save(sample, {}, user=None, dataset="pairs-e2e", method=method).sample_id] = method
    return methods


def _answered(page, criterion: str, winner: str) -> None:
    page.wait_for_function(f"document.querySelector(\"#pair-{criterion} input[value='{winner}']\")?.checked",
                           timeout=STEP_MS)


def _in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= size["height"] \
        and box["x"] + box["width"] <= size["width"]


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
    page.wait_for_function("document.querySelectorAll('#pair-left img, #pair-right img, #pair-refs img').length >= 3",
                           timeout=STEP_MS)
    panel = page.locator("#pair-panel").inner_text()
    sources = page.locator("#pair-panel img").evaluate_all("imgs => imgs.map(i => i.src)")
    names = [src.rsplit("/", 2)[-2:] for src in sources]  # Gradio's cache: <content hash>/image.png
    assert names and all(name == "image.png" and len(folder) >= 32 for folder, name in names), names
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
