"""End to end in Debian's Chromium, as an admin: the Raters tab marks a sample as gold, makes the attention checks,
and computes the rater report, whose table names every rater with their numbers and the marked rater with the reason,
at 1400x1000 and 800x900, with the CSV and JSON to download. Screenshots go to test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from tests.gold_samples import save_samples

from .conftest import SMALL, WIDE, login
from .steps import box, open_tab, pick_option, wait_idle, wait_text

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def answered(app_server, tmp_path_factory):
    """Dataset `crowd`: 10 samples; bob answers carefully, carol gives the same answer to everything, too fast."""
    wb = app_server.wb
    ids = save_samples(wb, tmp_path_factory.mktemp("crowd-images"), 10, dataset="crowd")
    truth = [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    for name, scores, seconds in (("bob", truth, 6.0), ("carol", [2] * 10, 0.4)):
        wb.database.store.ratings.ensure_rater(name)
        for k, (sid, score) in enumerate(zip(ids, scores, strict=True), 1):
            wb.ratings.submit(
                name, sid, {"cp": score, "pf": score}, seconds_spent=seconds + k / 100, presentation_order=k
            )
    return ids


@pytest.mark.parametrize("viewport", [WIDE, SMALL], ids=["1400x1000", "800x900"])
def test_the_admin_sees_who_to_trust_and_why(browser, app_server, answered, shots, viewport):
    page = login(browser, app_server.url, "alice", viewport)
    open_tab(page, "Raters")
    pick_option(page, "#raters-dataset", "crowd")
    wait_idle(page)
    page.locator("#gold-sample input, #gold-sample textarea").first.fill(f"#{answered[0]}")
    page.locator("#gold-accepted input, #gold-accepted textarea").first.fill("0-1")
    page.locator("#gold-mark").click()
    wait_text(page, "#raters-message", "is a gold task: cp accepts 0-1")
    assert "#" + str(answered[0]) in page.locator("#gold-table").inner_text()
    page.locator("#gold-attention").click()
    wait_text(page, "#raters-message", "attention checks of 'crowd'")
    assert "attention:reference-as-output:cat" in page.locator("#gold-table").inner_text()

    page.locator("#raters-nboot input").fill("200")
    page.locator("#raters-run").click()
    said = wait_text(page, "#raters-message", "rater(s)")
    assert said.strip() == "2 rater(s), 1 marked", said
    table = page.locator("#raters-table").inner_text()
    assert "bob" in table and "carol" in table and "1/1" in table  # bob's gold answer (0) is accepted
    marks = wait_text(page, "#raters-marks", "carol")
    assert "carol is marked" in marks and "10 identical answers in a row" in marks and "bob" not in marks
    assert "under the time floor" in marks
    files = page.locator("#raters-files").inner_text().replace("\n", "")
    assert "raters-crowd-cp.csv" in files and "raters-crowd-cp.json" in files
    # nothing runs off the window's width: the table scrolls inside its own box
    assert box(page, "#raters-table")["width"] <= viewport["width"]
    assert box(page, "#raters-run")["x"] >= 0
    page.locator("#raters-table").scroll_into_view_if_needed()
    shots(page, "raters-report")
    assert page.errors == []  # type: ignore[attr-defined]
    page.close()
