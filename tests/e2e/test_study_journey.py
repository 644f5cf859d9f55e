"""Crowd study participants in Debian's Chromium: an admin creates a study in the Raters tab and copies its link; a
participant opens it as a crowd platform sends them (no login), sees the Rate tab alone, rates the study's tasks and
gets the completion code, shown alone (no empty rating form); the same link again shows the code alone, never a second
round; a study with a redirect URL sends
the browser there at the end; a link with a wrong secret is a plain 404. At 1400x1000 and 800x900."""

from __future__ import annotations

import pytest
from gold_samples import save_samples

from .conftest import SMALL, WIDE, login
from .steps import open_tab, text_of, wait_idle, wait_text

pytestmark = pytest.mark.e2e

DONE_URL = "https://app.prolific.com/submissions/complete?cc=REDIR9"


@pytest.fixture(scope="module")
def crowd(app_server, tmp_path_factory):
    """Four samples in `crowd`, marked for rating."""
    return save_samples(app_server.wb, tmp_path_factory.mktemp("crowd-images"), 4, dataset="crowd")


def _participant(browser, link: str, viewport: dict):
    page = browser.new_page(viewport=viewport)
    page.set_default_timeout(180_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(link)
    page.errors = errors  # type: ignore[attr-defined]
    return page


def _answer(page, cp: int, pf: int) -> None:
    before = text_of(page, "#rate-progress")
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press(str(cp))
    page.keyboard.press(str(pf))
    page.wait_for_function(
        "([a, b]) => document.querySelector(`#rate-cp input[value='${a}']`)?.checked && "
        "document.querySelector(`#rate-pf input[value='${b}']`)?.checked",
        arg=[cp, pf],
    )
    page.keyboard.press("Enter")
    page.wait_for_function(
        "b => { const e = document.querySelector('#rate-progress [data-testid=markdown]');"
        " return e && e.innerText !== b; }",
        arg=before,
    )
    wait_idle(page)


def _only_the_rate_tab(page, *, finished: bool = False) -> None:
    """The participant's page holds the Rate tab alone; with `finished`, only its finished page (the completion code):
    no rating form, no shortcuts, no guide button."""
    assert page.locator("#rate-prompt").is_visible()
    form = ("#rate-form", "#rate-refs", "#rate-out", "#rate-cp", "#rate-pf", "#rate-submit", "#rate-skip")
    for part in (*form, "#rate-reason", "#rate-shortcuts-box", "#rate-guide-open"):
        assert page.locator(part).is_visible() is not finished, part
    for hidden in ("#tab-score", "#tab-pairs", "#tab-raters", "#tab-browse", "#logout", "#study-box"):
        assert page.locator(hidden).count() == 0, hidden


def test_a_participant_goes_from_the_link_to_the_completion_code(browser, app_server, crowd, shots):
    admin = login(browser, app_server.url, "alice", WIDE)
    open_tab(admin, "Raters")
    admin.locator("#raters-dataset input").fill("crowd")
    admin.locator("#raters-dataset input").press("Enter")
    admin.locator("#study-name input, #study-name textarea").first.fill("pilot")
    admin.locator("#study-tasks input").fill("2")
    admin.locator("#study-code input, #study-code textarea").first.fill("C0DE42")
    admin.locator("#study-create").click()
    wait_text(admin, "#study-message", "copy its link now")
    link = admin.locator("#study-link textarea, #study-link input").first.input_value()
    assert link.startswith(app_server.url + "/study/") and "PROLIFIC_PID={{%PROLIFIC_PID%}}" in link
    admin.locator("#study-box").scroll_into_view_if_needed()
    shots(admin, "admin-created-study-1400x1000", full_page=False)
    link = link.split("?", 1)[0] + "?PROLIFIC_PID=5f8a11&STUDY_ID=S1&SESSION_ID=X1"

    page = _participant(browser, link, WIDE)
    wait_text(page, "#rate-progress", "assigned 2")
    _only_the_rate_tab(page)
    assert page.url == app_server.url + "/"  # the link's secret left the address bar
    shots(page, "participant-first-task-1400x1000", full_page=False)
    _answer(page, 3, 2)
    wait_text(page, "#rate-progress", "rated 1")
    _answer(page, 4, 4)
    done = wait_text(page, "#rate-prompt", "Study finished")
    assert "Your completion code is C0DE42" in done
    page.locator("#rate-form").wait_for(state="hidden")
    _only_the_rate_tab(page, finished=True)
    shots(page, "participant-finished-1400x1000", full_page=False)
    assert not page.errors  # type: ignore[attr-defined]

    # The same participant again, in a small window: the code, never a second round.
    again = _participant(browser, link, SMALL)
    assert "C0DE42" in wait_text(again, "#rate-prompt", "Study finished")
    again.locator("#rate-form").wait_for(state="hidden")
    _only_the_rate_tab(again, finished=True)
    wait_idle(again)
    assert "needs a login" not in again.inner_text("#rate-panel")  # the guide's step knows the participant
    shots(again, "participant-again-800x900", full_page=False)
    rater = "study{}:5f8a11".format(link.split("/study/", 1)[1].split(".", 1)[0])
    assert len({r.sample_id for r in app_server.wb.ratings.ratings_of(rater)}) == 2

    # The admin sees the participant finished.
    admin.locator("#study-id input").fill(link.split("/study/", 1)[1].split(".", 1)[0])
    admin.locator("#study-show").click()
    wait_text(admin, "#study-message", "1 participant(s), 1 finished")
    cells = admin.locator("#study-table td").evaluate_all("cells => cells.map(c => c.textContent.trim())")
    assert "pilot" in cells
    row = cells[cells.index("pilot") - 1 :][:9]
    assert row[-3:] == ["1", "1", "open"], cells  # started, finished, state: the table was refreshed
    admin.locator("#study-participants").scroll_into_view_if_needed()
    shots(admin, "admin-participants-1400x1000", full_page=False)
    # The studies in a small window: listed when the tab opens.
    small = login(browser, app_server.url, "alice", SMALL)
    open_tab(small, "Raters")
    small.wait_for_function("() => document.querySelector('#study-table')?.textContent.includes('pilot')")
    small.locator("#study-box").scroll_into_view_if_needed()
    shots(small, "admin-studies-800x900", full_page=False)
    for p in (admin, page, again, small):
        p.close()


def test_a_participant_is_sent_to_the_redirect_url_at_the_end(browser, app_server, crowd, shots):
    made = app_server.wb.studies.create(
        user=None, dataset="crowd", name="redirect", tasks=1, completion_code=None, redirect_url=DONE_URL
    )
    page = browser.new_page(viewport=SMALL)
    page.set_default_timeout(180_000)
    page.route("https://app.prolific.com/**", lambda route: route.fulfill(body="<h1>Prolific: completed</h1>"))
    page.goto(made.url(app_server.url).split("?", 1)[0] + "?participant=small-window")
    wait_text(page, "#rate-progress", "assigned 1")
    _only_the_rate_tab(page)
    shots(page, "participant-task-800x900", full_page=False)
    before = text_of(page, "#rate-progress")
    page.evaluate("() => document.activeElement?.blur()")
    page.keyboard.press("2")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_url(DONE_URL)
    assert "Prolific: completed" in page.inner_text("h1")
    assert before
    # Opening the page again (the link sends the browser to it) goes straight there too.
    again = page.request.get(app_server.url + "/", max_redirects=0)
    assert (again.status, again.headers["location"]) == (303, DONE_URL)
    page.close()


def test_a_wrong_link_is_a_plain_not_found_page(browser, app_server, crowd, shots):
    made = app_server.wb.studies.create(user=None, dataset="crowd", name="wrong", tasks=1, completion_code="X1")
    page = browser.new_page(viewport=SMALL)
    answer = page.goto(f"{app_server.url}/study/{made.study.id}.not-the-secret?PROLIFIC_PID=p1")
    assert answer.status == 404
    assert "this study link is not valid" in page.inner_text("body")
    shots(page, "wrong-link-800x900", full_page=False)
    assert app_server.wb.studies.participants(user=None, study_id=made.study.id) == []
    page.close()
