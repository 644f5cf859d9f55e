"""In Debian's Chromium at 800x900: a rater's page holds only the rater's part of the app (`masc_ui.ui.role_view`):
the folded tab menu offers no admin tab, no status line, none of the admin tabs' components, and the page's API
description lists only the rating endpoints; the login page before it carries no API description at all."""

from __future__ import annotations

import pytest

from .conftest import SMALL, USERS, login

pytestmark = pytest.mark.e2e
ADMIN_TABS = ("Score", "Browse and export", "Compare", "Agreement", "Leaderboard", "Raters")


def _tab_names(page) -> list[str]:
    """Every tab the page offers: the buttons in view and those folded into the "More tabs" menu."""
    names = page.get_by_role("tab").all_inner_texts()
    more = page.locator('#tabs button[aria-label="More tabs"]')
    if more.is_visible():
        more.click()
        names += page.locator("#tabs .overflow-dropdown button").all_inner_texts()
        more.click()
    return [n.strip() for n in names if n.strip()]


def test_a_raters_page_holds_only_the_raters_part(browser, app_server):
    page = browser.new_page(viewport=SMALL)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app_server.url)
    page.get_by_label("username").wait_for()
    assert page.evaluate("Object.keys(window.gradio_api_info.named_endpoints).length") == 0
    assert page.evaluate("window.gradio_config.components.length") == 0
    page.get_by_label("username").fill("bob")
    page.get_by_label("password").fill(USERS["bob"])
    page.get_by_role("button", name="Login").click()
    page.locator("#tab-rate").wait_for()

    names = _tab_names(page)
    assert "Rate" in names and "Rate pairs" in names
    assert not set(ADMIN_TABS) & set(names), names
    assert page.locator("#status-line").count() == 0
    assert page.locator("#tab-score, #tab-agreement, #tab-leaderboard, #tab-browse, #tab-compare").count() == 0
    config_text = page.evaluate("JSON.stringify(window.gradio_config)")
    assert "clip_i" not in config_text and "profile: demo" not in config_text
    endpoints = page.evaluate("Object.keys(window.gradio_api_info.named_endpoints)")
    assert endpoints and all(e.startswith("/rate_") or e == "/on_open" for e in endpoints), endpoints
    assert errors == []
    page.close()


def test_an_admins_page_still_holds_everything(browser, app_server):
    page = login(browser, app_server.url, "alice", SMALL)
    assert set(ADMIN_TABS) <= set(_tab_names(page))
    assert "profile: demo" in page.locator("#status-line").inner_text()
    assert "/save" in page.evaluate("Object.keys(window.gradio_api_info.named_endpoints)")
    page.close()
