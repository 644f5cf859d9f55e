"""DINO-I against an independent computation: METRICS.md's preprocessing written with PIL + numpy (shorter side
256 bicubic, centre crop 224, ImageNet normalization), the CLS token of the tiny ViT, cosines in numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.sample import Sample

MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])


def _image(seed: int, size) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


def _preprocess(img: Image.Image) -> np.ndarray:
    w, h = img.size
    if w <= h:
        size = (256, int(256 * h / w))
    else:
        size = (int(256 * w / h), 256)
    img = img.resize(size, Image.Resampling.BICUBIC)
    w, h = img.size
    top, left = int(round((h - 224) / 2.0)), int(round((w - 224) / 2.0))
    arr = np.asarray(img, dtype=np.float64)[top : top + 224, left : left + 224] / 255.0
    return ((arr - MEAN) / STD).transpose(2, 0, 1)


def test_dino_i_matches_independent_cls_cosines(demo_settings, demo_weights):
    from transformers import ViTModel

    model = ViTModel.from_pretrained(demo_weights / "dino", add_pooling_layer=False).eval()
    out = _image(0, (300, 200))
    refs = (_image(1, (120, 260)), _image(2, (256, 256)), _image(3, (500, 301)))
    [value] = get_scorer("dino_i", demo_settings).score([Sample(refs=refs, out=out)])
    pixels = torch.tensor(np.stack([_preprocess(i) for i in (out, *refs)]), dtype=torch.float32)
    with torch.no_grad():
        cls = model(pixel_values=pixels).last_hidden_state[:, 0].double().numpy()
    cls /= np.linalg.norm(cls, axis=-1, keepdims=True)
    per_ref = cls[1:] @ cls[0]
    assert value.extras["per_ref"] == pytest.approx(per_ref, abs=1e-5)
    assert value.value == pytest.approx(per_ref.mean(), abs=1e-5)
    assert "resize 256 bicubic, centre crop 224" in value.provenance["params"]["preprocess"]
    assert value.provenance["model_id"] == str(demo_weights / "dino")


def test_dino_i_needs_reference(demo_settings):
    with pytest.raises(InputError, match="dino_i needs reference"):
        get_scorer("dino_i", demo_settings).score([Sample(refs=(), out=_image(4, (64, 64)))])


def test_missing_checkpoint_is_named(demo_settings, tmp_path):
    settings = demo_settings.replace(dino_model=str(tmp_path / "nowhere"))
    with pytest.raises(ModelUnavailableError, match="DINO backbone"):
        get_scorer("dino_i", settings).score([Sample(refs=(_image(5, (64, 64)),), out=_image(6, (64, 64)))])
