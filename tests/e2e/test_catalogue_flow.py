"""End to end in Chromium: the scorer catalogue in the Score tab on a real photo of a person
(`skimage.data.astronaut()`): metric choices with their model sizes, the preset buttons, Run, then the catalogue
explanation: VQAScore's exact question with P(Yes)/P(No), FaceSim's faces and aligned 112x112 crops. Screenshots at
1400x1000 and 800x900 go to test-artifacts/e2e/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from masc_ui.ui.staleness import CATALOGUE_LABEL

from .conftest import login
from .test_browser_flows import STEP_MS, wait_text

pytestmark = pytest.mark.e2e
PROMPT = "an astronaut in front of a flag"
PROMPT_PRESET = ["pf", "clip_t", "vqascore", "itmscore"]


@pytest.fixture(scope="module")
def astronaut(tmp_path_factory) -> tuple[Path, Path]:
    data = pytest.importorskip("skimage.data")
    folder = tmp_path_factory.mktemp("astronaut")
    photo = Image.fromarray(data.astronaut())
    photo.save(folder / "ref.png")
    photo.transpose(Image.FLIP_LEFT_RIGHT).save(folder / "out.png")
    return folder / "ref.png", folder / "out.png"


def checked(page) -> list[str]:
    return page.locator("#metric-pick input[type=checkbox]").evaluate_all(
        "boxes => boxes.filter(b => b.checked).map(b => b.value || b.name)"
    )


@pytest.mark.parametrize("viewport", [(1400, 1000), (800, 900)], ids=["wide", "narrow"])
def test_catalogue_explanations_of_a_face_photo(browser, app_server, shots, astronaut, viewport):
    page = login(browser, app_server.url, "alice")
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    ref, out = astronaut
    page.locator("#ref-image input[type=file]").set_input_files(str(ref))
    page.locator("#out-image input[type=file]").set_input_files(str(out))
    page.locator("#prompt textarea").fill(PROMPT)
    page.locator("#subject textarea, #subject input").first.fill("astronaut")
    labels = page.locator("#metric-pick label").all_inner_texts()
    assert any(t.startswith("VQAScore · demo checkpoint ") for t in labels), labels

    page.locator("#preset-prompt").click()
    page.wait_for_function(
        f"document.querySelectorAll('#metric-pick input:checked').length === {len(PROMPT_PRESET)}", timeout=STEP_MS
    )
    page.locator("#metric-pick label", has_text=re.compile(r"FaceSim ·")).click()
    page.locator("#metric-pick label", has_text="FaceScore").click()
    page.wait_for_function("document.querySelectorAll('#metric-pick input:checked').length === 6", timeout=STEP_MS)
    shots(page, "preset-prompt-plus-faces")

    page.locator("#run").click()
    page.wait_for_function("document.querySelectorAll('#score-table tr[data-metric]').length === 6", timeout=STEP_MS)
    page.locator("#explain-catalogue").click()
    notes = wait_text(page, "#catalogue-notes", "P(Yes)")
    assert f'Does this figure show "{PROMPT}"? Please answer yes or no.' in notes
    assert "P(No)" in notes and "FaceSim" in notes and "nan" not in notes.lower()
    page.wait_for_function("document.querySelectorAll('#catalogue-pictures img').length >= 5", timeout=STEP_MS)
    captions = page.locator("#catalogue-pictures").inner_text()
    assert captions.count("aligned 112×112 crop") == 2, captions
    page.locator("#catalogue-notes").scroll_into_view_if_needed()
    shots(page, "catalogue-explained")

    # The explanation follows the one "out of date" rule of every result: a new prompt flags it (with the score
    # table), explaining again makes it current, a new output clears it.
    page.locator("#prompt textarea").fill("an astronaut on the moon")
    stale = wait_text(page, "#stale-box", "catalogue explanation")
    assert "since the score table and the catalogue explanation were computed" in stale
    assert f"Press Run and “{CATALOGUE_LABEL}” again" in stale
    here = wait_text(page, "#catalogue-stale", "out of date")  # said next to the explanation too (far below Run)
    assert "since the catalogue explanation was computed" in here
    page.locator("#stale-box").scroll_into_view_if_needed()
    shots(page, "catalogue-out-of-date", full_page=False)
    page.locator("#catalogue-stale").scroll_into_view_if_needed()
    shots(page, "catalogue-out-of-date-here", full_page=False)
    page.locator("#explain-catalogue").click()
    wait_text(page, "#catalogue-notes", "an astronaut on the moon")
    page.wait_for_function(
        "() => { const t = document.querySelector('#stale-box').innerText;"
        " return t.includes('score table was computed') && !t.includes('catalogue')"
        " && !document.querySelector('#catalogue-stale').innerText.trim(); }",
        timeout=STEP_MS,
    )
    page.locator("#out-image input[type=file]").set_input_files(str(ref))
    page.wait_for_function(
        "() => !document.querySelector('#catalogue-notes').innerText.trim()"
        " && !document.querySelector('#catalogue-pictures img') && !document.querySelector('#stale-box').innerText.trim()",
        timeout=STEP_MS,
    )
    shots(page, "catalogue-cleared-by-a-new-output")
    assert not page.errors, page.errors
    page.close()
