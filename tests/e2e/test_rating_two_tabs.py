"""End to end in Debian's Chromium: one rater in two browser tabs. An answer given on a task the other tab has
answered meanwhile is not stored silently over it: the page says so and asks (Submit again replaces, Skip keeps).
Going from Rate to Rate pairs and back keeps the scores chosen and not yet submitted."""

from __future__ import annotations

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import login
from .steps import STEP_MS, open_tab, wait_text

pytestmark = pytest.mark.e2e
METHODS = ("method-a", "method-b")


@pytest.fixture(scope="module")
def seeded(app_server):
    wb = app_server.wb
    cat, coffee = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"
    for method, out in zip(METHODS, (cat / "out.jpg", coffee / "out.jpg")):
        sample = wb.scoring.make_sample([cat / "ref.jpg"], out, "a cat sitting on green grass", "cat")
        wb.recorder.save(sample, {}, user=None, dataset="tabs", method=method)
    wb.samples.set_for_rating("tabs", True, user=None)
    return wb


def _keys(page, *keys: str) -> None:
    page.evaluate("() => document.activeElement?.blur()")
    for key in keys:
        page.keyboard.press(key)


def _checked(page, selector: str) -> None:
    page.wait_for_function(f'document.querySelector("{selector}")?.checked', timeout=STEP_MS)


def _reopen(page, tab: str, counter: str) -> None:
    """Open `tab` and wait until the server has answered its open event (`counter`: the page's count of them)."""
    before = page.evaluate(f"window.{counter} || 0")
    open_tab(page, tab)
    page.wait_for_function(f"(window.{counter} || 0) > {before}", timeout=STEP_MS)


def _scores(wb, rater: str) -> dict:
    return {(r.sample_id, r.criterion): (r.status, r.score) for r in wb.ratings.ratings_of(rater)}


def test_switching_tabs_keeps_unsaved_choices(browser, app_server, seeded, shots):
    page = login(browser, app_server.url, "carol")
    wait_text(page, "#rate-progress", "rated 0 /")
    _keys(page, "3")
    _checked(page, "#rate-cp input[value='3']")
    open_tab(page, "Rate pairs")
    wait_text(page, "#pair-prompt", "Pair 1")
    _keys(page, "ArrowLeft")
    _checked(page, "#pair-cp input[value='left']")
    _reopen(page, "Rate", "mascRateAnswers")
    _checked(page, "#rate-cp input[value='3']")
    _reopen(page, "Rate pairs", "mascPairAnswers")
    _checked(page, "#pair-cp input[value='left']")
    shots(page, "pair-choice-kept", full_page=False)
    assert seeded.ratings.ratings_of("carol") == [] and seeded.database.store.pairwise.current(rater="carol") == []
    page.close()


def test_an_answer_given_in_another_tab_is_not_replaced_silently(browser, app_server, seeded, shots):
    wb = seeded
    first, second = login(browser, app_server.url, "bob"), login(browser, app_server.url, "bob")
    for page in (first, second):
        wait_text(page, "#rate-progress", "rated 0 /")
    assert first.locator("#rate-prompt").inner_text() == second.locator("#rate-prompt").inner_text()
    _keys(first, "4", "4", "Enter")
    wait_text(first, "#rate-progress", "rated 1 /")
    (sample,) = {sid for sid, _ in _scores(wb, "bob")}
    _keys(second, "0", "0", "Enter")  # the second tab still shows the task the first one answered
    asked = wait_text(second, "#rate-message", "you already answered this task in another tab")
    assert "CP 4, PF 4" in asked and "Submit again to replace" in asked and "Skip to keep" in asked
    assert _scores(wb, "bob") == {(sample, "cp"): ("rated", 4), (sample, "pf"): ("rated", 4)}
    shots(second, "asked", full_page=False)
    _keys(second, "Enter")  # replace it, deliberately
    wait_text(second, "#rate-message", "saved your answer (rated)")
    assert _scores(wb, "bob") == {(sample, "cp"): ("rated", 0), (sample, "pf"): ("rated", 0)}

    for page in (first, second):
        open_tab(page, "Rate pairs")
        wait_text(page, "#pair-prompt", "Pair 1")
    _keys(first, "ArrowLeft", "ArrowLeft", "Enter")
    wait_text(first, "#pair-message", "saved your answers")
    _keys(second, "ArrowRight", "ArrowRight", "Enter")
    asked = wait_text(second, "#pair-message", "you already answered this pair in another tab")
    assert "CP left, PF left" in asked
    _keys(second, "s")  # keep it
    wait_text(second, "#pair-message", "kept your answer")
    (task,) = wb.database.store.pairwise.tasks(rater="bob")
    assert {c: j.winner for c, j in task.judgments.items()} == {"cp": "left", "pf": "left"}
    assert not first.errors and not second.errors
    first.close()
    second.close()
