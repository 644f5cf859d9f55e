"""End to end in Debian's Chromium: a rater goes through the rating guide and the practice round with the keyboard
alone, as the Rate tab's tasks are answered: Enter on the guide starts, digits score the highlighted scale of a
practice task (the highlight starts on the first scale of each), Enter submits it and, after the feedback, goes on;
the last Enter starts the real tasks. At 1400x1000 and 800x900. Screenshots go to test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from tests.gold_samples import PROMPT, save_samples

from .conftest import SMALL, WIDE, login
from .steps import open_tab, wait_idle, wait_text

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def practised(app_server, tmp_path_factory):
    """Dataset `keys`: 4 samples with a guide and a practice round of its two gold tasks; the sample ids."""
    wb = app_server.wb
    ids = save_samples(wb, tmp_path_factory.mktemp("practice-keys"), 4, dataset="keys")
    for sid in ids[:2]:
        wb.gold.mark(user=None, dataset="keys", sample=f"#{sid}", criterion="cp", accepted="3-4", note="same cat")
        wb.gold.mark(user=None, dataset="keys", sample=f"#{sid}", criterion="pf", accepted="4")
    wb.guides.set_guide(
        user=None,
        dataset="keys",
        text="# Rate the cats\n\nThe fur first.",
        practice_tasks=2,
        practice_samples=[f"#{sid}" for sid in ids[:2]],
    )
    return ids


def _active(page, selector: str) -> None:
    page.wait_for_function("s => document.querySelector(s)?.classList.contains('rate-active')", arg=selector)


def _checked(page, scale: str, value: int) -> None:
    page.wait_for_function(
        "([s, v]) => document.querySelector(`#rate-practice-${s} input[value='${v}']`)?.checked", arg=[scale, value]
    )


@pytest.mark.parametrize(("viewport", "rater"), [(WIDE, "bob"), (SMALL, "carol")], ids=["1400x1000", "800x900"])
def test_a_practice_round_by_keyboard(browser, app_server, practised, shots, viewport, rater):
    wb = app_server.wb
    page = login(browser, app_server.url, rater, viewport)
    open_tab(page, "Rate")
    wait_text(page, "#rate-guide-title", "Read this before you start")
    wait_idle(page)
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("Enter")  # the guide's Start rating
    for number, (cp, pf) in enumerate(((3, 4), (1, 2)), start=1):
        wait_text(page, "#rate-practice-header", f"Practice task {number} of 2")
        assert not page.locator("#rate-panel").is_visible()
        _active(page, "#rate-practice-cp")  # every practice task starts on the first scale
        page.evaluate("() => document.activeElement?.blur()")
        page.keyboard.press(str(cp))
        _checked(page, "cp", cp)
        _active(page, "#rate-practice-pf")
        page.keyboard.press(str(pf))
        _checked(page, "pf", pf)
        if number == 1:
            shots(page, f"practice-keys-answered-{viewport['width']}", full_page=False)
        page.keyboard.press("Enter")  # submit the practice answer
        said = wait_text(page, "#rate-practice-feedback", "expected answer")
        assert f"you answered {cp}" in said and f"you answered {pf}" in said, said
        assert not page.locator("#rate-practice-submit").is_visible()
        if number == 1:
            wait_idle(page)
            shots(page, f"practice-keys-feedback-{viewport['width']}", full_page=False)
        page.keyboard.press("Enter")  # the next practice task, then (after the last) the real tasks
    wait_text(page, "#rate-prompt", PROMPT)
    assert page.locator("#rate-panel").is_visible() and not page.locator("#rate-practice").is_visible()
    answers = {(a.sample_id, a.criterion): a.score for a in wb.database.guides.practice_answers(rater, "keys")}
    assert sorted(answers.values()) == [1, 2, 3, 4], answers
    assert wb.ratings.ratings_of(rater) == []  # practice answers are no ratings
    # the real task answers to the keys as before
    wait_idle(page)
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("2")
    page.keyboard.press("3")
    page.wait_for_function(
        "document.querySelector(`#rate-cp input[value='2']`)?.checked && "
        "document.querySelector(`#rate-pf input[value='3']`)?.checked"
    )
    page.keyboard.press("Enter")
    wait_text(page, "#rate-message", "saved your answer (rated)")
    assert sorted(r.score for r in wb.ratings.ratings_of(rater)) == [2, 3]
    shots(page, f"practice-keys-then-rating-{viewport['width']}", full_page=False)
    assert page.errors == []  # type: ignore[attr-defined]
    page.close()
