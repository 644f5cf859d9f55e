"""A server restart in the middle of a rater's session, in Debian's Chromium: the rater rates one task and opens the
next, the app server is stopped and started again over the same data directory (same address), the page reloads
to the login form, which says the session ended because the server restarted; after logging in the rater is on
the same task, with the answer given before the restart kept once. Screenshots at 1400x1000 and 800x900 go to
test-artifacts/e2e/."""

from __future__ import annotations

from pathlib import Path

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR
from masc_ui.workbench.session_cookies import RESTARTED

from .conftest import SMALL, USERS, WIDE
from .steps import STEP_MS, open_tab, text_of, wait_text

pytestmark = pytest.mark.e2e
PROMPTS = ("restart prompt zero", "restart prompt one", "restart prompt two")


def _start(settings):
    from masc_ui.ui.launch import serve
    from masc_ui.workbench import build_workbench

    wb = build_workbench(settings)
    return wb, serve(wb, block=False)


def _log_in(page, user: str) -> None:
    page.get_by_label("username").fill(user)
    page.get_by_label("password").fill(USERS[user])
    page.get_by_role("button", name="Login").click()
    page.locator("#tabs").wait_for(timeout=STEP_MS)


def test_a_restart_says_so_and_keeps_the_rater_on_the_task(browser, demo_weights: Path, tmp_path: Path, shots):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port

    from .conftest import ROLES

    settings = Settings(
        profile="demo",
        demo_weights_dir=demo_weights,
        device="cpu",
        dtype="float32",
        data_dir=tmp_path / "data",
        users=",".join(f"{u}:{p}:{ROLES[u]}" for u, p in USERS.items()),
        port=free_port(),
    )
    wb, app = _start(settings)
    try:
        ex = EXAMPLES_DIR / "cat-on-grass"
        for i, prompt in enumerate(PROMPTS):
            sample = wb.scoring.make_sample([ex / "ref.jpg"], ex / "out.jpg", prompt, "cat")
            wb.recorder.save(sample, {}, user=None, dataset="restart", method=f"m{i}")
        wb.samples.set_for_rating("restart", True, user=None)
        url = app.local_url.rstrip("/")
        page = browser.new_page(viewport=WIDE)
        page.goto(url)
        _log_in(page, "bob")
        open_tab(page, "Rate")
        first = wait_text(page, "#rate-prompt", "restart prompt")
        page.evaluate("() => document.activeElement?.blur()")
        page.keyboard.press("3")
        page.keyboard.press("2")
        page.keyboard.press("Enter")
        wait_text(page, "#rate-progress", "rated 1 /")
        page.wait_for_function(
            "b => { const e = document.querySelector('#rate-prompt');"
            " return e && e.innerText.includes('restart prompt') && e.innerText !== b; }",
            arg=first,
            timeout=STEP_MS,
        )
        task = next(p for p in PROMPTS if p in text_of(page, "#rate-prompt"))
        assert task not in first
    finally:
        app.close()
        wb.close()

    wb, app = _start(settings)  # the same data directory, the same address
    try:
        assert app.local_url.rstrip("/") == url
        page.reload()
        page.locator("#session-ended").wait_for(timeout=STEP_MS)
        assert page.locator("#session-ended").inner_text().strip() == f"⚠ {RESTARTED}"
        assert page.get_by_role("button", name="Login").is_visible()
        shots(page, "login-after-restart")
        page.set_viewport_size(SMALL)
        page.wait_for_timeout(500)
        assert page.locator("#session-ended").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= SMALL["width"]
        shots(page, "login-after-restart-narrow")
        page.set_viewport_size(WIDE)
        _log_in(page, "bob")
        open_tab(page, "Rate")
        wait_text(page, "#rate-prompt", task)  # the task the rater had open
        assert "rated 1 /" in text_of(page, "#rate-progress")
        ratings = wb.ratings.ratings_of("bob")
        assert sorted((r.criterion, r.score) for r in ratings) == [("cp", 3), ("pf", 2)]  # kept, once
        shots(page, "same-task-after-login")
        page.reload()  # a plain reload now: logged in, no notice
        page.locator("#tabs").wait_for(timeout=STEP_MS)
        assert page.locator("#session-ended").count() == 0
        page.close()
    finally:
        app.close()
        wb.close()
