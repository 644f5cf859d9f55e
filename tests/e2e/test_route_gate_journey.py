"""In Debian's Chromium, behind the route gate (`masc_ui.ui.route_gate`): the login page and a rater's whole visit
(a task answered, skipped, gone back to, the pairs, logging out) ask the server for nothing it refuses, so the
routes listed for visitors and raters are all the page needs; the Score tab's editor script is no rater's."""

from __future__ import annotations

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import USERS
from .steps import open_tab, wait_text

pytestmark = pytest.mark.e2e
REFUSED = (401, 403, 404)
SETTLE_MS = 2_000


@pytest.fixture(scope="module")
def seeded(app_server):
    wb = app_server.wb
    cat, coffee = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"
    for i, out in enumerate((cat / "out.jpg", coffee / "out.jpg", cat / "ref.jpg")):
        sample = wb.scoring.make_sample([cat / "ref.jpg"], out, "a cat behind the gate", "cat")  # one prompt: pairs
        wb.recorder.save(sample, {}, user="alice", dataset="gate-bench", method=f"m{i}")
    wb.samples.set_for_rating("gate-bench", True, user="alice")
    return app_server


def _watched(browser, url: str):
    """A new page and the list of (status, method, path) of every answer it got that the gate may have refused."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(180_000)
    refused: list[tuple[int, str, str]] = []
    page.on(
        "response",
        lambda r: (
            refused.append((r.status, r.request.method, r.url.removeprefix(url))) if r.status in REFUSED else None
        ),
    )
    return page, refused


def _settle(page) -> None:
    """Let the page finish what it loads after it shows (fonts, images; the heartbeat stays open, so no
    "network idle" ever comes)."""
    page.wait_for_load_state("load")
    page.wait_for_timeout(SETTLE_MS)


def test_the_login_page_and_a_raters_visit_need_no_refused_route(browser, seeded):
    url = seeded.url
    page, refused = _watched(browser, url)
    page.goto(url)
    page.get_by_label("username").wait_for()
    _settle(page)
    assert refused == []
    page.close()

    page, refused = _watched(browser, url)
    page.goto(url)
    page.get_by_label("username").fill("bob")
    page.get_by_label("password").fill(USERS["bob"])
    page.get_by_role("button", name="Login").click()
    wait_text(page, "#rate-prompt", "a cat behind the gate")
    page.locator("body").focus()
    for key in ("1", "2", "Enter"):
        page.keyboard.press(key)
    wait_text(page, "#rate-message", "saved your answer")
    page.keyboard.press("s")
    wait_text(page, "#rate-message", "skipped")
    page.keyboard.press("b")
    wait_text(page, "#rate-message", "back to your previous task")
    open_tab(page, "Rate pairs")
    page.wait_for_function("document.querySelectorAll('#pair-left img, #pair-right img').length >= 2")
    _settle(page)
    page.locator("#logout").click()
    page.get_by_label("username").wait_for()
    _settle(page)
    assert refused == []
    page.close()
