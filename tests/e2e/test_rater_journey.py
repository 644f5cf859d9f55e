"""Two raters and a researcher (issue 11), in Debian's Chromium: tasks only from datasets marked for rating (never
the researcher's scratch saves), a skip on a revisited task keeps its answer, a flag needs a reason, progress
counts skips and flags apart, the export carries every status and reason; the Agreement tab warns about few
samples and a single rater, says why a row has no numbers, clears what a failure leaves, and bounds its input."""

from __future__ import annotations

import csv
import re

import pytest

from masc_ui.workbench.examples import EXAMPLES_DIR
from tests.marked_files import PIXEL_CHUNKS, png_chunks

from .conftest import SMALL, login
from .steps import in_view, open_tab, text_of, wait_idle, wait_text

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def seeded(app_server):
    """Three samples in `bench` (marked for rating, as an import marks it) and two scratch saves of the Score
    tab in `workbench` (not marked)."""
    wb = app_server.wb
    ids = {"bench": [], "workbench": []}
    for dataset, count in (("bench", 3), ("workbench", 2)):
        for i in range(count):
            ex = EXAMPLES_DIR / ("cat-on-grass" if i % 2 == 0 else "coffee-on-bricks")
            sample = wb.scoring.make_sample(
                [ex / "ref.jpg"], ex / "out.jpg", f"{dataset} prompt {i}", ex.name.split("-")[0]
            )
            ids[dataset].append(
                wb.saving.save(sample, user=None, dataset=dataset, method=f"m{i}", names=["clip_i", "dino_i"]).sample_id
            )
    wb.samples.set_for_rating("bench", True, user=None)
    return ids


def _current(wb, rater: str) -> dict:
    return {(r.sample_id, r.criterion): r for r in wb.ratings.ratings_of(rater)}


def _answer(page, cp: int, pf: int) -> None:
    page.evaluate("() => document.activeElement?.blur()")  # shortcuts are off while typing in a text box
    page.keyboard.press(str(cp))
    page.keyboard.press(str(pf))
    page.wait_for_function(
        "([a, b]) => document.querySelector(`#rate-cp input[value='${a}']`)?.checked && "
        "document.querySelector(`#rate-pf input[value='${b}']`)?.checked",
        arg=[cp, pf],
        timeout=180_000,
    )


def test_raters_get_marked_datasets_and_never_lose_an_answer(browser, app_server, seeded, shots):
    wb = app_server.wb
    page = login(browser, app_server.url, "bob", SMALL)
    open_tab(page, "Rate")
    prompt = wait_text(page, "#rate-prompt", "bench prompt")
    assert "workbench" not in prompt  # the researcher's scratch saves are no tasks
    assert in_view(page, "#rate-submit") and in_view(page, "#rate-pf") and in_view(page, "#rate-reason")
    shots(page, "first-task-800x900", full_page=False)
    # What the browser got: PNGs of pixels only from the task folder, named by a keyed hash (workbench.blind_files).
    page.wait_for_function("document.querySelectorAll('#rate-refs img, #rate-out img').length >= 2", timeout=180_000)
    sources = page.locator("#rate-refs img, #rate-out img").evaluate_all("imgs => imgs.map(i => i.src)")
    assert sources and all(str(wb.ratings.image_folder) in src for src in sources), sources
    assert all(re.fullmatch("[0-9a-f]{64}[.]png", src.rsplit("/", 1)[-1]) for src in sources), sources
    for src in sources:
        assert set(png_chunks(page.request.get(src).body())) <= PIXEL_CHUNKS

    # Enter before choosing scores: nothing is stored, and the warning is brought into this small window (the
    # answers skip Gradio's queue, which shows no toast for them; the message line starts below the fold here).
    page.locator("body").focus()
    page.keyboard.press("Enter")
    wait_text(page, "#rate-message", "choose a score")
    assert in_view(page, "#rate-message") and in_view(page, "#rate-submit")
    assert not _current(wb, "bob")
    shots(page, "missing-score-warning-800x900", full_page=False)

    _answer(page, 1, 4)
    page.keyboard.press("Enter")
    saved = wait_text(page, "#rate-message", "saved your answer (rated)")
    assert "#" not in saved  # raters never see sample ids
    (first,) = {sid for sid, _ in _current(wb, "bob")}
    assert first in seeded["bench"]

    # Back, then S: the answer is kept (a skip never erases it), and the next task comes.
    page.locator("body").focus()
    page.keyboard.press("b")
    wait_text(page, "#rate-message", "back to your previous task")
    assert "rated" in text_of(page, "#rate-who")
    page.locator("body").focus()
    page.keyboard.press("s")
    kept = wait_text(page, "#rate-message", "kept your answer")
    assert "kept your answer (CP 1, PF 4)" in kept
    now = _current(wb, "bob")
    assert (now[(first, "cp")].score, now[(first, "pf")].status) == (1, "rated")
    shots(page, "skip-kept-the-answer", full_page=False)

    # F without a reason puts the cursor in the reason box; nothing is stored until a reason is given.
    second_prompt = text_of(page, "#rate-prompt")
    page.locator("body").focus()
    page.keyboard.press("f")
    page.wait_for_function("() => document.activeElement?.closest('#rate-reason') !== null", timeout=180_000)
    assert len(_current(wb, "bob")) == 2
    page.keyboard.type("the output image is blank")
    page.keyboard.press("Enter")
    wait_text(page, "#rate-message", "saved your answer (flagged)")
    (flagged,) = {sid for (sid, _), r in _current(wb, "bob").items() if r.status == "flagged"}
    assert flagged in seeded["bench"] and text_of(page, "#rate-prompt") != second_prompt
    note = _current(wb, "bob")[(flagged, "cp")]
    assert note.status == "flagged" and note.note == "the output image is blank"
    progress = text_of(page, "#rate-progress")
    assert progress.startswith("rated 1 (1 flagged not rated)"), progress
    assert page.locator("#rate-reason textarea, #rate-reason input").first.input_value() == ""

    _answer(page, 3, 3)
    page.keyboard.press("Enter")
    wait_text(page, "#rate-prompt", "No task left")
    assert {sid for sid, _ in _current(wb, "bob")} == set(seeded["bench"])
    shots(page, "done", full_page=False)
    assert not page.errors, page.errors
    page.close()

    # A second rater works through the same marked dataset only.
    page = login(browser, app_server.url, "carol")
    open_tab(page, "Rate")
    for score in (2, 3, 4):
        wait_text(page, "#rate-prompt", "bench prompt")
        _answer(page, score, score)
        page.keyboard.press("Enter")
        wait_text(page, "#rate-progress", f"rated {score - 1} /")
    wait_text(page, "#rate-prompt", "No task left")
    assert {sid for sid, _ in _current(wb, "carol")} == set(seeded["bench"])
    page.close()

    # The researcher's export carries each rater's status and the flag's reason.
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Browse and export")
    wait_text(page, "#browse-message", "sample(s)")
    page.locator("#export").click()
    wait_text(page, "#export-message", "exported")
    link = page.locator("#export-file a").first.get_attribute("href")
    body = page.request.get(link if link.startswith("http") else app_server.url + link).text()
    rows = {int(r["sample_id"]): r for r in csv.DictReader(body.splitlines())}
    assert rows[flagged]["status:bob"] == "flagged" and rows[flagged]["note:bob"] == "the output image is blank"
    assert rows[first]["status:bob"] == "rated" and rows[first]["rating:bob:cp"] == "1"
    page.close()


def test_admin_marks_a_dataset_for_rating_in_browse(browser, app_server, seeded, shots):
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Browse and export")
    wait_text(page, "#browse-message", "sample(s)")
    assert "'bench'" in text_of(page, "#browse-rating")
    page.locator("#browse-dataset input").click()
    page.get_by_role("option", name="workbench", exact=True).click()
    wait_text(page, "#browse-rating", "not marked for rating")
    page.locator("#browse-mark").click()
    assert "now marked for rating" in wait_text(page, "#browse-message", "marked for rating")
    assert {d.name for d in app_server.wb.samples.datasets(user=None) if d.for_rating} == {"bench", "workbench"}
    shots(page, "marked", full_page=False)
    page.locator("#browse-unmark").click()
    wait_text(page, "#browse-message", "no longer marked")
    assert {d.name for d in app_server.wb.samples.datasets(user=None) if d.for_rating} == {"bench"}
    page.close()


def test_agreement_warns_explains_and_clears(browser, app_server, seeded, shots):
    wb = app_server.wb
    store = wb.database.store
    ids = seeded["workbench"]
    store.ratings.ensure_rater("dave")
    for k, sid in enumerate(ids):
        store.ratings.rate_sample("dave", sid, {"cp": k + 1, "pf": 3 - k})
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Agreement")
    page.locator("#agree-dataset input").click()
    page.get_by_role("option", name="workbench", exact=True).click()
    slider = page.locator("#agree-nboot input[type=number]")
    slider.fill("50000")
    slider.blur()
    page.wait_for_function(
        "() => document.querySelector('#agree-nboot input[type=number]').value === '20000'", timeout=180_000
    )  # the component keeps the value within its bounds
    slider.fill("200")
    slider.blur()
    page.locator("#agree-run").click()
    warned = wait_text(page, "#agree-warnings", "fewer than 30")
    assert "only 2 sample(s)" in warned and "a single rater (dave)" in warned
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('#agree-table').innerText.includes('humans')", timeout=180_000)
    table = page.locator("#agree-table").inner_text()
    assert "one rater only" in table and "CLIP-I" in table
    assert not page.locator(".error, [data-testid=error]").count()
    shots(page, "warnings", full_page=False)
    page.locator("#agree-criterion").get_by_text("ImagenHub semantic consistency", exact=True).click()
    page.locator("#agree-run").click()
    assert "no human ratings for 'sc'" in wait_text(page, "#agree-message", "no human ratings")
    wait_idle(page)
    assert "humans" not in page.locator("#agree-table").inner_text()  # the previous table is gone
    assert text_of(page, "#agree-warnings").strip() == ""
    assert not page.locator(".error, [data-testid=error]").count()
    page.close()
