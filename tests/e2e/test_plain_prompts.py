"""End to end in Debian's Chromium: a prompt holding Markdown and HTML (an image that would report who looked at
it, emphasis, a tag, a formula) reaches a rater in both rating tabs as the characters typed, and the page asks
the image's host for nothing."""

from __future__ import annotations

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import login
from .steps import open_tab, text_of, wait_text

pytestmark = pytest.mark.e2e
HOST = "tracker.example"
PROMPT = f"a cat ![t](http://{HOST}/track.png?who=rater) on *green* <b>grass</b> $$x^2$$"


def test_prompts_render_as_plain_text_and_fetch_nothing(browser, app_server, shots):
    wb = app_server.wb
    cat, coffee = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"
    for method, out in (("method-a", cat / "out.jpg"), ("method-b", coffee / "out.jpg")):
        sample = wb.scoring.make_sample([cat / "ref.jpg"], out, PROMPT, "cat")
        wb.recorder.save(sample, {}, user=None, dataset="plain", method=method)
    wb.samples.set_for_rating("plain", True, user=None)
    page = login(browser, app_server.url, "bob")
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.reload()  # every request of the page from the start, the login's cookie kept
    shown = wait_text(page, "#rate-prompt", "a cat")
    assert PROMPT in shown, shown
    assert page.locator("#rate-prompt img, #rate-prompt b, #rate-prompt em, #rate-prompt .katex").count() == 0
    shots(page, "rate-prompt", full_page=False)
    open_tab(page, "Rate pairs")
    shown = wait_text(page, "#pair-prompt", "a cat")
    assert PROMPT in text_of(page, "#pair-prompt"), shown
    assert page.locator("#pair-prompt img, #pair-prompt em, #pair-prompt .katex").count() == 0
    assert page.locator("#pair-prompt b, #pair-prompt strong").all_inner_texts() == ["Pair 1"]
    shots(page, "pair-prompt", full_page=False)
    page.wait_for_function("document.querySelectorAll('#pair-left img, #pair-right img').length >= 2")
    assert not [url for url in asked if HOST in url], asked
    page.close()
