"""End to end in Debian's Chromium, as an admin on a database of more samples than one page holds: Browse pages,
sorts and filters over all of them and says "n of N"; the Compare and Leaderboard tables stay readable at
1400x1000 and 800x900. Screenshots go to test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from tests.admin_data import add_judged_dataset

from .conftest import SMALL, WIDE, login
from .steps import STEP_MS, open_tab, pick_option, wait_new_text, wait_text

pytestmark = pytest.mark.e2e
BIG = 1_230
"""Ratings-only samples of dataset `big` (more than the 500 rows Browse once stopped at)."""


@pytest.fixture(scope="module")
def stored(app_server):
    store = app_server.wb.database.store
    judged = add_judged_dataset(store)
    items = [{"subject": f"s{i % 5}", "method": "m", "external_key": f"k{i:05d}"} for i in range(BIG)]
    big = store.samples.add_many("big", items)
    provenance = {"model_id": "synthetic", "code_version": "test"}
    store.metrics.record(big[-1].id, "clip_t", 0.93, provenance=provenance)
    store.metrics.record(big[700].id, "clip_t", 0.91, provenance=provenance)
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
    total = BIG + len(judged)
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
