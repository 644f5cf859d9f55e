"""ITMScore on the tiny BLIP-2 ITM checkpoint: against the model's own ITM forward and t2v_metrics' preprocessing
written here, batching, one image encoding for N prompts, no forward on rerun, truncation, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.metrics.registry import get_scorer, get_spec
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
PROMPTS = ["a cat", "a photo of a red dog on the beach at sunset", "x", "THE BLUE thing, in snow!", "kitten toy"]
LONG = " ".join(["a photo of a red dog on the beach"] * 8)


def _image(seed: int, size=(90, 60)) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


def close(expected):
    return pytest.approx(expected, rel=1e-5, abs=1e-6)


@pytest.fixture(scope="module")
def reference(demo_weights):
    from transformers import AutoProcessor, Blip2ForImageTextRetrieval

    folder = demo_weights / "blip2-itm"
    return Blip2ForImageTextRetrieval.from_pretrained(folder).eval(), AutoProcessor.from_pretrained(folder).tokenizer


def t2v_metrics_pixels(image: Image.Image) -> torch.Tensor:
    """t2v_metrics' blip2-itm transform: Resize((224, 224), bicubic), ToTensor, CLIP normalization."""
    from torchvision import transforms

    transform = transforms.Compose(
        [
            transforms.Resize((224, 224), interpolation=transforms.InterpolationMode.BICUBIC),
            transforms.ToTensor(),
            transforms.Normalize(CLIP_MEAN, CLIP_STD),
        ]
    )
    return transform(image.convert("RGB"))[None]


@torch.no_grad()
def reference_itm(reference, image: Image.Image, prompt: str) -> float:
    """The model's own ITM forward, text padded/truncated to 35 tokens as t2v_metrics."""
    model, tokenizer = reference
    text = tokenizer([prompt], padding="max_length", truncation=True, max_length=35, return_tensors="pt")
    out = model(
        pixel_values=t2v_metrics_pixels(image),
        input_ids=text.input_ids,
        attention_mask=text.attention_mask,
        use_image_text_matching_head=True,
    )
    return out.logits_per_image.softmax(dim=-1)[0, 1].item()


def test_equals_the_models_own_itm_forward(demo_settings, reference):
    images = [_image(1), _image(2, (40, 120)), _image(3, (224, 224))]
    samples = [Sample(refs=(), out=images[i % 3], prompt=p) for i, p in enumerate(PROMPTS + [LONG])]
    values = get_scorer("itmscore", demo_settings).score(samples)
    for sample, value in zip(samples, values):
        assert value.reason is None and 0 < value.value < 1
        assert value.value == close(reference_itm(reference, sample.out.pixels, sample.prompt))
    assert values[0].provenance["params"]["max_text_tokens"] == 35 and values[0].provenance["params"]["queries"] == 32


def test_pixels_are_t2v_metrics_pixels(demo_settings):
    scorer = get_scorer("itmscore", demo_settings)
    processor = scorer.backbone().image_processor
    for image in (_image(4), _image(5, (300, 17)), Image.new("RGB", (1, 1), (1, 2, 3))):
        ours = processor(images=[image], return_tensors="pt", input_data_format="channels_last")["pixel_values"]
        assert torch.allclose(ours, t2v_metrics_pixels(image), atol=1e-5)


def test_batched_equals_one_at_a_time(demo_settings):
    samples = [Sample(refs=(), out=_image(i % 3, (40 + 17 * i, 64)), prompt=p) for i, p in enumerate(PROMPTS * 2)]
    batched = get_scorer("itmscore", demo_settings).score(samples)
    models = ModelRegistry()
    singles = []
    for sample in samples:
        scorer = get_scorer("itmscore", demo_settings, models)
        scorer.backbone().clear_caches()
        singles += scorer.score([sample])
    assert [v.value for v in batched] == close([v.value for v in singles])


def test_one_image_encoding_for_n_prompts_and_no_forward_on_rerun(demo_settings):
    image = _image(6)
    samples = [Sample(refs=(), out=image, prompt=p) for p in PROMPTS] + [Sample(refs=(), out=_image(7), prompt="a")]
    scorer = get_scorer("itmscore", demo_settings)
    engine = scorer.backbone()
    calls = {"vision": 0, "qformer": 0}
    engine.model.vision_model.register_forward_hook(
        lambda module, args, kwargs, out: calls.__setitem__("vision", calls["vision"] + len(kwargs["pixel_values"])),
        with_kwargs=True,
    )
    engine.model.qformer.register_forward_hook(lambda *_: calls.__setitem__("qformer", calls["qformer"] + 1))
    first = scorer.score(samples)
    assert (engine.image_encodings, engine.pair_forwards, engine.batch_forwards) == (2, 6, 1)
    assert calls == {"vision": 2, "qformer": 1}
    again = scorer.score(list(reversed(samples)))
    assert calls == {"vision": 2, "qformer": 1} and engine.pair_forwards == 6
    assert [v.value for v in reversed(again)] == [v.value for v in first]


def test_a_prompt_over_35_tokens_is_truncated_and_says_so(demo_settings, reference):
    short, long = get_scorer("itmscore", demo_settings).score(
        [Sample(refs=(), out=_image(8), prompt="a cat"), Sample(refs=(), out=_image(8), prompt=LONG)]
    )
    assert short.extras == {"text_tokens": 4, "truncated": False, "max_text_tokens": 35}
    assert long.extras["truncated"] is True and long.extras["text_tokens"] > 35
    _, tokenizer = reference
    kept = tokenizer.decode(tokenizer(LONG, truncation=True, max_length=35).input_ids, skip_special_tokens=True)
    assert long.value == close(reference_itm(reference, _image(8), kept))


def test_empty_prompt_tiny_transparent_and_grey_images(demo_settings, reference):
    scorer = get_scorer("itmscore", demo_settings)
    with pytest.raises(InputError, match="itmscore needs prompt, which sample 0 lacks"):
        scorer.score([Sample(refs=(), out=_image(1), prompt="")])
    [empty] = scorer.score([Sample(refs=(), out=_image(1), prompt=None)], missing="nan")
    assert empty.is_nan and "needs prompt" in empty.reason
    rgba = Image.new("RGBA", (30, 20), (250, 0, 0, 90))
    flat = Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    grey = _image(2).convert("L")
    tiny, transparent, grey_value = scorer.score(
        [Sample(refs=(), out=img, prompt="a cat") for img in (Image.new("RGB", (1, 1), (5, 6, 7)), rgba, grey)]
    )
    assert tiny.value == close(reference_itm(reference, Image.new("RGB", (1, 1), (5, 6, 7)), "a cat"))
    assert transparent.value == close(reference_itm(reference, flat, "a cat"))
    assert "flattened onto white" in transparent.extras["image_notes"][0]
    assert grey_value.value == close(reference_itm(reference, grey.convert("RGB"), "a cat"))


def test_missing_model_names_the_setting(demo_settings, tmp_path):
    scorer = get_scorer("itmscore", demo_settings.replace(itm_model=str(tmp_path / "nope")))
    with pytest.raises(ModelUnavailableError, match=r"ITMScore model \(MASC_ITM_MODEL\).*does not exist"):
        scorer.score([Sample(refs=(), out=_image(1), prompt="a cat")])


def test_registry_declaration():
    spec = get_spec("itmscore")
    assert spec.range == (0.0, 1.0) and spec.higher_is_better and spec.needs_prompt and not spec.needs_reference
    assert spec.backbone_settings == ("itm_model",) and "BLIP-2" in spec.paper and "35 tokens" in spec.convention
