"""DINOv2-I against an independent computation: the `facebook/dinov2-*` processor's recipe written with PIL + numpy
(shorter side 256 bicubic, the longer one int(256 * long / short), centre crop 224, / 255, ImageNet mean/std), the tiny
`Dinov2Model`'s `pooler_output`, cosines in numpy; batched = one at a time; a shared reference encoded once; errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.metrics.registry import get_scorer, get_spec
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry

MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])


def _image(seed: int, size) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


def _preprocess(img: Image.Image) -> np.ndarray:
    w, h = img.size
    short, long = min(w, h), max(w, h)
    new_long = int(256 * long / short)
    img = img.resize((256, new_long) if w <= h else (new_long, 256), Image.Resampling.BICUBIC)
    w, h = img.size
    top, left = (h - 224) // 2, (w - 224) // 2
    arr = np.asarray(img, dtype=np.float64)[top : top + 224, left : left + 224] / 255.0
    return ((arr - MEAN) / STD).transpose(2, 0, 1)


@pytest.fixture(scope="module")
def dinov2(demo_weights):
    from transformers import Dinov2Model

    return Dinov2Model.from_pretrained(demo_weights / "dinov2").eval()


def _cls(model, images) -> np.ndarray:
    pixels = torch.tensor(np.stack([_preprocess(i) for i in images]), dtype=torch.float32)
    with torch.no_grad():
        out = model(pixel_values=pixels)
    torch.testing.assert_close(out.pooler_output, out.last_hidden_state[:, 0])  # the same vector, by construction
    cls = out.pooler_output.double().numpy()
    return cls / np.linalg.norm(cls, axis=-1, keepdims=True)


def test_dinov2_i_matches_independent_cls_cosines(demo_settings, demo_weights, dinov2):
    out = _image(0, (300, 200))
    refs = (_image(1, (120, 260)), _image(2, (256, 256)), _image(3, (501, 301)))
    [value] = get_scorer("dinov2_i", demo_settings).score([Sample(refs=refs, out=out)])
    cls = _cls(dinov2, (out, *refs))
    per_ref = cls[1:] @ cls[0]
    assert value.extras["per_ref"] == pytest.approx(per_ref, abs=1e-5)
    assert value.value == pytest.approx(per_ref.mean(), abs=1e-5)
    assert max(per_ref) - min(per_ref) > 1e-3  # the tiny checkpoint tells these images apart
    preprocess = value.provenance["params"]["preprocess"]
    assert "shortest edge 256 bicubic" in preprocess and "centre crop 224x224" in preprocess
    assert value.provenance["model_id"] == str(demo_weights / "dinov2")


def test_dinov2_i_seg_is_dinov2_i_of_the_segmented_output(demo_settings, dinov2):
    pixels = np.asarray(_image(4, (100, 80))).copy()
    mask = np.zeros((80, 100), np.uint8)
    mask[10:30, 20:60] = 255
    ref = _image(5, (90, 90))
    [value] = get_scorer("dinov2_i_seg", demo_settings).score(
        [Sample(refs=(ref,), out=Image.fromarray(pixels), out_mask=mask)]
    )
    pixels[mask == 0] = 255
    cls = _cls(dinov2, (Image.fromarray(pixels[9:31, 18:62]), ref))
    assert value.extras["out_box"] == [18, 9, 62, 31]
    assert value.value == pytest.approx(float(cls[1] @ cls[0]), abs=1e-5)


def test_batched_equals_one_at_a_time_and_a_shared_reference_is_encoded_once(demo_settings):
    shared = _image(10, (64, 64))
    samples = [Sample(refs=(shared,), out=_image(k, (80, 60))) for k in range(11, 15)]
    scorer = get_scorer("dinov2_i", demo_settings, ModelRegistry())
    batched = scorer.score(samples)
    assert scorer.backbone().image_forwards == 4 + 1
    for sample, value in zip(samples, batched):
        [alone] = get_scorer("dinov2_i", demo_settings, ModelRegistry()).score([sample])
        assert value.value == pytest.approx(alone.value, abs=1e-6)


def test_the_spec():
    spec = get_spec("dinov2_i")
    assert spec.range == (-1.0, 1.0) and spec.higher_is_better and spec.backbone_settings == ("dinov2_model",)
    assert get_spec("dinov2_i_seg").needs_masks == "out" and get_spec("dinov2_i_seg").family == "dino"


def test_bad_inputs_and_checkpoints_are_named(demo_settings, demo_weights, tmp_path):
    with pytest.raises(InputError, match="dinov2_i needs reference"):
        get_scorer("dinov2_i", demo_settings).score([Sample(refs=(), out=_image(20, (64, 64)))])
    with pytest.raises(InputError, match="dinov2_i_seg fill 'nope' is not a colour"):
        get_scorer("dinov2_i_seg", demo_settings, fill="nope")
    sample = Sample(refs=(_image(21, (64, 64)),), out=_image(22, (64, 64)))
    missing = demo_settings.replace(dinov2_model=str(tmp_path / "nowhere"))
    with pytest.raises(ModelUnavailableError, match="DINOv2 backbone"):
        get_scorer("dinov2_i", missing).score([sample])
    not_v2 = demo_settings.replace(dinov2_model=str(demo_weights / "dino"))
    with pytest.raises(ModelUnavailableError, match="is a 'vit' checkpoint, not DINOv2.*MASC_DINOV2_MODEL"):
        get_scorer("dinov2_i", not_v2).score([sample])
