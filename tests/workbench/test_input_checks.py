"""Inputs are never taken without a word (issue 11): images too small to judge, transparency flattened (with a note),
masks of another size than their image refused before anything is scored or stored, a metric's missing inputs in
the user's words (also for values stored before, or by batch), and an unknown sample id in Compare as a plain
message."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.imaging import open_image
from masc_ui.metrics.sample import MetricValue
from masc_ui.workbench import build_workbench
from masc_ui.workbench.examples import load_example
from masc_ui.workbench.scoring import check_judgeable, missing_inputs_text, stored_rows, user_reason


@pytest.fixture()
def wb(demo_settings):
    bench = build_workbench(demo_settings)
    yield bench
    bench.close()


def test_an_image_too_small_to_judge_is_refused_with_its_size():
    tiny = open_image(Image.new("RGB", (1, 1), "red"), name="output image")
    with pytest.raises(InputError, match=r"output image is 1x1 pixels: too small to judge\. Images need at least 32"):
        check_judgeable(tiny)
    narrow = open_image(Image.new("RGB", (200, 31)), name="reference image 1")
    with pytest.raises(InputError, match="reference image 1 is 200x31 pixels"):
        check_judgeable(narrow)
    smallest = open_image(Image.new("RGB", (32, 32)), name="x")
    assert check_judgeable(smallest) is smallest


def test_transparency_is_flattened_onto_white_with_a_note():
    rgba = np.zeros((40, 40, 4), np.uint8)
    rgba[10:30, 10:30] = (200, 30, 30, 255)
    image = open_image(Image.fromarray(rgba, "RGBA"), name="output image")
    assert image.notes == ("output image has transparency: it was flattened onto white (what metrics and raters see)",)
    pixels = np.asarray(image.pixels)
    assert image.pixels.mode == "RGB" and tuple(pixels[0, 0]) == (255, 255, 255)  # was transparent
    assert tuple(pixels[20, 20]) == (200, 30, 30)
    opaque = rgba.copy()
    opaque[..., 3] = 255
    assert open_image(Image.fromarray(opaque, "RGBA"), name="output image").notes == ()  # nothing to say


def test_a_mask_of_another_size_is_refused_by_make_sample_and_by_save(wb):
    ex = load_example("coffee-on-bricks")
    ref, out = wb.scoring.load_image(ex.ref, "reference image 1"), wb.scoring.load_image(ex.out, "output image")
    small = np.zeros((60, 100), bool)
    small[10:50, 20:80] = True
    with pytest.raises(
        InputError,
        match=rf"the mask of the output is 100x60 pixels but its image is "
        rf"{out.size[0]}x{out.size[1]}",
    ):
        wb.scoring.make_sample([ref], out, ex.prompt, ex.subject, [ex.ref_mask], small)
    with pytest.raises(
        InputError,
        match=rf"the mask of reference 1 is 100x60 pixels but its image is "
        rf"{ref.size[0]}x{ref.size[1]}",
    ):
        wb.scoring.make_sample([ref], out, ex.prompt, ex.subject, [small], ex.out_mask)
    fine = wb.scoring.make_sample([ref], out, ex.prompt, ex.subject, [ex.ref_mask], ex.out_mask)
    assert fine.out_mask.shape == out.size[::-1]
    # a sample built without make_sample (a library caller) is refused by Save too, and nothing is stored
    from masc_ui.metrics.sample import Sample

    stretched = Sample(
        refs=(ref,), out=out, prompt=ex.prompt, subject=ex.subject, ref_masks=(None,), out_mask=small.astype(np.float32)
    )
    with pytest.raises(InputError, match="the mask of the output is 100x60 pixels"):
        wb.recorder.save(stretched, {"pf": MetricValue("pf", math.nan, "test")}, user=None, dataset="sizes")
    assert wb.database.datasets() == []


def test_a_missing_input_is_stored_and_shown_in_the_users_words(wb):
    ex = load_example("cat-on-grass")
    sample = wb.scoring.make_sample([ex.ref], ex.out, ex.prompt, ex.subject)  # no masks
    report = wb.scoring.score(sample, ["cp", "clip_i"], user=None)
    assert report.values["cp"].reason == "needs a mask of reference 1: draw them under Masks, then Run"
    saved = wb.recorder.save(sample, report.values, user=None, dataset="reasons")
    stored = {v.metric: v for v in wb.database.store.metrics.history(saved.sample_id)}
    assert stored["cp"].value is None and stored["cp"].reason == report.values["cp"].reason
    shown = {r.metric: r.text() for r in wb.samples.stored_report(saved.sample_id, user=None).rows}
    assert shown["cp"] == "n/a (needs a mask of reference 1: draw them under Masks, then Run)"


def test_a_reason_stored_in_the_scorers_words_is_shown_in_the_users():
    raw = "cp needs ref_masks[0], ref_masks[1], which sample 0 lacks"
    assert (
        user_reason(raw)
        == missing_inputs_text(["ref_masks[0]", "ref_masks[1]"])
        == ("needs a mask of reference 1 and a mask of reference 2: draw them under Masks, then Run")
    )
    assert user_reason("clip_t needs prompt, which sample 3 lacks") == "needs the prompt: add them, then Run"
    assert user_reason("no face found in the output") == "no face found in the output"
    assert user_reason(None) is None
    rows = {
        r.metric: r
        for r in stored_rows({"pf": SimpleNamespace(value=None, reason="pf needs out_mask, which sample 0 lacks")})
    }
    assert rows["pf"].text() == "n/a (needs a mask of the output: draw them under Masks, then Run)"
    assert rows["cp"].text() == "n/a (not stored for this sample: press Run to compute it)"


def test_compare_of_an_unknown_sample_is_a_plain_message(wb):
    ex = load_example("cat-on-grass")
    sid = wb.recorder.save(
        wb.scoring.make_sample([ex.ref], ex.out, ex.prompt, ex.subject), {}, user=None, dataset="d"
    ).sample_id
    for call in (
        lambda: wb.compare.partners(999, user=None),
        lambda: wb.compare.compare(999, sid, user=None),
        lambda: wb.compare.compare(sid, 999, user=None),
    ):
        with pytest.raises(InputError, match="sample #999 is not in the database") as caught:
            call()
        assert "store.samples" not in str(caught.value)
    with pytest.raises(InputError, match="whole number from 1"):
        wb.compare.partners(0, user=None)
    assert wb.compare.partners(sid, user=None) == []
