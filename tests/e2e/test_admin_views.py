"""End to end in Debian's Chromium: an admin opens the Leaderboard and Compare tabs and the Agreement tab's pairwise
results on a small judged dataset (three methods, four references) and sees the numbers the use cases give.
Screenshots at 1400x1000 and 800x900 go to test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from masc_ui.workbench.leaderboard import table_rows
from tests.admin_data import add_judged_dataset

from .conftest import login
from .steps import box, open_tab
from .test_browser_flows import STEP_MS, wait_text

pytestmark = pytest.mark.e2e
NARROW, WIDE = {"width": 800, "height": 900}, {"width": 1400, "height": 1000}


@pytest.fixture(scope="module")
def judged(app_server):
    return add_judged_dataset(app_server.wb.database.store)


def wait_value(page, selector: str, value: str) -> None:
    page.wait_for_function(
        "([s, v]) => { const i = document.querySelector(s); return i && i.value === v; }",
        arg=[selector, value],
        timeout=STEP_MS,
    )


def both_sizes(page, shots, name: str, controls: tuple[str, ...]) -> None:
    """Screenshots at both sizes; at each, the page is no wider than the window and every one of `controls` lies
    within the window's width (reachable by scrolling down only, never sideways or hidden)."""
    for size, suffix in ((WIDE, ""), (NARROW, "-narrow")):
        page.set_viewport_size(size)
        page.wait_for_timeout(800)  # Gradio lays the tab bar out again
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], f"{name}: wider than the window"
        for selector in controls:
            found = box(page, selector)
            assert found["width"] > 0 and found["x"] >= 0 and found["x"] + found["width"] <= size["width"] + 1, (
                f"{name} at {size['width']} px: {selector} is cut off ({found})"
            )
        shots(page, name + suffix)
    page.set_viewport_size(WIDE)
    page.wait_for_timeout(800)


def test_admin_opens_leaderboard_compare_and_pairwise_results(browser, app_server, judged, shots):
    page = login(browser, app_server.url, "alice")

    # Leaderboard: the dataset is offered when the tab opens; the grid holds the use case's cells.
    open_tab(page, "Leaderboard")
    wait_value(page, "#lb-dataset input", "lb")
    page.locator("#lb-run").click()
    wait_text(page, "#lb-message", "3 method(s)")
    view = app_server.wb.leaderboard.view(user=None, dataset="lb")
    headers, rows = table_rows(view)
    grid = page.locator("#lb-table").inner_text()
    for cell in (rows[0][2], rows[1][headers.index("human bt_cp ↑")], rows[2][headers.index("human cp ↑")]):
        assert cell in grid, cell
    assert "tau vs human bt_cp" in page.locator("#lb-agreement").inner_text()
    page.locator("#lb-plot img").first.wait_for(timeout=STEP_MS)
    both_sizes(page, shots, "leaderboard", ("#lb-run", "#lb-table", "#lb-files", "#lb-plot"))
    files = page.locator("#lb-files").inner_text().replace("\n", "")
    assert "leaderboard-lb-by-method.tex" in files and "leaderboard-lb-by-method-rank-agreement.csv" in files, files

    # Compare: two outputs of one reference, their stored values and both patch maps.
    open_tab(page, "Compare")
    left, right = judged[0], judged[2]
    page.locator("#cmp-sample-id input").fill(str(left.id))
    page.locator("#cmp-find").click()
    wait_text(page, "#cmp-message", "2 other output(s)")
    page.locator("#cmp-partner input").click()
    page.get_by_role("option", name=f"#{right.id} gamma {right.external_key}").click()
    page.locator("#cmp-run").click()
    wait_text(page, "#cmp-summary", f"right: #{right.id}", timeout=STEP_MS)
    table = page.locator("#cmp-table").inner_text()
    expected = app_server.wb.compare.compare(left.id, right.id, user=None).table()[1]
    for row in expected:
        assert row[1] in table and row[2] in table and row[4] in table
    for side in ("left", "right"):
        for part in ("cp", "best", "pf", "lines"):
            page.locator(f"#cmp-{side}-{part} img").wait_for(timeout=STEP_MS)
    both_sizes(
        page, shots, "compare", ("#cmp-run", "#cmp-table", "#cmp-left", "#cmp-right", "#cmp-left-cp", "#cmp-right-pf")
    )

    # The Agreement tab's pairwise results: the Bradley-Terry ranking and the metrics' pairwise accuracy.
    open_tab(page, "Agreement")
    assert page.locator("#agree-run").is_visible() and not page.locator("#pw-run").is_visible()
    page.locator("#agree-kind").get_by_text("Pairwise (side by side)").click()
    page.locator("#pw-run").wait_for(timeout=STEP_MS)
    assert not page.locator("#agree-run").is_visible()
    wait_value(page, "#pw-dataset input", "lb")
    page.locator("#pw-run").click()
    wait_text(page, "#pw-message", "36 judgments")
    assert "alpha" in page.locator("#pw-ranking").inner_text()
    assert "Human ties are left out" in page.locator("#pw-summary").inner_text()
    # 12 output pairs: the ratings view's small-n warning, above the tables
    warned = page.locator("#pw-warnings").inner_text()
    assert "only 12 output pair(s) were judged by two or more raters (fewer than 30)" in warned
    assert box(page, "#pw-warnings")["y"] < box(page, "#pw-ranking")["y"]
    both_sizes(page, shots, "pairwise", ("#pw-run", "#pw-warnings", "#pw-ranking", "#pw-summary", "#agree-kind"))

    # Browse hands the sample id it holds (typed or a clicked row) over to Compare.
    open_tab(page, "Browse and export")
    page.locator("#browse-sample-id input").fill(str(judged[4].id))
    page.locator("#browse-sample-id input").press("Tab")
    open_tab(page, "Compare")
    wait_text(page, "#cmp-message", "2 other output(s)")
    assert page.locator("#cmp-sample-id input").input_value() == str(judged[4].id)
    assert not page.errors  # type: ignore[attr-defined]
