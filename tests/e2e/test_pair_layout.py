"""End to end in Debian's Chromium: Rate pairs at 1400x1000 and 800x900 as the Rate tab is. The reference is shown
whole at the outputs' size (concept preservation is judged against it), and the questions, Submit, Skip, Flag, the
note and a warning under the buttons are in view without scrolling, a half answer's warning brought into view."""

from __future__ import annotations

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import SMALL, WIDE, login
from .steps import STEP_MS, in_view, open_tab, wait_text

pytestmark = pytest.mark.e2e
CONTROLS = ("#pair-cp", "#pair-pf", "#pair-submit", "#pair-skip", "#pair-flag", "#pair-note")
UNCROPPED = """(selector) => {
  const img = document.querySelector(selector + ' img');
  if (!img || !img.complete || !img.naturalWidth) return null;
  const fit = getComputedStyle(img).objectFit;
  const box = img.getBoundingClientRect();
  const ratio = Math.abs(box.width / box.height - img.naturalWidth / img.naturalHeight) < 0.02;
  const scale = Math.min(box.width / img.naturalWidth, box.height / img.naturalHeight);
  return {whole: ['contain', 'scale-down'].includes(fit) || ratio, height: box.height, width: box.width,
          fills: Math.max(img.naturalWidth * scale / box.width, img.naturalHeight * scale / box.height)};
}"""


@pytest.fixture(scope="module")
def seeded(app_server):
    wb = app_server.wb
    cat, coffee = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"
    for method, out in (("method-a", cat / "out.jpg"), ("method-b", coffee / "out.jpg")):
        sample = wb.scoring.make_sample([cat / "ref.jpg"], out, "a cat sitting on green grass", "cat")
        wb.recorder.save(sample, {}, user=None, dataset="layout", method=method)
    wb.samples.set_for_rating("layout", True, user=None)
    return wb


@pytest.mark.parametrize("size", [WIDE, SMALL], ids=["1400x1000", "800x900"])
def test_rate_pairs_fits_the_window_and_shows_the_reference_whole(browser, app_server, seeded, shots, size):
    page = login(browser, app_server.url, "bob" if size is WIDE else "carol", size)
    wait_text(page, "#rate-prompt", "Prompt")
    for selector in ("#rate-submit", "#rate-reason"):
        assert in_view(page, selector), selector  # the Rate tab, for comparison
    open_tab(page, "Rate pairs")
    wait_text(page, "#pair-prompt", "Pair 1")
    page.wait_for_function(
        "document.querySelectorAll('#pair-refs img, #pair-left img, #pair-right img').length >= 3", timeout=STEP_MS
    )
    page.wait_for_function(f"({UNCROPPED})('#pair-refs') && ({UNCROPPED})('#pair-left')", timeout=STEP_MS)
    ref, out = page.evaluate(f"({UNCROPPED})('#pair-refs')"), page.evaluate(f"({UNCROPPED})('#pair-left')")
    assert ref["whole"] and ref["fills"] > 0.98, ref  # the whole picture, as large as its box allows
    for side in ("width", "height"):  # a box the outputs' size, not a thumbnail
        assert ref[side] >= 0.9 * out[side], (ref, out)
    shots(page, "pair", full_page=False)
    for selector in ("#pair-refs", "#pair-left", "#pair-right", *CONTROLS):
        assert in_view(page, selector), selector
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]

    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")  # half an answer: the warning is in view, next to the buttons
    wait_text(page, "#pair-message", "choose left, right or tie for prompt following")
    assert in_view(page, "#pair-message") and in_view(page, "#pair-submit")
    shots(page, "half-answer", full_page=False)
    page.close()
