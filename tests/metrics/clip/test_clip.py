"""CLIP-I, CLIP-T and CLIPScore against an independent computation on the same tiny CLIP weights: the vision
and text towers and projections called directly, normalization and cosines in numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.sample import Sample
from masc_ui.metrics.similarity import clipscore
from masc_ui.models.loaded_models import ModelRegistry


def _image(seed: int, size=(96, 72)) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


@pytest.fixture(scope="module")
def clip_ref(demo_weights):
    from transformers import CLIPModel, CLIPProcessor

    path = demo_weights / "clip"
    return CLIPModel.from_pretrained(path).eval(), CLIPProcessor.from_pretrained(path)


def _unit(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def ref_image_emb(clip_ref, images) -> np.ndarray:
    model, processor = clip_ref
    with torch.no_grad():
        pixels = processor.image_processor(images=images, return_tensors="pt")["pixel_values"]
        pooled = model.vision_model(pixel_values=pixels).pooler_output
        return _unit(model.visual_projection(pooled).numpy())


def ref_text_emb(clip_ref, texts) -> np.ndarray:
    model, processor = clip_ref
    with torch.no_grad():
        tok = processor.tokenizer(texts, padding="max_length", max_length=77, truncation=True, return_tensors="pt")
        pooled = model.text_model(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"]).pooler_output
        return _unit(model.text_projection(pooled).numpy())


def test_clip_i_is_mean_cosine_over_references(demo_settings, clip_ref):
    refs = (_image(1), _image(2, (60, 60)), _image(3, (40, 90)))
    out = _image(4)
    [value] = get_scorer("clip_i", demo_settings).score([Sample(refs=refs, out=out)])
    emb = ref_image_emb(clip_ref, [out, *refs])
    per_ref = emb[1:] @ emb[0]
    assert value.extras["per_ref"] == pytest.approx(per_ref, abs=1e-5)
    assert value.value == pytest.approx(per_ref.mean(), abs=1e-5)
    assert value.reason is None and value.metric == "clip_i"


def test_clip_i_one_reference_and_identity(demo_settings):
    img = _image(5)
    [value] = get_scorer("clip_i", demo_settings).score([Sample(refs=(img,), out=img.copy())])
    assert value.value == pytest.approx(1.0, abs=1e-5)
    assert len(value.extras["per_ref"]) == 1


PROMPTS = [
    "a photo of the cat on a beach",
    "zzz",
    "the red thing",
    "qqq xx",
    "a dog",
    "ON THE MOON!!",
    "in the garden of the house",
    "x",
    "a photo of a cat " * 40,
]


def test_clip_t_and_clipscore_match_independent_cosines(demo_settings, clip_ref):
    out = _image(6)
    samples = [Sample(refs=(), out=out, prompt=p) for p in PROMPTS]
    models = ModelRegistry()
    clip_t = get_scorer("clip_t", demo_settings, models).score(samples)
    score = get_scorer("clipscore", demo_settings, models).score(samples)
    cos = ref_text_emb(clip_ref, PROMPTS) @ ref_image_emb(clip_ref, [out])[0]
    assert [v.value for v in clip_t] == pytest.approx(cos, abs=1e-5)
    assert [v.value for v in score] == pytest.approx(2.5 * np.maximum(cos, 0.0), abs=1e-5)
    assert [v.extras["cos"] for v in score] == pytest.approx(cos, abs=1e-5)
    # The prompts above were chosen so that the clamp is exercised on these seeded weights.
    assert (cos < 0).any() and (cos > 0).any()
    assert all(v.value == 0.0 for v, c in zip(score, cos) if c < 0)


def test_clip_t_truncates_long_prompts_to_77_tokens(demo_settings):
    out = _image(7)
    long = "a photo of a cat " * 40
    longer = long + " and then something entirely different at the very end"
    values = get_scorer("clip_t", demo_settings).score([Sample((), out, prompt=long), Sample((), out, prompt=longer)])
    assert values[0].value == pytest.approx(values[1].value, abs=1e-6)


def test_clipscore_formula():
    assert clipscore(0.3) == pytest.approx(0.75)
    assert clipscore(-0.2) == 0.0
    assert clipscore(1.0) == pytest.approx(2.5)


def test_provenance_records_model_params_device_dtype_version(demo_settings, demo_weights):
    [value] = get_scorer("clip_t", demo_settings).score([Sample((), _image(8), prompt="a cat")])
    prov = value.provenance
    assert prov["model_id"] == str(demo_weights / "clip")
    assert prov["revision"] == "local"
    assert prov["device"] == "cpu" and prov["dtype"] == "float32"
    assert prov["code_version"].startswith("0.")
    assert prov["params"] == {}


@pytest.mark.parametrize(
    "name, sample, needed",
    [
        ("clip_t", Sample(refs=(), out=_image(9)), "prompt"),
        ("clip_t", Sample(refs=(), out=_image(9), prompt="   "), "prompt"),
        ("clipscore", Sample(refs=(), out=_image(9), prompt=None), "prompt"),
        ("clip_i", Sample(refs=(), out=_image(9), prompt="p"), "reference"),
    ],
)
def test_missing_required_input_is_named(demo_settings, name, sample, needed):
    scorer = get_scorer(name, demo_settings)
    with pytest.raises(InputError, match=rf"{name} needs {needed}.*sample 0"):
        scorer.score([sample])
    [value] = scorer.score([sample], missing="nan")
    assert math.isnan(value.value) and needed in value.reason and name in value.reason


def test_missing_nan_policy_scores_the_others(demo_settings):
    good = Sample(refs=(_image(10),), out=_image(11))
    bad = Sample(refs=(), out=_image(11))
    values = get_scorer("clip_i", demo_settings).score([good, bad, good], missing="nan")
    assert not values[0].is_nan and values[1].is_nan and values[0].value == values[2].value


def test_bad_missing_policy_and_params(demo_settings):
    with pytest.raises(InputError, match="missing must be one of"):
        get_scorer("clip_i", demo_settings).score([], missing="skip")
    with pytest.raises(InputError, match="clip_t has no parameter"):
        get_scorer("clip_t", demo_settings, fill="white")


def test_empty_batch(demo_settings):
    assert get_scorer("clip_i", demo_settings).score([]) == []


def test_non_string_prompt_is_refused(demo_settings):
    with pytest.raises(InputError, match="prompt must be a string"):
        get_scorer("clip_t", demo_settings).score([Sample(refs=(), out=_image(12), prompt=42)])
