"""No silent loss, feedback where the eye is (issue 11), in Debian's Chromium: a mask change after Run marks the
results out of date (and undoing it makes them current again), masks the user drew are replaced by an example only
on a second press, and a Browse "Open" that fails is said next to the button and as a toast. Screenshots go to
test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from .conftest import login
from .steps import beside, brush_mask, open_tab, pick_option, text_of, toast_texts, wait_idle, wait_text

pytestmark = pytest.mark.e2e
CAT_PROMPT = "a photo of a cat lying on the grass in a sunny garden"


def test_a_mask_change_goes_out_of_date_and_drawn_masks_need_a_second_load(browser, app_server, shots):
    page = login(browser, app_server.url, "alice")
    pick_option(page, "#example-pick", "Cat on the grass")
    page.locator("#example-load").click()
    wait_text(page, "#load-message", "loaded example")
    wait_text(page, "#mask-message", "mask source: imported")
    page.locator("#run").click()
    wait_text(page, "#run-message", "scored")
    assert "out of date" not in text_of(page, "#stale-box")

    # a mask change after Run: the score table is out of date; undoing it makes the table current again
    page.locator("#mask-clear").click()
    wait_text(page, "#mask-message", "mask cleared")
    stale = wait_text(page, "#stale-box", "out of date")
    assert "score table was computed" in stale and "Press Run again" in stale
    shots(page, "mask-change-out-of-date")
    page.locator("#mask-undo").click()
    wait_text(page, "#mask-message", "mask change undone")
    page.wait_for_function(
        "() => !document.querySelector('#stale-box').innerText.includes('out of date')", timeout=180_000
    )

    # strokes the user drew are not replaced by another example until Load is pressed again
    wait_idle(page)
    brush_mask(page, "#mask-editor", "#mask-use-brush", "#mask-message", "brush mask:")
    pick_option(page, "#example-pick", "Coffee cup on a brick wall")
    page.locator("#example-load").click()
    warned = wait_text(page, "#load-message", "not done yet")
    assert "reference 1: brush mask" in warned and "Press 'Load example' again" in warned
    assert beside(page, "#load-message", "#example-load")
    assert page.locator("#prompt textarea").input_value() == CAT_PROMPT  # the cat pair and its masks stay
    assert "brush" in text_of(page, "#mask-message")
    shots(page, "unsaved-masks-warning")
    page.locator("#example-load").click()
    wait_text(page, "#load-message", "loaded example 'Coffee cup on a brick wall'")
    assert page.locator("#prompt textarea").input_value() != CAT_PROMPT
    assert not page.errors, page.errors
    page.close()


def test_a_failed_open_is_said_next_to_the_button_and_as_a_toast(browser, app_server, shots):
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Browse and export")
    wait_text(page, "#browse-message", "sample(s)")
    page.locator("#browse-sample-id input").fill("999")
    page.locator("#browse-open").click()
    said = "sample #999 is not in the database"
    assert said in wait_text(page, "#browse-open-message", said)
    page.wait_for_function(
        "(t) => [...document.querySelectorAll('.toast-body, [data-testid=toast-body]')]"
        ".some((e) => e.innerText.includes(t))",
        arg=said,
        timeout=30_000,
    )
    assert any(said in text for text in toast_texts(page))
    shots(page, "open-999-toast")
    page.close()
