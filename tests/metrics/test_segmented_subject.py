"""Every -Seg metric follows one rule: its value is its base metric's on the crops that the rule gives (computed
here independently: fill outside the mask, crop to the box + margin), with the same parameters, NaN reasons and
parameter errors; batched = one at a time."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.metrics.registry import get_scorer, list_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry

SEG = {"clip_i_seg": "clip_i", "dino_i_seg": "dino_i", "dinov2_i_seg": "dinov2_i", "dreamsim_seg": "dreamsim"}
W, H = 100, 80


def test_every_seg_metric_is_listed_here():
    assert {s.name for s in list_metrics() if s.name.endswith("_seg")} == set(SEG)


def _noise(seed: int) -> np.ndarray:
    coarse = np.random.default_rng(seed).integers(0, 256, (H // 4, W // 4, 3), dtype=np.uint8)
    return np.asarray(Image.fromarray(coarse).resize((W, H), Image.Resampling.BILINEAR))


def _rect(x0, y0, x1, y1) -> np.ndarray:
    mask = np.zeros((H, W), np.uint8)
    mask[y0:y1, x0:x1] = 255
    return mask


def _crop(pixels: np.ndarray, mask: np.ndarray, box, fill) -> Image.Image:
    x0, y0, x1, y1 = box
    out = np.where(mask[..., None] > 0, pixels, np.asarray(fill, np.uint8))
    return Image.fromarray(out[y0:y1, x0:x1].astype(np.uint8))


@pytest.mark.parametrize("seg, base", sorted(SEG.items()))
def test_seg_is_its_base_metric_on_the_rules_crops(demo_settings, seg, base):
    models = ModelRegistry()
    out, ref = _noise(1), _noise(2)
    out_mask, ref_mask = _rect(20, 10, 60, 30), _rect(40, 20, 90, 70)  # out: 40 x 20 -> margins 2, 1 (5%)
    sample = Sample(refs=(Image.fromarray(ref),), out=Image.fromarray(out), out_mask=out_mask, ref_masks=(ref_mask,))
    [value] = get_scorer(seg, demo_settings, models).score([sample])
    [expected] = get_scorer(base, demo_settings, models).score(
        [Sample(refs=(Image.fromarray(ref),), out=_crop(out, out_mask, (18, 9, 62, 31), (255, 255, 255)))]
    )
    assert value.extras["out_box"] == [18, 9, 62, 31]
    assert value.value == pytest.approx(expected.value, abs=1e-6)
    assert value.extras["per_ref"] == pytest.approx(expected.extras["per_ref"], abs=1e-6)
    assert value.provenance["params"]["fill"] == [255, 255, 255] and value.provenance["params"]["margin"] == 0.05

    both = get_scorer(seg, demo_settings, models, segment_reference=True, fill="black", margin=0.1)
    [value] = both.score([sample])
    out_crop = _crop(out, out_mask, (16, 8, 64, 32), (0, 0, 0))  # 10%: 4 and 2 pixels
    ref_crop = _crop(ref, ref_mask, (35, 15, 95, 75), (0, 0, 0))  # 50 x 50 box: 5 pixels
    [expected] = get_scorer(base, demo_settings, models).score([Sample(refs=(ref_crop,), out=out_crop)])
    assert value.extras["ref_boxes"] == [[35, 15, 95, 75]]
    assert value.value == pytest.approx(expected.value, abs=1e-6)


@pytest.mark.parametrize("seg", sorted(SEG))
def test_seg_batches_nan_reasons_and_parameter_errors(demo_settings, seg):
    ref = Image.fromarray(_noise(3))
    a = Sample(refs=(ref,), out=Image.fromarray(_noise(4)), out_mask=_rect(5, 5, 40, 40))
    empty = Sample(refs=(ref,), out=Image.fromarray(_noise(5)), out_mask=np.zeros((H, W)))
    b = Sample(refs=(ref, Image.fromarray(_noise(6))), out=Image.fromarray(_noise(7)), out_mask=_rect(50, 20, 90, 70))
    scorer = get_scorer(seg, demo_settings)
    batch = scorer.score([a, empty, b])
    assert batch[0].value == pytest.approx(scorer.score([a])[0].value, abs=1e-6)
    assert math.isnan(batch[1].value) and "output mask is empty" in batch[1].reason
    assert batch[2].value == pytest.approx(scorer.score([b])[0].value, abs=1e-6)
    assert len(batch[2].extras["per_ref"]) == 2
    with pytest.raises(InputError, match=rf"{seg} needs ref_masks\[0\]"):
        get_scorer(seg, demo_settings, segment_reference=True).score([a])
    for params, message in (
        ({"fill": (0, 0, 300)}, f"{seg} fill must be"),
        ({"margin": "5%"}, f"{seg} margin must be a number"),
        ({"segment_reference": "yes"}, f"{seg} segment_reference must be true or false"),
        ({"colour": "white"}, f"metric {seg} has no parameter"),
    ):
        with pytest.raises(InputError, match=message):
            get_scorer(seg, demo_settings, **params)
