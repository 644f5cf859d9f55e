"""End to end in Debian's Chromium: a rater judges pairs by keyboard and changes one answer; the admin downloads the
pairwise judgments export from Browse (with the rating history, without the time on task, then the default) and
its rows are exactly the answers given; the rater's page has no such export. Screenshots at 1400x1000 and 800x900
go to test-artifacts/e2e/."""

from __future__ import annotations

import csv

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import SMALL, WIDE, login
from .steps import STEP_MS, open_tab, text_of, wait_text

pytestmark = pytest.mark.e2e
METHODS = ("method-a", "method-b", "method-c")
WINNER = {"ArrowLeft": "left", "ArrowRight": "right", "ArrowDown": "tie"}


def _seed(wb) -> dict[int, str]:
    """Outputs of METHODS for one reference and prompt (three pairs); sample id -> method."""
    cat, coffee = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"
    methods = {}
    for method, out in zip(METHODS, (cat / "out.jpg", coffee / "out.jpg", coffee / "ref.jpg")):
        sample = wb.scoring.make_sample([cat / "ref.jpg"], out, "a cat sitting on green grass", "cat")
        methods[wb.recorder.save(sample, {}, user=None, dataset="pair-export", method=method).sample_id] = method
    wb.samples.set_for_rating("pair-export", True, user=None)
    return methods


def _answered(page, criterion: str, winner: str) -> None:
    page.wait_for_function(
        f"document.querySelector(\"#pair-{criterion} input[value='{winner}']\")?.checked", timeout=STEP_MS
    )


def _download(page, url: str) -> list[dict[str, str]]:
    link = page.locator("#pair-export-file a").first.get_attribute("href")
    body = page.request.get(link if link.startswith("http") else url + link).text()
    return list(csv.DictReader(body.splitlines()))


def test_admin_downloads_the_pairwise_judgments_a_rater_gave(browser, app_server, shots):
    wb = app_server.wb
    methods = _seed(wb)
    page = login(browser, app_server.url, "bob")
    assert page.locator("#pair-export").count() == 0  # a rater's page holds no export
    open_tab(page, "Rate pairs")
    given: dict[tuple[int, str], list[str]] = {}  # (position, criterion) -> winners in the order given
    for position, keys in ((1, ("ArrowLeft", "ArrowDown")), (2, ("ArrowRight", "ArrowLeft"))):
        wait_text(page, "#pair-prompt", f"Pair {position}")
        page.locator("body").focus()
        for criterion, key in zip(("cp", "pf"), keys):
            page.keyboard.press(key)
            _answered(page, criterion, WINNER[key])
            given[(position, criterion)] = [WINNER[key]]
        page.keyboard.press("Enter")
        wait_text(page, "#pair-progress", f"judged {position} /")
    wait_text(page, "#pair-prompt", "Pair 3")
    page.keyboard.press("b")  # back to pair 2: change its concept preservation from right to tie
    wait_text(page, "#pair-prompt", "Pair 2")
    _answered(page, "cp", "right")
    page.locator("body").focus()
    page.keyboard.press("ArrowDown")
    _answered(page, "cp", "tie")
    page.keyboard.press("Enter")
    wait_text(page, "#pair-message", "saved your answers")
    given[(2, "cp")].append("tie")
    page.close()

    tasks = {x.position: x for x in wb.database.store.pairwise.tasks(rater="bob")}
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Browse and export")
    wait_text(page, "#browse-message", "sample(s)")
    page.locator("#browse-dataset input").click()
    page.get_by_role("option", name="pair-export", exact=True).click()
    page.locator("#pair-export-history input").check()
    page.locator("#pair-export-time input").uncheck()
    page.locator("#pair-export").click()
    message = wait_text(page, "#pair-export-message", "exported 5 row(s)")
    assert "masc-pairwise-pair-export.csv" in message
    rows = _download(page, app_server.url)
    assert "seconds" not in rows[0] and {"current", "replaced_at"} <= set(rows[0])
    seen: dict[tuple[int, str], list[str]] = {}
    for row in sorted(rows, key=lambda r: (r["task_position"], r["criterion"], int(r["revision"]))):
        task = tasks[int(row["task_position"])]
        assert row["rater"] == "bob" and row["dataset"] == "pair-export" and row["status"] == "rated"
        assert (int(row["left_sample_id"]), int(row["right_sample_id"])) == (task.left_sample_id, task.right_sample_id)
        assert (row["left_method"], row["right_method"]) == (
            methods[task.left_sample_id],
            methods[task.right_sample_id],
        )
        seen.setdefault((int(row["task_position"]), row["criterion"]), []).append(row["winner"])
    assert seen == given  # every answer given, earlier ones included, in the order given
    assert [r["current"] for r in rows if r["task_position"] == "2" and r["criterion"] == "cp"] == ["False", "True"]
    shots(page, "history-export")
    page.set_viewport_size(SMALL)
    page.wait_for_timeout(800)
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL["width"]
    page.locator("#pair-export").scroll_into_view_if_needed()
    shots(page, "history-export-narrow")
    page.set_viewport_size(WIDE)

    page.locator("#pair-export-history input").uncheck()
    page.locator("#pair-export-time input").check()
    before = text_of(page, "#pair-export-message")
    page.locator("#pair-export").click()
    page.wait_for_function(
        "b => { const e = document.querySelector('#pair-export-message');"
        " return e && !e.querySelector('.pending') && e.innerText !== b && e.innerText.includes('exported 4'); }",
        arg=before,
        timeout=STEP_MS,
    )
    rows = _download(page, app_server.url)
    assert len(rows) == 4 and "current" not in rows[0]
    assert all(float(r["seconds"]) >= 0 for r in rows)  # the time on task of each answer
    assert {(int(r["task_position"]), r["criterion"]): r["winner"] for r in rows} == {
        k: v[-1] for k, v in given.items()
    }
    page.close()
