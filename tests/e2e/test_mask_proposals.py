"""End to end in Debian's Chromium: `batch --masks text --store-masks` keeps a doubtful subject-name mask as a
proposal; opening the sample from Browse, the admin sees it offered as "Proposed mask" (never applied by itself),
applies it for the output and saves, and the stored output mask is then that mask, current; the reference's
proposal is still only a proposal. Screenshots at 1400x1000 and 800x900 go to test-artifacts/e2e/."""

from __future__ import annotations

import re

import numpy as np
import pytest

from masc_ui.segmentation.masks import mask_from_png
from masc_ui.workbench import build_workbench
from masc_ui.workbench.batch import BatchOptions
from tests.datasets.dataset_trees import import_manifest, write_manifest

from .conftest import SMALL, WIDE, login
from .steps import STEP_MS, open_tab, pick_radio, text_of, wait_idle, wait_text

pytestmark = pytest.mark.e2e
SIZE = (256, 192)
"""Of the toy images: big enough to look at."""


def test_a_stored_proposal_is_offered_applied_and_saved(browser, app_server, shots, tmp_path):
    wb = app_server.wb
    store = wb.database.store
    import_manifest(store, "proposals", write_manifest(tmp_path / "m", subjects=1, outputs=1, masks=False, size=SIZE))
    sid = store.samples.get_by_key("proposals", "toy0-0").id
    # The tiny demo SAM 3 with threshold 0 finds part of these images; a minimum share of the whole image makes
    # that doubtful.
    doubting = build_workbench(wb.settings.replace(text_seg_threshold=0.0, text_seg_min_fraction=1.0), store=store)
    summary = doubting.batch.run(BatchOptions("proposals", ("cp", "pf"), masks="text", store_masks=True))
    assert summary.proposals_stored == 2 and store.masks.current(sid) == {}, summary.lines()
    proposed = store.masks.proposals_for([sid])[sid]

    page = login(browser, app_server.url, "alice")
    open_tab(page, "Browse and export")
    page.locator("#browse-sample-id input").fill(str(sid))
    page.locator("#browse-open").click()
    note = wait_text(page, "#load-message", f"opened sample #{sid}")
    assert "A stored proposed mask waits for reference 1, output (doubtful, not applied)" in note
    wait_idle(page)
    pick_radio(page, "#mask-target", "output")
    wait_idle(page)
    page.locator("#mask-proposal-view img").first.wait_for(timeout=STEP_MS)
    assert page.locator("#mask-proposal").first.is_visible()
    said = text_of(page, "#mask-message")
    assert said.startswith("no mask yet; ⚠ doubtful mask") and "kept by the batch from the subject's name" in said
    page.locator("#mask-proposal").first.scroll_into_view_if_needed()
    shots(page, "proposal-offered", full_page=False)
    page.set_viewport_size(SMALL)
    page.wait_for_timeout(800)
    page.locator("#mask-apply").scroll_into_view_if_needed()
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL["width"]
    shots(page, "proposal-offered-narrow", full_page=False)
    page.set_viewport_size(WIDE)
    page.locator("#mask-apply").click()
    applied = wait_text(page, "#mask-message", "subject-name mask applied")
    px = int(re.search(r"([\d,]+) px", applied).group(1).replace(",", ""))
    expected = mask_from_png(store.blobs.path(proposed["output", 0].sha256).read_bytes()) > 0
    assert px == int(expected.sum()) > 0
    page.locator("#save").click()
    wait_text(page, "#score-message", f"saved to sample #{sid}")
    current = store.masks.current(sid)
    assert set(current) == {("output", 0)} and not current["output", 0].proposal
    stored = mask_from_png(store.blobs.path(current["output", 0].sha256).read_bytes()) > 0
    assert np.array_equal(stored, expected)  # the proposal's pixels, now the current mask
    assert set(store.masks.proposals_for([sid])[sid]) == {("reference", 0)}  # still only proposed
    assert not page.errors, page.errors
    page.close()
