"""End to end in Debian's Chromium, as an admin on a database of more samples than one page holds: Browse pages,
sorts and filters over all of them and says "n of N"; the Compare and Leaderboard tables stay readable at
1400x1000 and 800x900. Screenshots go to test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from tests.admin_data import add_judged_dataset

from .conftest import SMALL, WIDE, login
from .steps import STEP_MS, box, open_tab, pick_option, toast_texts, wait_new_text, wait_text

pytestmark = pytest.mark.e2e
LONG_REASON = (
    "the DINO backbone could not be loaded on this machine: check the model id and the network, then press Run "
    "again to compute it for this sample"
)
BIG = 1_230
"""Ratings-only samples of dataset `big` (more than the 500 rows Browse once stopped at)."""


@pytest.fixture(scope="module")
def stored(app_server):
    store = app_server.wb.database.store
    judged = add_judged_dataset(store)
    provenance = {"model_id": "synthetic", "code_version": "test"}
    unrated = store.samples.add_many(
        "unrated", [{"subject": "x", "method": m, "external_key": f"u-{m}"} for m in ("alpha", "beta", "gamma")]
    )
    for i, s in enumerate(unrated):
        store.metrics.record(s.id, "clip_t", 0.1 * i, provenance=provenance)
    items = [{"subject": f"s{i % 5}", "method": "m", "external_key": f"k{i:05d}"} for i in range(BIG)]
    big = store.samples.add_many("big", items)  # stored last: the highest ids
    store.metrics.record(big[-1].id, "clip_t", 0.93, provenance=provenance)
    store.metrics.record(big[700].id, "clip_t", 0.91, provenance=provenance)
    tiny = {"alpha": 2.51e-09, "beta": 2.50e-09, "gamma": 2.49e-09}  # VQAScore of an unrelated prompt
    close = {"alpha": 0.123443, "beta": 0.123442, "gamma": 0.123441}  # one digit beyond 4 tells them apart
    for s in judged:
        store.metrics.record(s.id, "vqascore", tiny[s.method], provenance=provenance)
        store.metrics.record(s.id, "pickscore", close[s.method], provenance=provenance)
        store.metrics.record(s.id, "clip_t", 0.3, provenance=provenance)  # every method ties: no Kendall tau
        store.metrics.record(s.id, "dino_i", None, provenance=provenance, reason=LONG_REASON)
    return judged, big


def wait_first_ids(page, ids: list[int]) -> None:
    """Wait until the Browse table's first rows are the samples `ids`, in that order."""
    page.wait_for_function(
        "(ids) => { const c = [...document.querySelectorAll('#browse-table .virtual-row > :first-child')]"
        ".map(e => e.innerText.trim().replace(/,/g, '')); return ids.every((id, i) => c[i] === String(id)); }",
        arg=ids,
        timeout=STEP_MS,
    )


def test_browse_pages_sorts_and_filters_over_every_sample(browser, app_server, stored, shots):
    judged, big = stored
    total = BIG + len(judged) + 3  # and the 3 samples of dataset `unrated`
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Browse and export")
    said = wait_text(page, "#browse-message", f"of {total:,} sample(s)")
    assert said.startswith("100 of ") and "page 1 of 13" in said, said

    # Sorting by id, descending, starts at the newest sample (far beyond row 500).
    page.locator("#browse-desc input").check()
    wait_first_ids(page, [big[-1].id, big[-2].id])
    shots(page, "browse-descending")

    # Filter to `big`, sort by a metric: the two valued samples come first, both beyond row 500.
    pick_option(page, "#browse-dataset", "big")
    said = wait_text(page, "#browse-message", f"of {BIG:,} sample(s)")
    pick_option(page, "#browse-sort", "CLIP-T")
    wait_first_ids(page, [big[-1].id, big[700].id])  # 0.93, 0.91, then the samples without a value

    # The last page: the remaining rows, and the count says which.
    page.locator("#browse-page input").fill("13")
    page.locator("#browse-page input").press("Enter")
    said = wait_new_text(page, "#browse-message", said, "page 13 of 13")
    assert said.startswith(f"{BIG - 1_200} of {BIG:,}") and f"rows 1,201–{BIG:,}" in said, said
    page.locator("#browse-prev").click()
    wait_new_text(page, "#browse-message", said, "page 12 of 13")
    for size, name in ((WIDE, "browse-wide"), (SMALL, "browse-narrow")):
        page.set_viewport_size(size)
        page.wait_for_timeout(600)
        shots(page, name)
    assert not page.errors  # type: ignore[attr-defined]


def wrapped_cells(page, selector: str) -> list[str]:
    """Texts of the grid's header and body cells whose text runs over more than one line."""
    return page.evaluate(
        """(s) => [...document.querySelectorAll(s + ' .virtual-row > *, ' + s + ' thead th')]
            .filter(c => c.innerText.trim() && c.getBoundingClientRect().height > 0)
            .filter(c => { const w = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
                           for (let t = w.nextNode(); t; t = w.nextNode()) {
                             if (!t.textContent.trim()) continue;
                             const r = document.createRange(); r.selectNodeContents(t);
                             const tops = new Set([...r.getClientRects()].filter(x => x.width > 0)
                                                  .map(x => Math.round(x.top)));
                             if (tops.size > 1) return true; }
                           return false; })
            .map(c => c.innerText)""",
        selector,
    )


def sideways(page, selector: str) -> bool:
    """True when an element inside the grid scrolls sideways (content wider than it, overflow auto or scroll)."""
    return page.evaluate(
        """(s) => [...document.querySelectorAll(s + ' *')].some(e => e.scrollWidth > e.clientWidth + 1
            && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))""",
        selector,
    )


def page_fits(page, size: dict) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], "the page scrolls sideways"


def test_compare_and_leaderboard_tables_stay_readable(browser, app_server, stored, shots):
    judged, _ = stored
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Compare")
    # Before anything is picked: an empty id asking for a sample, named columns, no toast about a value 0.
    field = page.locator("#cmp-sample-id input")
    assert field.input_value() == "" and field.get_attribute("placeholder") == "pick a sample first"
    heads = page.locator("#cmp-table thead th").all_inner_texts()
    assert [h.strip() for h in heads if h.strip()] == ["metric", "left", "right", "left - right", "better"], heads
    page.locator("#cmp-find").click()
    wait_text(page, "#cmp-message", "pick a sample first")
    open_tab(page, "Browse and export")
    assert page.locator("#browse-sample-id input").input_value() == ""
    page.locator("#browse-open").click()
    wait_text(page, "#browse-open-message", "pick a sample first")
    assert not [t for t in toast_texts(page) if "less than minimum" in t or "whole number" in t], toast_texts(page)
    open_tab(page, "Compare")
    left, right = judged[0], judged[1]  # alpha and beta of one reference
    page.locator("#cmp-sample-id input").fill(str(left.id))
    page.locator("#cmp-find").click()
    wait_text(page, "#cmp-message", "other output(s)")
    page.locator("#cmp-partner input").click()
    page.get_by_role("option", name=f"#{right.id} beta {right.external_key}").click()
    page.locator("#cmp-run").click()
    wait_text(page, "#cmp-summary", f"right: #{right.id}")
    grid = page.locator("#cmp-table").inner_text()
    assert "2.510e-09" in grid and "2.500e-09" in grid and "0.0000" not in grid, grid
    assert LONG_REASON not in grid and "n/a [1]" in grid
    assert LONG_REASON in wait_text(page, "#cmp-reasons", "DINO-I left")
    for size, name in ((WIDE, "compare-wide"), (SMALL, "compare-narrow")):
        page.set_viewport_size(size)
        page.wait_for_timeout(800)
        page_fits(page, size)
        assert not wrapped_cells(page, "#cmp-table")
        table = box(page, "#cmp-table")
        header = page.locator("#cmp-table thead th").filter(has_text="better").first.bounding_box()
        if size is WIDE:  # every column within the table's box
            assert header["x"] + header["width"] <= table["x"] + table["width"] + 1, (header, table)
        else:  # within the box, or the grid scrolls sideways inside it
            assert header["x"] + header["width"] <= table["x"] + table["width"] + 1 or sideways(page, "#cmp-table")
        shots(page, name)
    page.set_viewport_size(WIDE)

    open_tab(page, "Leaderboard")
    page.locator("#lb-run").wait_for(timeout=STEP_MS)
    page.wait_for_timeout(1000)  # the tab's opening fills the dataset choices
    pick_option(page, "#lb-dataset", "lb")
    page.locator("#lb-run").click()
    wait_text(page, "#lb-message", "3 method(s)")
    headers = " | ".join(page.locator("#lb-table thead th").all_inner_texts())
    assert "MaSC CP" in headers and "VQAScore" in headers and "clip_i" not in headers, headers
    grid = page.locator("#lb-table").inner_text()
    for mean in ("0.123443", "0.123442", "0.123441", "2.51e-09", "2.49e-09"):
        assert mean in grid, (mean, grid)
    agreement = page.locator("#lb-agreement").inner_text()
    assert "MaSC CP" in agreement and "n/a (n=3) [1]" in agreement, agreement
    assert "same for all 3 groups" in wait_text(page, "#lb-agreement-note", "[1]")
    for size, name in ((WIDE, "leaderboard-wide"), (SMALL, "leaderboard-narrow")):
        page.set_viewport_size(size)
        page.wait_for_timeout(800)
        page_fits(page, size)
        assert not wrapped_cells(page, "#lb-table"), wrapped_cells(page, "#lb-table")
        assert not wrapped_cells(page, "#lb-agreement")
        if size is SMALL:  # seven wide columns: the grid scrolls inside its box
            assert sideways(page, "#lb-table")
        shots(page, name)
    page.set_viewport_size(WIDE)

    # A dataset nobody rated: the rank agreement is empty and says why.
    pick_option(page, "#lb-dataset", "unrated")
    before = page.locator("#lb-message").inner_text()
    page.locator("#lb-run").click()
    wait_new_text(page, "#lb-message", before, "method(s)")
    assert "no human ratings or pairwise judgments" in wait_text(page, "#lb-agreement-note", "No rank agreement")
    assert not page.errors  # type: ignore[attr-defined]
