"""The mask-sensitivity check: the mask-dependent metrics rescored on eroded, dilated and other masks, through the
same scoring path as the sample itself (0 px reproduces its values exactly)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from masc_ui.errors import InputError
from masc_ui.imaging.mask_morphology import shift_mask
from masc_ui.workbench import build_workbench
from masc_ui.workbench.examples import load_example
from masc_ui.workbench.mask_sensitivity import MaskSet, MetricSensitivity
from masc_ui.workbench.users import AccessDenied

MASKED = ["cp", "pf", "clip_i_seg"]


@pytest.fixture()
def wb(demo_settings):
    bench = build_workbench(demo_settings)
    yield bench
    bench.close()


def _sample(wb, name: str = "cat-on-grass"):
    ex = load_example(name)
    return wb.scoring.make_sample([ex.ref], ex.out, ex.prompt, ex.subject, [ex.ref_mask], ex.out_mask)


def test_zero_pixels_reproduces_the_values_of_run_exactly(wb):
    sample = _sample(wb)
    report = wb.mask_sensitivity.run(sample, [*MASKED, "clip_i"], user=None, shifts=(0, 3))
    assert [m.metric for m in report.metrics] == MASKED  # clip_i needs no mask: not rescored
    assert report.variants == ("0 px", "eroded 3 px", "dilated 3 px")
    run = wb.scoring.score(sample, MASKED, user=None).values
    for m in report.metrics:
        assert m.stored == float(run[m.metric].value) == m.values["0 px"]
        assert m.values["eroded 3 px"] != m.stored or m.values["dilated 3 px"] != m.stored
        assert m.spread == pytest.approx(m.high - m.low) and m.spread > 0


def test_an_eroded_variant_equals_scoring_the_eroded_masks_by_hand(wb):
    sample = _sample(wb)
    report = wb.mask_sensitivity.run(sample, ["cp", "pf"], user=None, shifts=(4,))
    by_hand = dataclasses.replace(
        sample,
        ref_masks=(shift_mask(sample.ref_masks[0], -4),),
        out_mask=shift_mask(sample.out_mask, -4),
    )
    want = wb.scoring.score(by_hand, ["cp", "pf"], user=None).values
    for m in report.metrics:
        assert m.values["eroded 4 px"] == float(want[m.metric].value)


def test_another_source_replaces_only_the_masks_it_has(wb):
    sample = _sample(wb)
    h, w = sample.out_mask.shape
    half = np.zeros((h, w), np.float32)
    half[:, : w // 2] = 1.0
    report = wb.mask_sensitivity.run(
        sample, ["cp", "pf"], user=None, shifts=(0,), sources={"left half": MaskSet((), half)}
    )
    cp, pf = report.metrics
    assert cp.values["left half"] == cp.stored  # CP reads the reference's mask, which the source keeps
    assert pf.values["left half"] != pf.stored
    want = wb.scoring.score(dataclasses.replace(sample, out_mask=half), ["pf"], user=None).values["pf"]
    assert pf.values["left half"] == float(want.value)


def test_a_variant_that_empties_a_mask_is_missing_with_its_reason(wb):
    sample = _sample(wb)
    h, w = sample.out_mask.shape
    speck = np.zeros((h, w), np.float32)
    speck[h // 2 - 1 : h // 2 + 2, w // 2 - 1 : w // 2 + 2] = 1.0  # 3x3 px: gone after a 2 px erosion
    report = wb.mask_sensitivity.run(
        dataclasses.replace(sample, out_mask=speck), ["clip_i_seg"], user=None, shifts=(2,)
    )
    (seg,) = report.metrics
    assert seg.stored is not None and seg.values["dilated 2 px"] is not None
    assert seg.values["eroded 2 px"] is None and "output mask is empty" in seg.reasons["eroded 2 px"]
    assert seg.spread is not None  # over the two values computed
    record = json.loads(json.dumps(report.record(), allow_nan=False))
    assert record["metrics"]["clip_i_seg"]["values"]["eroded 2 px"] is None
    assert "n/a" in report.rows()[0]


def test_by_name_without_a_subject_is_skipped_with_the_reason(wb):
    sample = dataclasses.replace(_sample(wb), subject=None)
    report = wb.mask_sensitivity.run(sample, ["cp"], user=None, by_name=True)
    assert "subject name" not in report.variants and report.skipped["subject name"] == "no subject name to segment by"


def test_by_name_segments_each_image_with_the_text_segmenter(wb):
    sample = _sample(wb)
    report = wb.mask_sensitivity.run(sample, ["pf"], user=None, shifts=(1,), by_name=True)
    assert report.variants[-1] == "subject name" and not report.skipped
    seg = wb.segmentation.segment_by_name(sample.out_image, sample.subject, user=None)
    want = wb.scoring.score(dataclasses.replace(sample, out_mask=seg.mask), ["pf"], user=None).values["pf"]
    got = report.metrics[0].values["subject name"]
    assert (got is None and want.is_nan) or got == float(want.value)
    assert ("the output" in report.notes.get("subject name", "")) == seg.doubtful


def test_refusals_say_what_to_do(wb, demo_settings):
    sample = _sample(wb)
    with pytest.raises(InputError, match="uses a mask"):
        wb.mask_sensitivity.run(sample, ["clip_i", "clip_t"], user=None)
    with pytest.raises(InputError, match="no mask to vary"):
        wb.mask_sensitivity.run(dataclasses.replace(sample, ref_masks=(None,), out_mask=None), ["cp"], user=None)
    with pytest.raises(InputError, match="0 to"):
        wb.mask_sensitivity.run(sample, ["cp"], user=None, shifts=(-1,))
    raters = build_workbench(dataclasses.replace(demo_settings, users="alice:pw-a:admin,bob:pw-b"))
    with pytest.raises(AccessDenied):
        raters.mask_sensitivity.run(sample, ["cp"], user="bob")
    raters.close()


def test_the_spread_needs_two_values():
    one = MetricSensitivity("cp", "MaSC CP", True, 0.5, {"eroded 3 px": None}, {"eroded 3 px": "empty"})
    assert one.spread is None and one.low == one.high == 0.5
    none = MetricSensitivity("cp", "MaSC CP", True, math.nan, {})
    assert none.low is None and none.spread is None


def test_concept_preservation_falls_monotonically_as_the_masks_take_in_a_differing_background(wb, tmp_path):
    """A constructed case: reference and output show the same subject (a red square with a green core) on two
    different noise backgrounds, with exact masks. Dilating the masks moves more and more of the two (unrelated)
    backgrounds into what CP compares as the subject, so CP can only fall as the dilation grows; eroding them keeps
    comparing identical subject pixels, so CP stays where it was."""
    from PIL import Image

    size, mask = 160, np.zeros((160, 160), dtype=bool)
    mask[40:120, 40:120] = True
    paths = []
    for seed in (1, 2):
        pixels = np.random.default_rng(seed).integers(0, 256, (size, size, 3), dtype=np.uint8)
        pixels[40:120, 40:120] = (200, 40, 40)
        pixels[60:100, 60:100] = (40, 200, 40)
        paths.append(tmp_path / f"{seed}.png")
        Image.fromarray(pixels).save(paths[-1])
    sample = wb.scoring.make_sample([paths[0]], paths[1], "a red box on a table", "box", [mask], mask)
    report = wb.mask_sensitivity.run(sample, ["cp"], user=None, shifts=(0, 4, 8, 16))
    (cp,) = report.metrics
    dilated = [cp.values["0 px"]] + [cp.values[f"dilated {px} px"] for px in (4, 8, 16)]
    assert all(later <= earlier for earlier, later in zip(dilated, dilated[1:])), dilated
    assert dilated[-1] < dilated[0] - 0.05, dilated
    eroded = [cp.values[f"eroded {px} px"] for px in (4, 8, 16)]
    assert all(v == pytest.approx(cp.values["0 px"], abs=0.01) for v in eroded), eroded
