"""Every tab at 1400x1000 and at 800x900 with content on it (issue 11): no control hidden or cut off, the page
never wider than the window, the rating controls in view, overlays shown whole. Screenshots of each tab at both
sizes go to test-artifacts/e2e/ (layout-<size>-<tab>.png)."""

from __future__ import annotations

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import ARTIFACTS, SMALL, WIDE, login
from .steps import box, in_view, open_tab, pick_option, wait_idle, wait_text

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def seeded(app_server):
    wb = app_server.wb
    for i, name in enumerate(("cat-on-grass", "coffee-on-bricks", "cat-on-grass")):
        ex = EXAMPLES_DIR / name
        sample = wb.scoring.make_sample(
            [ex / "ref.jpg"], ex / "out.jpg", f"layout prompt {i}: {name}", name.split("-")[0]
        )
        sid = wb.saving.save(sample, user=None, dataset="layout", method=f"m{i}").sample_id
        for rater, score in (("r1", i), ("r2", (i + 1) % 5))[: 1 if i == 2 else 2]:  # one task left for alice
            wb.database.store.ratings.ensure_rater(rater)
            wb.database.store.ratings.rate_sample(rater, sid, {"cp": score, "pf": 4 - score})
    wb.samples.set_for_rating("layout", True, user=None)


def _no_page_overflow(page) -> None:
    width = page.viewport_size["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "the page is wider than the window"


def _shot(page, size: str, tab: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"layout-{size}-{tab}.png"), full_page=True)


def _all_images_loaded(page) -> None:
    """Wait until every picture on the page has arrived (a screenshot or a size taken before shows a sliver)."""
    script = (
        "() => [...document.querySelectorAll('img')].filter(i => i.offsetParent !== null)"
        ".filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.closest('[id]')?.id + ' ' + i.src)"
    )
    try:
        page.wait_for_function(f"() => ({script})().length === 0", timeout=180_000)
    except Exception:
        raise AssertionError(f"pictures that never arrived: {page.evaluate(script)}") from None


def _inside(inner: dict, outer: dict, slack: float = 2) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack
    )


@pytest.mark.parametrize("viewport", [WIDE, SMALL], ids=["1400x1000", "800x900"])
def test_every_tab_fits_the_window(browser, app_server, seeded, viewport):
    size = f"{viewport['width']}x{viewport['height']}"
    page = login(browser, app_server.url, "alice", viewport)

    # Score: an example loaded, run and explained.
    pick_option(page, "#example-pick", "Coffee cup on a brick wall")
    page.locator("#example-load").click()
    wait_text(page, "#load-message", "loaded example")
    help_box, editor = box(page, "#mask-brush-help"), box(page, "#mask-editor")
    assert help_box["y"] + help_box["height"] <= editor["y"] + 1  # the brush instruction is not under the toolbar
    page.locator("#run").click()
    wait_text(page, "#run-message", "scored")
    page.locator("#explain").click()
    wait_text(page, "#explain-message", "map(s) drawn")
    for sel in ("#cp-map", "#best-map", "#corr-lines", "#pf-map"):
        page.locator(f"{sel} img").first.wait_for(timeout=180_000)
        page.locator(sel).scroll_into_view_if_needed()
        page.wait_for_function(
            "(s) => { const i = document.querySelector(s + ' img'); return i && i.complete; }", arg=sel, timeout=180_000
        )
        assert _inside(box(page, f"{sel} img"), box(page, sel)), f"{sel}: the picture is cut by its frame"
    wait_idle(page)
    _all_images_loaded(page)
    for sel in ("#ref-image", "#out-image", "#mask-view"):
        picture = box(page, f"{sel} img")
        assert picture["width"] > 100 and _inside(picture, box(page, sel)), f"{sel}: {picture}"
    for sel in ("#ref-image", "#out-image"):  # the label is not covered by the image's buttons
        label, buttons = box(page, f"{sel} label"), box(page, f"{sel} .icon-button-wrapper")
        assert label["x"] + label["width"] <= buttons["x"] + 1 or label["y"] + label["height"] <= buttons["y"] + 1
    _no_page_overflow(page)
    page.evaluate("() => window.scrollTo(0, 0)")
    _shot(page, size, "score")

    # Rate: the task, both scales, the buttons and the reason box in view without scrolling.
    open_tab(page, "Rate")
    wait_text(page, "#rate-prompt", "layout prompt")
    wait_idle(page)
    _all_images_loaded(page)
    refs = box(page, "#rate-refs img")
    assert refs["width"] > 100 and refs["height"] > 100, refs  # the references are shown, not a sliver
    _shot(page, size, "rate")
    for sel in (
        "#rate-refs",
        "#rate-out",
        "#rate-cp",
        "#rate-pf",
        "#rate-submit",
        "#rate-skip",
        "#rate-flag",
        "#rate-back",
        "#rate-reason",
    ):
        assert in_view(page, sel), f"{sel} is not in view at {size}"
    _no_page_overflow(page)

    # Browse: filters and the first metric columns in view; a wide table scrolls inside its own box.
    open_tab(page, "Browse and export")
    wait_text(page, "#browse-message", "sample(s)")
    wait_idle(page)
    for sel in ("#browse-dataset", "#browse-sort", "#browse-desc", "#browse-refresh", "#browse-open"):
        b = box(page, sel)
        assert b["x"] >= 0 and b["x"] + b["width"] <= viewport["width"], f"{sel} is cut off at {size}"
    first_metric = page.locator("#browse-table thead th", has_text="MaSC CP").first
    assert first_metric.bounding_box()["x"] + 40 < viewport["width"]  # numbers come before the long prompt
    _no_page_overflow(page)
    _shot(page, size, "browse")

    # Agreement: computed; the plot's title is its own heading, above the figure.
    open_tab(page, "Agreement")
    page.locator("#agree-run").click()
    wait_text(page, "#agree-message", "computed")
    page.locator("#agree-plot img").first.wait_for(timeout=180_000)
    wait_idle(page)
    title, plot = box(page, "#agree-plot-title"), box(page, "#agree-plot")
    assert title["y"] + title["height"] <= plot["y"] + 1
    for sel in ("#agree-kind", "#agree-dataset", "#agree-criterion", "#agree-metric", "#agree-nboot", "#agree-run"):
        b = box(page, sel)
        assert b["x"] >= 0 and b["x"] + b["width"] <= viewport["width"], f"{sel} is cut off at {size}"
    _no_page_overflow(page)
    _shot(page, size, "agreement")
    assert not page.errors, page.errors
    page.close()
