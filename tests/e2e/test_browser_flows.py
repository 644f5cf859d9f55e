"""End to end in Debian's Chromium: score an example pair with a brush stroke and a SAM click, then rate with
the keyboard alone. Screenshots of each step go to test-artifacts/e2e/."""

from __future__ import annotations

import re

import pytest

from masc_ui.metrics.registry import list_metrics
from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import login

pytestmark = pytest.mark.e2e
STEP_MS = 180_000
"""Failure timeout of one step (the 2-core CI box may be busy); not a speed target (see bench/ui_latency.py)."""


def wait_text(page, selector: str, text: str, timeout: int = STEP_MS) -> str:
    page.wait_for_function(
        "([s, t]) => { const e = document.querySelector(s); return e && e.innerText.includes(t); }",
        arg=[selector, text],
        timeout=timeout,
    )
    return page.locator(selector).inner_text()


def wait_new_text(page, selector: str, before: str, text: str, timeout: int = STEP_MS) -> str:
    """Wait until the Markdown `selector` is not pending and its text differs from `before` and contains `text`
    (the handler has answered). Reads the Markdown body, not the progress overlay."""
    body = f"{selector} [data-testid=markdown]"
    page.wait_for_function(
        "([s, b, t, p]) => { const e = document.querySelector(s);"
        " return e && !document.querySelector(p) && e.innerText !== b && e.innerText.includes(t); }",
        arg=[body, before, text, f"{selector} .pending"],
        timeout=timeout,
    )
    return page.locator(body).inner_text()


def pick_radio(page, box: str, label: str) -> None:
    page.locator(box).get_by_text(label, exact=True).click()


def test_score_an_example_pair_with_brush_and_sam(browser, app_server, shots):
    page = login(browser, app_server.url, "alice")
    assert "demo weights: numbers are not meaningful" in page.locator("#demo-banner").inner_text()
    assert "profile: demo" in page.locator("#status-line").inner_text()
    shots(page, "opened")

    page.locator("#example-pick input").click()
    page.get_by_role("option", name="Cat on the grass").click()
    page.locator("#example-load").click()
    wait_text(page, "#mask-message", "mask source: imported")
    shots(page, "example-loaded")

    # Brush: replace the output's mask by one stroke painted in the ImageEditor.
    ref_note = page.locator("#mask-message [data-testid=markdown]").inner_text()
    pick_radio(page, "#mask-target", "output")
    wait_new_text(page, "#mask-message", ref_note, "mask source: imported")  # output's mask has another size
    page.locator("#mask-clear").click()
    wait_text(page, "#mask-message", "mask cleared")
    page.wait_for_function("document.querySelectorAll('#mask-editor canvas').length > 0", timeout=STEP_MS)
    page.locator("#mask-editor").get_by_role("button", name="Brush", exact=True).click()
    canvas = page.locator("#mask-editor canvas").first.bounding_box()
    cx, cy = canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2
    page.mouse.move(cx - 60, cy)
    page.mouse.down()
    for step in range(1, 13):
        page.mouse.move(cx - 60 + step * 10, cy + (step % 3) * 4)
    page.mouse.up()
    page.wait_for_timeout(500)
    page.locator("#mask-use-brush").click()
    brush_msg = wait_text(page, "#mask-message", "brush mask:")
    assert int(re.search(r"brush mask: ([\d,]+) px", brush_msg).group(1).replace(",", "")) > 100
    shots(page, "brush-stroke")

    # Segment Anything: one positive click on reference 1.
    pick_radio(page, "#mask-target", "reference 1")
    wait_new_text(page, "#mask-message", brush_msg, "mask source: imported")  # reference 1 is rendered
    pick_radio(page, "#mask-mode", "SAM clicks")
    sam = page.locator("#sam-image img")
    sam.wait_for(state="visible", timeout=STEP_MS)
    page.wait_for_function(
        "() => { const i = document.querySelector('#sam-image img'); return i && i.complete && i.naturalWidth > 0; }",
        timeout=STEP_MS,
    )
    box = sam.bounding_box()
    # A locator click waits until the image stops moving (the panel has just become visible), then clicks.
    sam.click(position={"x": box["width"] * 0.45, "y": box["height"] * 0.5})
    try:
        sam_msg = wait_text(page, "#mask-message", "candidate")
    except Exception:
        shots(page, "sam-click-FAILED")
        raise
    assert re.search(r"candidate \d of 3", sam_msg)
    page.locator("#sam-candidate").get_by_role("radio").first.wait_for(timeout=STEP_MS)
    shots(page, "sam-click")

    # Run every metric (all are selected by default): numbers side by side.
    page.locator("#run").click()
    names = [spec.name for spec in list_metrics() if spec.family != "judges"]  # no judge API key: not offered
    page.wait_for_function(
        f"document.querySelectorAll('#score-table tr[data-metric]').length === {len(names)}", timeout=STEP_MS
    )
    cells = dict(
        zip(
            page.locator("#score-table tr[data-metric]").evaluate_all("rows => rows.map(r => r.dataset.metric)"),
            page.locator("#score-table tr[data-metric] td:nth-child(2)").all_inner_texts(),
        )
    )
    assert list(cells) == names, cells
    # Every metric the pair has the inputs of shows a number; a face metric on a cat says why it has none.
    assert all(
        re.fullmatch(r"-?\d+(\.\d+)?(e[-+]\d+)?", v) or (k.startswith("face") and v.startswith("n/a (no face"))
        for k, v in cells.items()
    ), cells
    assert "siglip: siglip2-naflex" in page.locator("#status-line").inner_text()
    shots(page, "scores")

    # Explain: four overlays with legends.
    page.locator("#explain").click()
    for sel in ("#cp-map img", "#best-map img", "#corr-lines img", "#pf-map img"):
        page.locator(sel).wait_for(timeout=STEP_MS)
    wait_text(page, "#explain-notes", "MaSC CP ")
    page.locator("#pf-map").scroll_into_view_if_needed()
    shots(page, "overlays")
    assert not page.errors, page.errors
    page.close()


def test_rate_three_tasks_with_the_keyboard_and_change_one(browser, app_server, shots):
    wb = app_server.wb
    for name in ("cat-on-grass", "coffee-on-bricks"):
        ex = EXAMPLES_DIR / name
        for i in range(2):
            sample = wb.scoring.make_sample([ex / "ref.jpg"], ex / "out.jpg", f"prompt {i}: {name}", name.split("-")[0])
            wb.recorder.save(sample, {}, user=None, dataset="e2e", method=f"method-{i}")
    wb.samples.set_for_rating("e2e", True, user=None)
    page = login(browser, app_server.url, "bob")
    wait_text(page, "#rate-prompt", "Prompt")  # a rater lands on the Rate tab, the only one shown
    assert (
        page.get_by_role("tab", name="Score", exact=True).count() == 0
        and page.get_by_role("tab", name="Agreement", exact=True).count() == 0
    )
    assert page.locator("#logout").is_visible()
    assert "method-" not in page.locator("#rate-panel").inner_text()  # blind
    shots(page, "first-task")
    page.set_viewport_size({"width": 800, "height": 900})
    shots(page, "first-task-narrow")
    page.set_viewport_size({"width": 1400, "height": 1000})

    page.locator("body").focus()
    answers = [(3, 2), (4, 1), (0, 3)]
    for n, (cp, pf) in enumerate(answers, 1):
        prompt = page.locator("#rate-prompt").inner_text()
        page.keyboard.press(str(cp))
        page.keyboard.press(str(pf))
        page.wait_for_function(
            "([a, b]) => document.querySelector(`#rate-cp input[value='${a}']`)?.checked && "
            "document.querySelector(`#rate-pf input[value='${b}']`)?.checked",
            arg=[cp, pf],
            timeout=STEP_MS,
        )
        page.keyboard.press("Enter")
        msg = wait_text(page, "#rate-progress", f"rated {n} /")
        assert "saved your answer" in page.locator("#rate-message").inner_text()  # no sample id on screen
        assert page.locator("#rate-prompt").inner_text() != prompt, msg
        shots(page, f"rated-{n}")

    first_rated = {}
    for r in wb.ratings.ratings_of("bob"):
        first_rated[r.sample_id] = min(first_rated.get(r.sample_id, r.created_at), r.created_at)
    rated = sorted(first_rated, key=first_rated.__getitem__)
    page.keyboard.press("b")
    wait_text(page, "#rate-message", "back to your previous task")
    page.wait_for_function("document.querySelector(\"#rate-cp input[value='0']\")?.checked", timeout=STEP_MS)
    shots(page, "went-back")
    page.keyboard.press("2")
    page.keyboard.press("2")
    page.wait_for_function("document.querySelector(\"#rate-cp input[value='2']\")?.checked", timeout=STEP_MS)
    page.keyboard.press("Enter")
    wait_text(page, "#rate-message", "saved your answer")
    shots(page, "changed")

    current = {(r.sample_id, r.criterion): r for r in wb.ratings.ratings_of("bob")}
    assert len(current) == 6
    assert (current[(rated[0], "cp")].score, current[(rated[0], "pf")].score) == (3, 2)
    assert (current[(rated[1], "cp")].score, current[(rated[1], "pf")].score) == (4, 1)
    changed_cp, changed_pf = current[(rated[2], "cp")], current[(rated[2], "pf")]
    assert (changed_cp.score, changed_pf.score) == (2, 2) and changed_cp.revision == 2
    assert all(r.seconds_spent is not None and r.status == "rated" for r in current.values())
    assert not page.errors, page.errors
    page.close()
