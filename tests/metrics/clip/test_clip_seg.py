"""CLIP-I-Seg: fill and crop on synthetic images where the answer is known, the value against an independent
CLIP computation on the expected crop, the reference option, and the NaN / error paths."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.sample import Sample
from masc_ui.metrics.segmented_subject import margin_box, parse_fill, segment_subject

W, H = 100, 80


def _noise(seed: int, w: int = W, h: int = H) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _rect_mask(x0, y0, x1, y1, w=W, h=H) -> np.ndarray:
    mask = np.zeros((h, w), dtype=np.uint8)
    mask[y0:y1, x0:x1] = 255
    return mask


def expected_crop(pixels: np.ndarray, fg: np.ndarray, box, fill) -> np.ndarray:
    x0, y0, x1, y1 = box
    out = np.where(fg[..., None], pixels, np.asarray(fill, np.uint8))
    return out[y0:y1, x0:x1]


def test_fill_and_crop_with_margin():
    pixels = _noise(0)
    mask = _rect_mask(20, 10, 60, 30)  # box 40 x 20 -> margins round(2.0)=2, round(1.0)=1
    crop, box = segment_subject(Image.fromarray(pixels), mask)
    assert box == (18, 9, 62, 31)
    got = np.asarray(crop)
    assert got.shape == (22, 44, 3)
    np.testing.assert_array_equal(got, expected_crop(pixels, mask > 0, box, (255, 255, 255)))
    assert (got[0] == 255).all() and (got[:, 0] == 255).all()  # the margin is fill colour
    np.testing.assert_array_equal(got[1:-1, 2:-2], pixels[10:30, 20:60])  # the subject is untouched


def test_margin_rounds_half_up_and_clips_to_the_image():
    fg = np.zeros((H, W), bool)
    fg[0:30, 70:100] = True  # 30 x 30 box at the top-right corner: margin 1.5 -> 2, clipped at the edges
    assert margin_box(fg, 0.05) == (68, 0, 100, 32)
    assert margin_box(fg, 0.0) == (70, 0, 100, 30)
    fg = np.zeros((H, W), bool)
    fg[40:49, 40:49] = True  # 9 px: 0.45 -> 0
    assert margin_box(fg, 0.05) == (40, 40, 49, 49)


def test_custom_fill_mask_values_and_mask_of_another_size():
    pixels = _noise(1)
    full = np.zeros((H, W), np.float32)
    full[20:60, 30:70] = 0.7  # >= 0.5 is foreground
    full[0:10, 0:10] = 0.4  # < 0.5 is background
    crop, box = segment_subject(Image.fromarray(pixels), full, fill=(0, 128, 255), margin=0.0)
    assert box == (30, 20, 70, 60)
    np.testing.assert_array_equal(np.asarray(crop), pixels[20:60, 30:70])
    half = np.zeros((H // 2, W // 2), bool)
    half[10:30, 15:35] = True  # the same rectangle at half resolution
    crop, box = segment_subject(Image.fromarray(pixels), half, fill=(0, 128, 255), margin=0.0)
    assert box == (30, 20, 70, 60)
    got = np.asarray(crop)
    assert (got[0, 0] == pixels[20, 30]).all() or (got[0, 0] == (0, 128, 255)).all()


def test_empty_mask_gives_none():
    assert segment_subject(Image.fromarray(_noise(2)), np.zeros((H, W))) is None


@pytest.fixture(scope="module")
def clip_ref(demo_weights):
    from transformers import CLIPModel, CLIPProcessor

    path = demo_weights / "clip"
    return CLIPModel.from_pretrained(path).eval(), CLIPProcessor.from_pretrained(path)


def _emb(clip_ref, images) -> np.ndarray:
    model, processor = clip_ref
    with torch.no_grad():
        pixels = processor.image_processor(images=images, return_tensors="pt")["pixel_values"]
        e = model.visual_projection(model.vision_model(pixel_values=pixels).pooler_output).numpy().astype(np.float64)
    return e / np.linalg.norm(e, axis=-1, keepdims=True)


def test_clip_i_seg_value_against_independent_crop(demo_settings, clip_ref):
    out, refs = _noise(3), (_noise(4), _noise(5, 64, 64))
    mask = _rect_mask(20, 10, 60, 30)
    [value] = get_scorer("clip_i_seg", demo_settings).score(
        [Sample(refs=tuple(Image.fromarray(r) for r in refs), out=Image.fromarray(out), out_mask=mask)]
    )
    crop = Image.fromarray(expected_crop(out, mask > 0, (18, 9, 62, 31), (255, 255, 255)))
    e = _emb(clip_ref, [crop, *(Image.fromarray(r) for r in refs)])
    per_ref = e[1:] @ e[0]
    assert value.extras["out_box"] == [18, 9, 62, 31]
    assert value.extras["per_ref"] == pytest.approx(per_ref, abs=1e-5)
    assert value.value == pytest.approx(per_ref.mean(), abs=1e-5)
    assert value.provenance["params"] == {"fill": [255, 255, 255], "margin": 0.05, "segment_reference": False}


def test_segment_reference_option(demo_settings, clip_ref):
    out, ref = _noise(6), _noise(7)
    out_mask, ref_mask = _rect_mask(10, 10, 50, 50), _rect_mask(40, 20, 90, 70)
    scorer = get_scorer("clip_i_seg", demo_settings, segment_reference=True, fill="black", margin=0.1)
    [value] = scorer.score(
        [Sample(refs=(Image.fromarray(ref),), out=Image.fromarray(out), ref_masks=(ref_mask,), out_mask=out_mask)]
    )
    out_box = margin_box(out_mask > 0, 0.1)
    ref_box = margin_box(ref_mask > 0, 0.1)
    assert value.extras["ref_boxes"] == [list(ref_box)]
    crops = [
        Image.fromarray(expected_crop(out, out_mask > 0, out_box, (0, 0, 0))),
        Image.fromarray(expected_crop(ref, ref_mask > 0, ref_box, (0, 0, 0))),
    ]
    e = _emb(clip_ref, crops)
    assert value.value == pytest.approx(float(e[1] @ e[0]), abs=1e-5)


def test_empty_masks_give_nan_with_reason(demo_settings):
    out, ref = Image.fromarray(_noise(8)), Image.fromarray(_noise(9))
    [value] = get_scorer("clip_i_seg", demo_settings).score(
        [Sample(refs=(ref,), out=out, out_mask=np.zeros((H, W), np.uint8))]
    )
    assert math.isnan(value.value) and "output mask is empty" in value.reason
    [value] = get_scorer("clip_i_seg", demo_settings, segment_reference=True).score(
        [
            Sample(
                refs=(ref, ref),
                out=out,
                out_mask=_rect_mask(0, 0, 10, 10),
                ref_masks=(_rect_mask(0, 0, 10, 10), np.zeros((H, W), bool)),
            )
        ]
    )
    assert math.isnan(value.value) and "reference mask(s) [1] empty" in value.reason


def test_missing_masks_are_named(demo_settings):
    out, ref = Image.fromarray(_noise(8)), Image.fromarray(_noise(9))
    with pytest.raises(InputError, match=r"clip_i_seg needs out_mask"):
        get_scorer("clip_i_seg", demo_settings).score([Sample(refs=(ref,), out=out)])
    with pytest.raises(InputError, match=r"clip_i_seg needs ref_masks\[0\]"):
        get_scorer("clip_i_seg", demo_settings, segment_reference=True).score(
            [Sample(refs=(ref,), out=out, out_mask=_rect_mask(0, 0, 10, 10))]
        )
    with pytest.raises(InputError, match="out_mask must be 2-D"):
        get_scorer("clip_i_seg", demo_settings).score([Sample(refs=(ref,), out=out, out_mask=np.ones((H, W, 3)))])


@pytest.mark.parametrize(
    "params, message",
    [
        ({"fill": "not-a-colour"}, "is not a colour"),
        ({"fill": (0, 0, 300)}, "integers in 0..255"),
        ({"margin": -0.1}, "margin must be a number in"),
        ({"margin": "5%"}, "margin must be a number in"),
        ({"segment_reference": "yes"}, "segment_reference must be true or false"),
        ({"colour": "white"}, "has no parameter"),
    ],
)
def test_bad_parameters(demo_settings, params, message):
    with pytest.raises(InputError, match=message):
        get_scorer("clip_i_seg", demo_settings, **params)


def test_parse_fill():
    assert parse_fill("white") == (255, 255, 255)
    assert parse_fill("#102030") == (16, 32, 48)
    assert parse_fill([1, 2, 3]) == (1, 2, 3)


def test_batch_with_empty_masks_keeps_order(demo_settings):
    ref = Image.fromarray(_noise(10))
    a = Sample(refs=(ref,), out=Image.fromarray(_noise(11)), out_mask=_rect_mask(5, 5, 40, 40))
    empty = Sample(refs=(ref,), out=Image.fromarray(_noise(12)), out_mask=np.zeros((H, W)))
    b = Sample(
        refs=(ref, Image.fromarray(_noise(13))), out=Image.fromarray(_noise(14)), out_mask=_rect_mask(50, 20, 90, 70)
    )
    scorer = get_scorer("clip_i_seg", demo_settings)
    batch = scorer.score([a, empty, b])
    assert batch[0].value == pytest.approx(scorer.score([a])[0].value, abs=1e-6)
    assert batch[1].is_nan and batch[1].reason
    assert batch[2].value == pytest.approx(scorer.score([b])[0].value, abs=1e-6)
    assert len(batch[2].extras["per_ref"]) == 2
