"""The Score and Browse tabs as a researcher uses them (issue 11), in Debian's Chromium: messages next to their
buttons, one sample at a time (fresh uploads reset what belonged to the previous pair, results go out of date),
masks never replaced without a confirmation, a stored sample opened and saved again stays the same sample, and
inputs too small to judge refused at the upload. Screenshots of every step go to test-artifacts/e2e/."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PIL import Image

from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import login
from .steps import (
    beside,
    brush_mask,
    open_tab,
    pick_option,
    pick_radio,
    text_of,
    upload,
    wait_idle,
    wait_new_text,
    wait_text,
)

pytestmark = pytest.mark.e2e
CAT, COFFEE = EXAMPLES_DIR / "cat-on-grass", EXAMPLES_DIR / "coffee-on-bricks"


def _mask_px(note: str) -> int:
    return int(re.search(r"([\d,]+) px", note).group(1).replace(",", ""))


def test_score_tab_one_sample_at_a_time(browser, app_server, shots):
    wb = app_server.wb
    page = login(browser, app_server.url, "alice")
    pick_option(page, "#example-pick", "Cat on the grass")
    page.locator("#example-load").click()
    assert "loaded example 'Cat on the grass'" in wait_text(page, "#load-message", "loaded example")
    assert beside(page, "#load-message", "#example-load")
    wait_text(page, "#mask-message", "mask source: imported")

    # Run and Explain answer next to their buttons; the note under the maps says what they show.
    page.locator("#run").click()
    assert "scored" in wait_text(page, "#run-message", "scored")
    assert beside(page, "#run-message", "#run")
    page.locator("#explain").click()
    explained = wait_text(page, "#explain-message", "map(s) drawn")
    assert beside(page, "#explain-message", "#explain") and "CP" in explained
    notes = wait_text(page, "#explain-notes", "MaSC CP")
    assert "CP map:" in notes and "Best match:" in notes and "Correspondences:" in notes and "MaSC PF" in notes
    for sel in ("#cp-map img", "#best-map img", "#corr-lines img", "#pf-map img"):
        page.locator(sel).first.wait_for(timeout=180_000)
    shots(page, "ran-and-explained")

    # Any change of the inputs after Run marks the results out of date, until Run again.
    page.locator("#prompt textarea").fill("a photo of a cat on the moon")
    stale = wait_text(page, "#stale-box", "out of date")
    assert "score table and the maps were computed" in stale and "Press Run and Explain again" in stale
    shots(page, "out-of-date")
    page.locator("#run").click()
    page.wait_for_function(
        "() => !document.querySelector('#stale-box').innerText.includes('score table')", timeout=180_000
    )
    assert "maps" in text_of(page, "#stale-box")  # the maps are still those of the old prompt

    # Save: the message is next to Save, the sample is linked, the table shows what was stored.
    page.locator("#save-dataset textarea").fill("journey")
    page.locator("#save-method textarea").fill("m-cat")
    page.locator("#save").click()
    saved = wait_text(page, "#score-message", "saved as sample #")
    cat_id = int(re.search(r"#(\d+)", saved).group(1))
    assert beside(page, "#score-message", "#save-new")
    assert f"Stored sample #{cat_id}" in text_of(page, "#sample-link")

    # A new output: the previous pair's scores, maps, messages, example name, method and link go; the output's
    # mask goes with its image, reference 1's stays (same image).
    upload(page, "#out-image", COFFEE / "out.jpg")
    page.wait_for_function(
        "() => document.querySelector('#sample-link').innerText.includes('New sample')", timeout=180_000
    )
    wait_idle(page)
    assert text_of(page, "#scores").strip() == "" and text_of(page, "#run-message").strip() == ""
    assert page.locator("#cp-map img").count() == 0 and text_of(page, "#explain-notes").strip() == ""
    assert page.locator("#save-method textarea").input_value() == ""
    assert page.locator("#example-pick input").input_value() == ""
    before = text_of(page, "#mask-message")
    pick_radio(page, "#mask-target", "output")
    assert wait_new_text(page, "#mask-message", before, "no mask yet") == "no mask yet"
    shots(page, "new-output")

    # Masks: a drawn mask is never replaced without Apply; a doubtful subject-name mask is only offered; the
    # threshold the message mentions is right there; every change can be undone.
    drawn = _mask_px(brush_mask(page, "#mask-editor", "#mask-use-brush", "#mask-message", "brush mask:"))
    assert drawn > 100
    pick_radio(page, "#mask-mode", "subject name")
    page.locator("#subject textarea").fill("coffee cup")
    page.locator("#mask-by-name").click()
    offered = wait_text(page, "#mask-message", "not applied")
    assert "doubtful" in offered and "Score threshold" in offered
    assert page.locator("#mask-threshold").is_visible() and page.locator("#mask-proposal").first.is_visible()
    shots(page, "doubtful-mask-offered")
    page.locator("#mask-discard").click()
    wait_text(page, "#mask-message", "discarded")
    pick_radio(page, "#mask-target", "reference 1")
    pick_radio(page, "#mask-target", "output")
    assert _mask_px(wait_text(page, "#mask-message", "mask source: drawn")) == drawn  # the strokes are still there
    page.locator("#mask-threshold input[type=number]").fill("0")
    page.locator("#mask-threshold input[type=number]").press("Enter")
    page.locator("#mask-by-name").click()
    wait_text(page, "#mask-message", "would replace the current brush mask")
    page.locator("#mask-apply").click()
    wait_text(page, "#mask-message", "subject-name mask applied")
    page.locator("#mask-undo").click()
    assert _mask_px(wait_text(page, "#mask-message", "back to the brush mask")) == drawn
    shots(page, "mask-undone")

    # Save the new pair as its own sample (the method field of the cat pair is gone: no stale method).
    page.locator("#save").click()
    coffee_id = int(re.search(r"#(\d+)", wait_text(page, "#score-message", "saved as sample #")).group(1))
    assert coffee_id != cat_id
    stored = {s.id: s for s in wb.database.store.samples.list("journey")}
    assert stored[coffee_id].method is None and stored[cat_id].method == "m-cat"

    # Browse: open the cat sample; every field comes back; Save again adds to it, no duplicate.
    open_tab(page, "Browse and export")
    wait_text(page, "#browse-message", "sample(s)")
    headers = page.locator("#browse-table thead th").all_inner_texts()
    assert any("CLIP-I" in h for h in headers) and not any(h.strip() == "clip_i" for h in headers)
    page.locator("#browse-sample-id input").fill(str(cat_id))
    page.locator("#browse-open").click()
    wait_text(page, "#load-message", f"opened sample #{cat_id}")
    assert page.locator("#save-dataset textarea").input_value() == "journey"
    assert page.locator("#save-method textarea").input_value() == "m-cat"
    assert page.locator("#prompt textarea").input_value() == "a photo of a cat on the moon"
    assert f"Stored values of sample #{cat_id}" in text_of(page, "#scores")
    assert page.locator("#cp-map img").count() == 0  # no maps of another sample left on screen
    wait_idle(page)
    shots(page, "opened")
    page.locator("#save").click()
    again = wait_text(page, "#score-message", f"saved to sample #{cat_id}")
    assert "nothing changed" in again
    assert len(wb.database.store.samples.list("journey")) == 2
    assert not page.errors, page.errors
    page.close()


def test_browse_open_errors_stay_where_the_user_is(browser, app_server, shots):
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Browse and export")
    wait_text(page, "#browse-message", "sample(s)")
    for typed, expected in (("999", "#999 is not in the database"), ("0", "whole number from 1")):
        page.locator("#browse-sample-id input").fill(typed)
        page.locator("#browse-open").click()
        assert expected in wait_text(page, "#browse-open-message", expected)
        assert page.locator("#browse-open-message").is_visible() and beside(
            page, "#browse-open-message", "#browse-open"
        )
        assert page.locator("#tab-browse").is_visible() and not page.locator("#tab-score").is_visible()
    shots(page, "open-errors")
    assert not page.locator(".error, [data-testid=error]").count()  # a message, no "Error" badges
    page.close()


def test_inputs_too_small_or_transparent_are_said_at_the_upload(browser, app_server, shots, tmp_path):
    tiny = tmp_path / "tiny.png"
    Image.new("RGB", (1, 1), "red").save(tiny)
    clear = tmp_path / "clear.png"
    rgba = np.zeros((64, 64, 4), np.uint8)
    rgba[16:48, 16:48] = (200, 30, 30, 255)
    Image.fromarray(rgba, "RGBA").save(clear)
    page = login(browser, app_server.url, "alice")
    upload(page, "#ref-image", tiny)
    refused = wait_text(page, "#ref-notes", "too small to judge")
    assert "1x1 pixels" in refused and "at least 32 pixels" in refused
    upload(page, "#out-image", clear)
    wait_text(page, "#upload-notes", "flattened onto white")
    shots(page, "upload-notes")
    page.locator("#prompt textarea").fill("a red square")
    page.locator("#subject textarea").fill("square")
    page.locator("#run").click()
    assert "too small to judge" in wait_text(page, "#run-message", "too small")
    assert text_of(page, "#scores").strip() == ""
    page.close()


def test_a_stored_mask_of_another_size_is_stretched_with_a_warning(browser, app_server, shots, tmp_path):
    wb = app_server.wb
    big = tmp_path / "big.png"
    Image.open(COFFEE / "out.jpg").resize((780, 780)).save(big)
    small_mask = np.zeros((60, 100), bool)
    small_mask[10:50, 20:80] = True
    from masc_ui.workbench.recorder import NewSample, ScoredSample, UsedMask

    # Save refuses such a mask: it is put in storage directly, as an older import could have.
    sample = wb.scoring.make_sample([CAT / "ref.jpg"], big, "a cup", "cup")
    sid = wb.recorder.record(
        [ScoredSample(NewSample(sample, "sizes"), [], {("output", 0): UsedMask.new(small_mask, "drawn")})], user=None
    )[0].sample_id
    page = login(browser, app_server.url, "alice")
    open_tab(page, "Browse and export")
    page.locator("#browse-sample-id input").fill(str(sid))
    page.locator("#browse-open").click()
    try:
        note = wait_text(page, "#load-message", "stretched")
    except Exception:
        shots(page, "stretched-FAILED")
        raise
    assert "100x60" in note and "780x780" in note
    wait_idle(page)
    pick_radio(page, "#mask-target", "output")
    assert _mask_px(wait_text(page, "#mask-message", "mask source: drawn")) > 60 * 100  # at the image's size
    shots(page, "stretched-mask")
    page.close()
