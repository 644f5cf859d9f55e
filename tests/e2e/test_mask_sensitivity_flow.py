"""End to end in Chromium: the mask-sensitivity check in the Score tab on the cat example (imported masks): a
preset, the check's table (own masks, eroded and dilated, segmented by the subject's name, the spread), its
refusal in words, and its "out of date" note when the prompt changes. Screenshots at 1400x1000 and 800x900 go to
test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from .conftest import login
from .steps import fill_settled, pick_option, wait_text

pytestmark = pytest.mark.e2e
STEP_MS = 240_000


@pytest.mark.parametrize("viewport", [(1400, 1000), (800, 900)], ids=["wide", "narrow"])
def test_mask_sensitivity_of_the_cat_example(browser, app_server, shots, viewport):
    page = login(browser, app_server.url, "alice")
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    pick_option(page, "#example-pick", "Cat on the grass")
    page.locator("#example-load").click()
    wait_text(page, "#mask-message", "mask source: imported")

    page.locator("#preset-dreambench").click()
    note = wait_text(page, "#preset-note", "DreamBench++ table")
    assert "DreamBench++ CP, DreamBench++ PF are not offered with these settings" in note
    page.locator("#preset-subject").click()  # CP, CLIP-I, CLIP-I-Seg, DINO-I, FaceSim
    page.wait_for_function("document.querySelectorAll('#metric-pick input:checked').length === 5", timeout=STEP_MS)

    page.get_by_text("Mask sensitivity (CP, PF").click()
    shifts = page.locator("#sensitivity-shifts textarea, #sensitivity-shifts input").first
    fill_settled(shifts, "3,500")
    page.locator("#check-sensitivity").click()
    refused = wait_text(page, "#sensitivity-table", "give whole pixel counts", timeout=STEP_MS)
    assert "'3,500'" in refused and "such as 3 or 2,5" in refused
    fill_settled(shifts, "2")
    page.locator("#check-sensitivity").click()
    page.locator("#sensitivity-values").wait_for(timeout=STEP_MS)
    table = page.locator("#sensitivity-values")
    head = table.locator("th").all_inner_texts()
    assert head[:4] == ["metric", "own masks", "eroded 2 px", "dilated 2 px"] and head[-1] == "spread", head
    names = table.locator("tr td:first-child").all_inner_texts()
    assert names == ["MaSC CP", "CLIP-I-Seg"], names  # the subject preset's mask-dependent metrics
    page.locator("#sensitivity-values").scroll_into_view_if_needed()
    shots(page, "mask-sensitivity")

    page.locator("#prompt textarea").fill("a photo of a cat on the moon")
    here = wait_text(page, "#sensitivity-stale", "out of date", timeout=STEP_MS)
    assert "the mask sensitivity was computed" in here and "“Check mask sensitivity”" in here
    assert "mask sensitivity" in wait_text(page, "#stale-box", "out of date")
