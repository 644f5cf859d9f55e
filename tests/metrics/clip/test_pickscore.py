"""PickScore against an independent computation on the tiny PickScore-shaped (CLIP-H-style) checkpoint:
raw logit_scale.exp() * cosine, no clamping, the processor read from its own id."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.sample import Sample


def _image(seed: int) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (70, 90, 3), dtype=np.uint8))


PROMPTS = ["a photo of the cat on a beach", "zzz", "the red thing", "ON THE MOON!!", "x", "a dog in the garden"]


def test_pickscore_is_scaled_cosine(demo_settings, demo_weights):
    from transformers import AutoProcessor, CLIPModel

    path = demo_weights / "clip-h"
    model, processor = CLIPModel.from_pretrained(path).eval(), AutoProcessor.from_pretrained(path)
    out = _image(0)
    values = get_scorer("pickscore", demo_settings).score([Sample((), out, prompt=p) for p in PROMPTS])
    with torch.no_grad():
        pixels = processor(images=[out], return_tensors="pt")["pixel_values"]
        img = model.visual_projection(model.vision_model(pixel_values=pixels).pooler_output)[0].double()
        tok = processor.tokenizer(PROMPTS, padding=True, truncation=True, max_length=77, return_tensors="pt")
        txt = model.text_projection(model.text_model(**tok).pooler_output).double()
        scale = float(model.logit_scale.exp())
    cos = ((txt / txt.norm(dim=-1, keepdim=True)) @ (img / img.norm())).numpy()
    assert scale == pytest.approx(100.0, rel=1e-5)
    assert [v.value for v in values] == pytest.approx(scale * cos, abs=1e-3)
    assert [v.extras["cos"] for v in values] == pytest.approx(cos, abs=1e-5)
    assert (cos < 0).any(), "raw scale: negative cosines stay negative (no clamping)"
    assert all(v.extras["logit_scale"] == pytest.approx(scale) for v in values)
    prov = values[0].provenance
    assert prov["model_id"] == str(path) and prov["params"]["processor_id"] == str(path)


def test_pickscore_processor_is_its_own_setting(demo_settings, demo_weights, tmp_path):
    settings = demo_settings.replace(pickscore_processor=str(demo_weights / "clip"))
    [value] = get_scorer("pickscore", settings).score([Sample((), _image(1), prompt="a cat")])
    assert value.provenance["params"]["processor_id"] == str(demo_weights / "clip")
    assert value.provenance["model_id"] == str(demo_weights / "clip-h")


def test_pickscore_needs_prompt(demo_settings):
    with pytest.raises(InputError, match="pickscore needs prompt"):
        get_scorer("pickscore", demo_settings).score([Sample((), _image(2))])
