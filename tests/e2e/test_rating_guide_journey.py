"""End to end in Debian's Chromium: the admin sets a dataset's rating guide with an example and a practice round in
the Raters tab; a rater is shown the guide before their first task, answers the practice round with feedback after
each answer, then rates real tasks (keyboard as before), and opens the guide again with the Guide button; at
1400x1000 and 800x900. The guide's Markdown fetches nothing from elsewhere; practice answers are no ratings.
Screenshots go to test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from masc_ui.workbench.ratings import criterion_choices
from tests.gold_samples import PROMPT, save_samples

from .conftest import SMALL, WIDE, login
from .steps import box, open_tab, pick_option, pick_radio, wait_idle, wait_text

pytestmark = pytest.mark.e2e

GUIDE = (
    "# How to rate the cats\n\nLook at the **ears** and the *fur* first.\n\n"
    "<img src='http://guide.invalid/raw.png'> ![logo](http://guide.invalid/logo.png)"
)


@pytest.fixture(scope="module")
def guided(app_server, tmp_path_factory):
    """Dataset `cats`: 6 samples, two of them gold tasks (the practice round's)."""
    wb = app_server.wb
    ids = save_samples(wb, tmp_path_factory.mktemp("guide-images"), 6, dataset="cats")
    for sid in ids[:2]:
        wb.gold.mark(
            user=None, dataset="cats", sample=f"#{sid}", criterion="cp", accepted="3-4", note="the cat's fur matches"
        )
        wb.gold.mark(user=None, dataset="cats", sample=f"#{sid}", criterion="pf", accepted="4")
    return ids


@pytest.mark.parametrize("viewport", [WIDE, SMALL], ids=["1400x1000", "800x900"])
def test_the_admin_sets_the_guide(browser, app_server, guided, shots, viewport):
    page = login(browser, app_server.url, "alice", viewport)
    open_tab(page, "Raters")
    pick_option(page, "#raters-dataset", "cats")
    wait_idle(page)
    page.locator("#guide-box").get_by_text("Rating guide").first.click()
    # The closed accordion shows no progress, and opening the tab may have loaded another dataset's guide first:
    # the form holds this dataset's guide (none yet, or the other viewport's) once the message names it.
    wait_text(page, "#guide-message", "'cats'")
    wait_idle(page)
    page.locator("#guide-text textarea").fill(GUIDE)
    page.locator("#guide-examples textarea").fill(f"#{guided[2]}:4:3:the same cat; the grass is there")
    page.locator("#guide-practice input").fill("2")
    page.locator("#guide-practice-samples input, #guide-practice-samples textarea").first.fill(
        f"#{guided[0]}, #{guided[1]}"
    )
    page.locator("#guide-practice-samples input, #guide-practice-samples textarea").first.press("Tab")
    page.locator("#guide-save").click()
    said = wait_text(page, "#guide-message", "saved version")
    assert "1 example(s), practice round of 2 task(s)" in said, said
    preview = page.locator("#guide-preview")
    assert "How to rate the cats" in preview.inner_text()
    assert preview.locator("img").count() == 0  # neither the raw HTML image nor the Markdown one is made
    assert box(page, "#guide-save")["x"] >= 0 and box(page, "#guide-text")["width"] <= viewport["width"]
    page.locator("#guide-box").scroll_into_view_if_needed()
    shots(page, f"admin-guide-{viewport['width']}")
    assert page.errors == []  # type: ignore[attr-defined]
    page.close()


@pytest.mark.parametrize(("viewport", "rater"), [(WIDE, "bob"), (SMALL, "carol")], ids=["1400x1000", "800x900"])
def test_a_rater_reads_the_guide_practises_then_rates(browser, app_server, guided, shots, viewport, rater):
    wb = app_server.wb
    assert wb.guides.summary(user=None, dataset="cats").guide is not None  # the admin's test ran first
    fetched: list[str] = []
    page = login(browser, app_server.url, rater, viewport)
    page.on("request", lambda r: fetched.append(r.url))
    open_tab(page, "Rate")
    wait_text(page, "#rate-guide-title", "Read this before you start")
    guide = page.locator("#rate-guide-text")
    assert guide.locator("h1").inner_text() == "How to rate the cats"
    assert "<img src='http://guide.invalid/raw.png'>" in guide.inner_text() and guide.locator("img").count() == 0
    assert not page.locator("#rate-panel").is_visible()
    example = page.locator("#rate-guide-example-1")
    assert "Expected Concept preservation: 4" in example.inner_text() and PROMPT in example.inner_text()
    assert "the same cat; the grass is there" in example.inner_text()
    assert not page.locator("#rate-guide-example-2").is_visible()
    page.wait_for_function("document.querySelectorAll('#rate-guide-example-1 img').length >= 2", timeout=180_000)
    sources = example.locator("img").evaluate_all("imgs => imgs.map(i => i.src)")
    assert all(str(wb.ratings.image_folder) in src for src in sources), sources  # blind files
    shots(page, f"guide-first-{viewport['width']}", full_page=False)

    page.locator("#rate-guide-start").click()
    for number in (1, 2):
        wait_text(page, "#rate-practice-header", f"Practice task {number} of 2")
        assert not page.locator("#rate-panel").is_visible() and not page.locator("#rate-practice-skip").is_visible()
        pick_radio(page, "#rate-practice-cp", criterion_choices("cp")[1][0])
        pick_radio(page, "#rate-practice-pf", criterion_choices("pf")[4][0])
        page.locator("#rate-practice-submit").click()
        said = wait_text(page, "#rate-practice-feedback", "expected answer")
        assert "✗ Concept preservation: you answered 1; the expected answer was 3-4: the cat's fur matches" in said
        assert "✓ Prompt following: you answered 4; the expected answer was 4" in said
        if number == 1:
            wait_idle(page)
            shots(page, f"practice-feedback-{viewport['width']}", full_page=False)
        page.locator("#rate-practice-next").click()
    wait_text(page, "#rate-prompt", PROMPT)
    assert page.locator("#rate-panel").is_visible() and not page.locator("#rate-practice").is_visible()
    assert len(wb.database.guides.practice_answers(rater, "cats")) == 4
    assert wb.ratings.ratings_of(rater) == []  # practice answers are no ratings

    # a real task, by keyboard as before
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("3")
    page.keyboard.press("2")
    page.wait_for_function(
        "document.querySelector(`#rate-cp input[value='3']`)?.checked && "
        "document.querySelector(`#rate-pf input[value='2']`)?.checked",
        timeout=180_000,
    )
    page.keyboard.press("Enter")
    wait_text(page, "#rate-message", "saved your answer (rated)")
    rated = {r.sample_id for r in wb.ratings.ratings_of(rater)}
    assert len(rated) == 1 and not rated & set(guided[:2])  # practice samples are never real tasks
    shots(page, f"real-task-{viewport['width']}", full_page=False)

    page.locator("#rate-guide-open").click()
    wait_text(page, "#rate-guide-title", "Rating guide")
    assert "Read this before you start" not in page.locator("#rate-guide-title").inner_text()
    assert page.locator("#rate-guide-start").inner_text().strip() == "Back to rating"
    shots(page, f"guide-on-demand-{viewport['width']}", full_page=False)
    page.locator("#rate-guide-start").click()
    page.locator("#rate-panel").wait_for(state="visible")
    assert not page.locator("#rate-guide").is_visible()

    # the admin changes the guide: the rater's next answer brings the new version before the next task
    wb.guides.set_guide(user=None, dataset="cats", text=f"{GUIDE}\n\nChanged: look at the *tail* too ({rater}).")
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("2")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    wait_text(page, "#rate-guide-title", "Read this before you start")
    assert f"look at the tail too ({rater})" in page.locator("#rate-guide-text").inner_text()
    assert not page.locator("#rate-panel").is_visible()
    assert len(wb.ratings.ratings_of(rater)) == 4  # the second answer was stored (2 criteria each)
    page.locator("#rate-guide-start").click()
    page.locator("#rate-panel").wait_for(state="visible")  # the practice round was done: straight to the task
    wait_text(page, "#rate-prompt", PROMPT)
    assert not [url for url in fetched if "guide.invalid" in url], fetched
    assert page.errors == []  # type: ignore[attr-defined]
    page.close()
