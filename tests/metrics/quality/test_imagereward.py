"""ImageReward: equal to an independent computation (the functional BLIP reward forward of
tests/metrics/blip_reference.py on the tiny `ImageReward.pt`, PIL preprocessing and BERT tokens written here after
image-reward 1.5's `ImageReward.score`), batched == one at a time, each distinct (image, prompt) through the model once,
the release file layout and strict loading, bad inputs."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from skimage import data
from transformers import BertTokenizerFast

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.metrics.registry import get_scorer, get_spec, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry
from tests.metrics.blip_reference import reward

CLIP_MEAN = np.array([0.48145466, 0.4578275, 0.40821073])
CLIP_STD = np.array([0.26862954, 0.26130258, 0.27577711])
IMAGEREWARD_MEAN, IMAGEREWARD_STD = 0.16717362830052426, 1.0333394966054072
"""`ImageReward.mean` / `ImageReward.std` of image-reward 1.5 (`ImageReward.py`)."""
LONG_PROMPT = "a photo of an astronaut in a white space suit standing in front of the flag of the united states"
"""Longer than 35 tokens with the tiny tokenizer: the truncation is exercised."""


def _pixels(img: Image.Image) -> torch.Tensor:
    """image-reward's `_transform(224)`: Resize(224) bicubic on the short side, CenterCrop(224), RGB, CLIP norm."""
    w, h = img.size
    size = (224, int(224 * h / w)) if w <= h else (int(224 * w / h), 224)
    img = img.resize(size, Image.BICUBIC)
    left, top = int(round((size[0] - 224) / 2.0)), int(round((size[1] - 224) / 2.0))
    arr = (
        np.asarray(img.crop((left, top, left + 224, top + 224)).convert("RGB"), np.float64) / 255 - CLIP_MEAN
    ) / CLIP_STD
    return torch.from_numpy(arr).permute(2, 0, 1)[None].float()


def _independent(folder: Path, img: Image.Image, prompt: str) -> float:
    sd = torch.load(folder / "ImageReward.pt")
    cfg = json.loads((folder / "med_config.json").read_text())
    tok = BertTokenizerFast.from_pretrained(folder)(
        [prompt], padding="max_length", truncation=True, max_length=35, return_tensors="pt"
    )
    with torch.no_grad():
        raw = float(reward(sd, cfg, tok["input_ids"], tok["attention_mask"], _pixels(img))[0])
    return (raw - IMAGEREWARD_MEAN) / IMAGEREWARD_STD


def _images() -> list[Image.Image]:
    photo = Image.fromarray(data.astronaut())
    return [photo, photo.crop((0, 0, 512, 300)), Image.fromarray(data.chelsea()), photo.resize((120, 200))]


def test_imagereward_equals_an_independent_computation(demo_settings, demo_weights):
    prompts = ["an astronaut", LONG_PROMPT, "a cat", "a tall photo of a person"]
    images = _images()
    values = get_scorer("imagereward", demo_settings).score(
        [Sample(refs=(), out=img, prompt=p) for img, p in zip(images, prompts)]
    )
    for img, prompt, value in zip(images, prompts, values):
        expected = _independent(demo_weights / "imagereward", img, prompt)
        assert value.reason is None and value.value == pytest.approx(expected, abs=1e-5)
        assert value.extras["raw"] == pytest.approx(expected * IMAGEREWARD_STD + IMAGEREWARD_MEAN, abs=1e-5)
    assert len({round(v.value, 7) for v in values}) == len(values)  # the image and the prompt both count
    params = values[0].provenance["params"]
    assert params["text_length"] == 35 and "ImageReward.score" in params["output"]
    assert values[0].provenance["model_id"].endswith("ImageReward.pt")


def test_batched_equals_one_at_a_time_and_each_pair_is_computed_once(demo_settings):
    photo, cat = _images()[0], _images()[2]
    pairs = [(photo, "an astronaut"), (cat, "an astronaut"), (photo, "a cat"), (photo, "an astronaut"), (cat, "a cat")]
    samples = [Sample(refs=(), out=img, prompt=p) for img, p in pairs]
    scorer = get_scorer("imagereward", demo_settings, ModelRegistry())
    batched = scorer.score(samples)
    backbone = scorer.backbone()
    assert backbone.forwards == 4  # 4 distinct (image, prompt) pairs
    assert batched[0].value == batched[3].value
    scorer.score(samples)
    assert backbone.forwards == 4  # rerun: from the cache
    for sample, value in zip(samples, batched):
        single = get_scorer("imagereward", demo_settings, ModelRegistry()).score([sample])[0]
        assert single.value == pytest.approx(value.value, abs=1e-6)


def test_spec_and_bad_inputs(demo_settings):
    spec = get_spec("imagereward")
    assert spec.family == "quality" and spec.needs_prompt and not spec.needs_reference and spec.higher_is_better
    assert spec.backbone_settings == ("imagereward_model",)
    scorer = get_scorer("imagereward", demo_settings)
    photo = _images()[0]
    with pytest.raises(InputError, match="imagereward needs prompt, which sample 1 lacks"):
        scorer.score([Sample(refs=(), out=photo, prompt="x"), Sample(refs=(), out=photo)])
    [lacking] = scorer.score([Sample(refs=(), out=photo, prompt="  ")], missing="nan")
    assert math.isnan(lacking.value) and "needs prompt" in lacking.reason
    with pytest.raises(InputError, match="sample 0 is a str, expected masc_ui.metrics.Sample"):
        scorer.score(["an astronaut"])
    tiny, grey = Image.new("RGB", (1, 1), (200, 10, 10)), Image.fromarray(data.camera())
    odd = scorer.score([Sample(refs=(), out=img, prompt="x") for img in (tiny, grey, photo.convert("RGBA"))])
    assert all(math.isfinite(v.value) for v in odd)
    assert odd[1].value == scorer.score([Sample(refs=(), out=grey.convert("RGB"), prompt="x")])[0].value
    with pytest.raises(InputError, match="has no parameter"):
        get_scorer("imagereward", demo_settings, fill="white")
    values = score_metrics([Sample(refs=(), out=photo, prompt="x")], "imagereward", demo_settings)["imagereward"]
    assert not math.isnan(values[0].value)


def _copy(demo_weights: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "ir"
    shutil.copytree(demo_weights / "imagereward", folder)
    return folder


@pytest.mark.parametrize(
    "change, key",
    [("extra", "blip.itm_head.weight"), ("missing", "mlp.layers.4.weight"), ("shape", "mlp.layers.6.weight")],
)
def test_strict_loading_names_the_key(demo_settings, demo_weights, tmp_path, change, key):
    folder = _copy(demo_weights, tmp_path)
    sd = torch.load(folder / "ImageReward.pt")
    if change == "extra":
        sd[key] = torch.zeros(2, 768)
    elif change == "missing":
        del sd[key]
    else:
        sd[key] = torch.zeros(3, 3)
    torch.save(sd, folder / "ImageReward.pt")
    scorer = get_scorer("imagereward", demo_settings.replace(imagereward_model=str(folder)))
    with pytest.raises(ModelUnavailableError, match=r"ImageReward checkpoint .*" + key.replace(".", r"\.")):
        scorer.score([Sample(refs=(), out=_images()[0], prompt="x")])


def test_release_layout_and_missing_files(demo_settings, demo_weights, tmp_path):
    folder = _copy(demo_weights, tmp_path)
    photo = _images()[0]
    reference = get_scorer("imagereward", demo_settings).score([Sample(refs=(), out=photo, prompt="a")])[0].value
    as_file = demo_settings.replace(imagereward_model=str(folder / "ImageReward.pt"))
    assert get_scorer("imagereward", as_file).score([Sample(refs=(), out=photo, prompt="a")])[0].value == reference
    (folder / "ImageReward.pt").rename(folder / "FS_model.pt")  # FaceScore's name is not ImageReward's release
    with pytest.raises(ModelUnavailableError, match="has no ImageReward.pt.*MASC_IMAGEREWARD_MODEL"):
        get_scorer("imagereward", demo_settings.replace(imagereward_model=str(folder))).score(
            [Sample(refs=(), out=photo, prompt="a")]
        )
    with pytest.raises(ModelUnavailableError, match="MASC_IMAGEREWARD_MODEL"):
        get_scorer("imagereward", demo_settings.replace(imagereward_model=str(tmp_path / "none"))).score(
            [Sample(refs=(), out=photo, prompt="a")]
        )
