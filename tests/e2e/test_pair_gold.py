"""End to end in Debian's Chromium, as an admin: the Raters tab's Gold pairs section marks a pair of samples with its
accepted answer, refuses a pair it cannot read with the reason, and makes the pair attention checks, at 1400x1000 and
800x900. Screenshots go to test-artifacts/e2e/."""

from __future__ import annotations

import pytest

from tests.gold_samples import save_samples

from .conftest import SMALL, WIDE, login
from .steps import box, open_tab, pick_option, wait_idle, wait_text

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def duel(app_server, tmp_path_factory):
    """Dataset `duel`: 4 samples of one subject, methods m1 and m2 by turns."""
    return save_samples(app_server.wb, tmp_path_factory.mktemp("duel-images"), 4, dataset="duel")


@pytest.mark.parametrize("viewport", [WIDE, SMALL], ids=["1400x1000", "800x900"])
def test_the_admin_marks_gold_pairs_and_makes_pair_attention_checks(browser, app_server, duel, shots, viewport):
    page = login(browser, app_server.url, "alice", viewport)
    open_tab(page, "Raters")
    pick_option(page, "#raters-dataset", "duel")
    wait_idle(page)
    page.locator("#pair-gold-box").get_by_text("Gold pairs").first.click()
    pair = page.locator("#pair-gold-pair input, #pair-gold-pair textarea").first
    pair.fill(f"#{duel[0]}")
    page.locator("#pair-gold-mark").click()
    wait_text(page, "#raters-message", "give two samples separated by a comma")
    pair.fill(f"#{duel[1]},#{duel[0]}")
    page.locator("#pair-gold-accepted").get_by_text("tie").click()
    page.locator("#pair-gold-mark").click()
    wait_text(page, "#raters-message", "is a gold pair: cp accepts tie")
    listed = page.locator("#pair-gold-table").inner_text()
    assert f"#{duel[0]}" in listed and f"#{duel[1]}" in listed and "tie" in listed
    page.locator("#pair-gold-attention").click()
    wait_text(page, "#raters-message", "pair attention checks of 'duel': ")
    assert "attention" in page.locator("#pair-gold-table").inner_text()
    assert box(page, "#pair-gold-table")["width"] <= viewport["width"]
    page.locator("#pair-gold-box").scroll_into_view_if_needed()
    shots(page, "pair-gold")
    assert page.errors == []  # type: ignore[attr-defined]
    page.close()
