"""End to end in Debian's Chromium: where the keyboard's highlight is in both rating tabs. Every new task starts on
the first criterion, whether the previous one was submitted with Enter or with the mouse; after a refused half
answer the highlight is on the missing criterion, and the next key answers that one, never the other."""

from __future__ import annotations

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import login
from .steps import STEP_MS, open_tab, wait_text

pytestmark = pytest.mark.e2e
METHODS = ("method-a", "method-b", "method-c")
"""Three methods of one reference and prompt: three pairs, three Rate tasks."""


@pytest.fixture(scope="module")
def seeded(app_server):
    wb = app_server.wb
    cat, coffee = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"
    for method, out in zip(METHODS, (cat / "out.jpg", coffee / "out.jpg", cat / "ref.jpg")):
        sample = wb.scoring.make_sample([cat / "ref.jpg"], out, "a cat sitting on green grass", "cat")
        wb.recorder.save(sample, {}, user=None, dataset="focus", method=method)
    wb.samples.set_for_rating("focus", True, user=None)
    return wb


def _highlighted(page, selector: str, css_class: str) -> None:
    page.wait_for_function(
        "([s, c]) => document.querySelector(s)?.classList.contains(c)", arg=[selector, css_class], timeout=STEP_MS
    )


def _checked(page, selector: str) -> bool:
    return page.locator(selector).is_checked()


def _current(wb, rater: str) -> dict:
    return {(r.sample_id, r.criterion): r.score for r in wb.ratings.ratings_of(rater)}


def test_rate_tab_highlight_after_a_refusal_and_a_mouse_submit(browser, app_server, seeded, shots):
    wb = seeded
    page = login(browser, app_server.url, "bob")
    open_tab(page, "Rate")
    wait_text(page, "#rate-prompt", "a cat sitting")
    wait_text(page, "#rate-progress", "rated 0 /")
    _highlighted(page, "#rate-cp", "rate-active")
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("2")  # concept preservation 2; the highlight moves to prompt following
    page.wait_for_function("document.querySelector(\"#rate-cp input[value='2']\")?.checked", timeout=STEP_MS)
    page.keyboard.press("Enter")  # half an answer: refused
    wait_text(page, "#rate-message", "choose a score (0-4) for prompt following")
    _highlighted(page, "#rate-pf", "rate-active")
    assert "rate-active" not in (page.locator("#rate-cp").get_attribute("class") or "")
    shots(page, "refused-highlight-on-pf", full_page=False)
    page.keyboard.press("3")  # answers prompt following, the missing one
    page.wait_for_function("document.querySelector(\"#rate-pf input[value='3']\")?.checked", timeout=STEP_MS)
    assert _checked(page, "#rate-cp input[value='2']")  # concept preservation kept its 2
    page.keyboard.press("Enter")
    wait_text(page, "#rate-progress", "rated 1 /")
    assert sorted(_current(wb, "bob").values()) == [2, 3]
    _highlighted(page, "#rate-cp", "rate-active")  # a new task starts on the first criterion

    # A mouse submit: the next task starts on the first criterion too.
    page.locator("#rate-cp label").nth(4).click()
    page.locator("#rate-pf label").nth(1).click()
    page.wait_for_function(
        "document.querySelector(\"#rate-cp input[value='4']\")?.checked && "
        "document.querySelector(\"#rate-pf input[value='1']\")?.checked",
        timeout=STEP_MS,
    )
    page.locator("#rate-submit").click()
    wait_text(page, "#rate-progress", "rated 2 /")
    _highlighted(page, "#rate-cp", "rate-active")
    shots(page, "after-mouse-submit", full_page=False)
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("1")
    page.wait_for_function("document.querySelector(\"#rate-cp input[value='1']\")?.checked", timeout=STEP_MS)
    assert page.locator("#rate-pf input:checked").count() == 0
    _highlighted(page, "#rate-pf", "rate-active")
    assert not page.errors, page.errors
    page.close()


def test_rate_pairs_highlight_after_a_mouse_submit_and_a_refusal(browser, app_server, seeded, shots):
    wb = seeded
    page = login(browser, app_server.url, "carol")
    wait_text(page, "#rate-prompt", "Prompt")
    errors_before = len(page.errors)
    open_tab(page, "Rate pairs")
    wait_text(page, "#pair-prompt", "Pair 1")
    _highlighted(page, "#pair-box-cp", "pair-active")

    # Both answers and Submit with the mouse: the next pair opens on concept preservation.
    page.locator("#pair-cp").get_by_text("← Left", exact=True).click()
    page.locator("#pair-pf").get_by_text("→ Right", exact=True).click()
    page.wait_for_function(
        "document.querySelector(\"#pair-cp input[value='left']\")?.checked && "
        "document.querySelector(\"#pair-pf input[value='right']\")?.checked",
        timeout=STEP_MS,
    )
    page.locator("#pair-submit").click()
    wait_text(page, "#pair-prompt", "Pair 2")
    _highlighted(page, "#pair-box-cp", "pair-active")
    shots(page, "pair-2-after-mouse-submit", full_page=False)
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("document.querySelector(\"#pair-cp input[value='left']\")?.checked", timeout=STEP_MS)
    assert page.locator("#pair-pf input:checked").count() == 0  # the key answered concept preservation only
    _highlighted(page, "#pair-box-pf", "pair-active")

    # Back up to concept preservation, then a mouse Submit of the half answer: refused, the highlight on the
    # missing prompt following, and the next key answers that one.
    page.keyboard.press("ArrowUp")
    _highlighted(page, "#pair-box-cp", "pair-active")
    page.locator("#pair-submit").click()
    wait_text(page, "#pair-message", "choose left, right or tie for prompt following")
    _highlighted(page, "#pair-box-pf", "pair-active")
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("ArrowDown")
    page.wait_for_function("document.querySelector(\"#pair-pf input[value='tie']\")?.checked", timeout=STEP_MS)
    assert _checked(page, "#pair-cp input[value='left']")
    page.keyboard.press("Enter")
    wait_text(page, "#pair-prompt", "Pair 3")
    judged = {
        x.position: {c: j.winner for c, j in x.judgments.items()}
        for x in wb.database.store.pairwise.tasks(rater="carol")
    }
    assert judged[1] == {"cp": "left", "pf": "right"} and judged[2] == {"cp": "left", "pf": "tie"}
    assert not page.errors[errors_before:], page.errors
    page.close()
