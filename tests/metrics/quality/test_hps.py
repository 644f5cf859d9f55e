"""HPSv2.1: equal to an independent computation (a functional OpenCLIP ViT + text transformer forward written here from
the checkpoint's keys with plain torch calls, hpsv2 1.2.0's `preprocess_val` written here from its source, OpenCLIP's
tokenizer), batched == one at a time, an image or prompt shared by several samples encoded once, the release layout
(`{"state_dict": ...}`, built-in ViT-H-14 config unless `open_clip_config.json`), strict loading, bad inputs."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import open_clip
import pytest
import torch
from PIL import Image
from skimage import data
from torch.nn import functional as F
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as TF

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.metrics.registry import get_scorer, get_spec
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.models.nets.hpsv2 import model_config

OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)


def _preprocess_val(img: Image.Image) -> torch.Tensor:
    """hpsv2 1.2.0 `image_transform(224, is_train=False, resize_longest_max=True)`: RGB, ToTensor, ResizeMaxSize(224)
    (tensor resize, bicubic; pad 0 split w//2, h//2), MaskAwareNormalize (3 channels: Normalize)."""
    x = TF.to_tensor(img.convert("RGB"))
    height, width = x.shape[1:]
    scale = 224 / float(max(height, width))
    new_size = tuple(round(dim * scale) for dim in (height, width))
    x = TF.resize(x, new_size, InterpolationMode.BICUBIC)
    pad_h, pad_w = 224 - new_size[0], 224 - new_size[1]
    x = TF.pad(x, padding=[pad_w // 2, pad_h // 2, pad_w - pad_w // 2, pad_h - pad_h // 2], fill=0)
    return TF.normalize(x, OPENAI_MEAN, OPENAI_STD)


def _block(x, sd, p, heads, mask=None):
    d = x.shape[-1]
    h = F.layer_norm(x, (d,), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"])
    q, k, v = F.linear(h, sd[p + "attn.in_proj_weight"], sd[p + "attn.in_proj_bias"]).chunk(3, -1)
    b, n, _ = q.shape
    split = lambda t: t.reshape(b, n, heads, d // heads).transpose(1, 2)  # noqa: E731
    scores = split(q) @ split(k).transpose(-1, -2) / math.sqrt(d // heads)
    if mask is not None:
        scores = scores + mask
    a = (scores.softmax(-1) @ split(v)).transpose(1, 2).reshape(b, n, d)
    x = x + F.linear(a, sd[p + "attn.out_proj.weight"], sd[p + "attn.out_proj.bias"])
    h = F.layer_norm(x, (d,), sd[p + "ln_2.weight"], sd[p + "ln_2.bias"])
    h = F.linear(F.gelu(F.linear(h, sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"])), sd[p + "mlp.c_proj.weight"])
    return x + h + sd[p + "mlp.c_proj.bias"]


def _layers(sd, prefix):
    return sorted({int(k[len(prefix) :].split(".")[0]) for k in sd if k.startswith(prefix)})


def _image_features(sd, cfg, pixels):
    v = "visual."
    w = sd[v + "conv1.weight"]
    x = F.conv2d(pixels, w, stride=w.shape[-1]).flatten(2).transpose(1, 2)
    x = torch.cat([sd[v + "class_embedding"].expand(len(x), 1, -1), x], 1) + sd[v + "positional_embedding"]
    d = x.shape[-1]
    x = F.layer_norm(x, (d,), sd[v + "ln_pre.weight"], sd[v + "ln_pre.bias"])
    heads = d // cfg["vision_cfg"]["head_width"]
    for i in _layers(sd, v + "transformer.resblocks."):
        x = _block(x, sd, f"{v}transformer.resblocks.{i}.", heads)
    x = F.layer_norm(x[:, 0], (d,), sd[v + "ln_post.weight"], sd[v + "ln_post.bias"])
    return x @ sd[v + "proj"]


def _text_features(sd, cfg, tokens):
    x = sd["token_embedding.weight"][tokens] + sd["positional_embedding"]
    n = tokens.shape[1]
    causal = torch.full((n, n), float("-inf")).triu(1)
    for i in _layers(sd, "transformer.resblocks."):
        x = _block(x, sd, f"transformer.resblocks.{i}.", cfg["text_cfg"]["heads"], causal)
    x = F.layer_norm(x, (x.shape[-1],), sd["ln_final.weight"], sd["ln_final.bias"])
    return x[torch.arange(len(x)), tokens.argmax(-1)] @ sd["text_projection"]


def _independent(folder: Path, img: Image.Image, prompt: str) -> float:
    sd = {k: v.float() for k, v in torch.load(folder / "HPS_v2.1_compressed.pt")["state_dict"].items()}
    cfg = json.loads((folder / "open_clip_config.json").read_text())["model_cfg"]
    with torch.no_grad():
        image = _image_features(sd, cfg, _preprocess_val(img)[None])
        text = _text_features(sd, cfg, open_clip.get_tokenizer("ViT-H-14")([prompt]))
    image, text = F.normalize(image, dim=-1), F.normalize(text, dim=-1)
    return float((image @ text.T)[0, 0] * 100)


def _images() -> list[Image.Image]:
    photo = Image.fromarray(data.astronaut())
    return [photo, photo.crop((0, 0, 512, 300)), Image.fromarray(data.chelsea()), photo.resize((120, 200))]


def test_hps_equals_an_independent_computation(demo_settings, demo_weights):
    images = _images()
    prompts = ["an astronaut", "a wide photo of an astronaut", "a cat", "a tall photo of a person " * 10]
    values = get_scorer("hpsv21", demo_settings).score(
        [Sample(refs=(), out=img, prompt=p) for img, p in zip(images, prompts)]
    )
    for img, prompt, value in zip(images, prompts, values):
        expected = _independent(demo_weights / "hpsv2", img, prompt)
        assert value.reason is None and value.value == pytest.approx(expected, abs=1e-4)  # 100 x a cosine
        assert value.extras["cos"] == pytest.approx(expected / 100, abs=1e-6)
    assert "100 x cos" in values[0].provenance["params"]["output"]


def test_batched_equals_one_at_a_time_and_shared_inputs_are_encoded_once(demo_settings):
    photo, cat = _images()[0], _images()[2]
    pairs = [(photo, "an astronaut"), (cat, "an astronaut"), (photo, "a cat"), (photo, "an astronaut")]
    samples = [Sample(refs=(), out=img, prompt=p) for img, p in pairs]
    scorer = get_scorer("hpsv21", demo_settings, ModelRegistry())
    batched = scorer.score(samples)
    backbone = scorer.backbone()
    assert (backbone.image_forwards, backbone.text_forwards) == (2, 2)  # 2 distinct images, 2 distinct prompts
    scorer.score(samples)
    assert (backbone.image_forwards, backbone.text_forwards) == (2, 2)
    for sample, value in zip(samples, batched):
        single = get_scorer("hpsv21", demo_settings, ModelRegistry()).score([sample])[0]
        assert single.value == pytest.approx(value.value, abs=1e-4)


def test_the_preprocessing_pads_an_image_whose_long_side_is_already_224(demo_settings):
    """hpsv2 skips resize and pad at long side 224 (a 224 x 100 image then does not fit its ViT); it is padded here."""
    from masc_ui.metrics.quality.hps import hps_pixels

    narrow = Image.fromarray(data.astronaut()).resize((100, 224))
    x = hps_pixels(narrow)
    assert x.shape == (3, 224, 224)
    black = torch.tensor([-m / s for m, s in zip(OPENAI_MEAN, OPENAI_STD)])[:, None]
    torch.testing.assert_close(x[:, :, :62].reshape(3, -1), black.expand(3, 62 * 224))
    value = get_scorer("hpsv21", demo_settings).score([Sample(refs=(), out=narrow, prompt="x")])[0]
    assert math.isfinite(value.value)


def test_spec_and_bad_inputs(demo_settings):
    spec = get_spec("hpsv21")
    assert spec.range == (-100.0, 100.0) and spec.needs_prompt and spec.family == "quality"
    scorer = get_scorer("hpsv21", demo_settings)
    photo = _images()[0]
    with pytest.raises(InputError, match="hpsv21 needs prompt, which sample 0 lacks"):
        scorer.score([Sample(refs=(), out=photo)])
    with pytest.raises(InputError, match="sample 0 is a str"):
        scorer.score(["a photo"])
    tiny, grey = Image.new("RGB", (1, 1), (200, 10, 10)), Image.fromarray(data.camera())
    odd = scorer.score([Sample(refs=(), out=img, prompt="x") for img in (tiny, grey, photo.convert("RGBA"))])
    assert all(spec.in_range(v.value) and math.isfinite(v.value) for v in odd)


def _copy(demo_weights: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "hps"
    shutil.copytree(demo_weights / "hpsv2", folder)
    return folder


def test_release_layout_strict_loading_and_errors(demo_settings, demo_weights, tmp_path):
    folder = _copy(demo_weights, tmp_path)
    photo = _images()[0]
    checkpoint = torch.load(folder / "HPS_v2.1_compressed.pt")
    assert set(checkpoint) == {"state_dict"}
    assert model_config(folder / "HPS_v2.1_compressed.pt", what="t")["embed_dim"] == 16
    reference = get_scorer("hpsv21", demo_settings).score([Sample(refs=(), out=photo, prompt="a")])[0].value
    as_file = demo_settings.replace(hps_model=str(folder / "HPS_v2.1_compressed.pt"))
    assert get_scorer("hpsv21", as_file).score([Sample(refs=(), out=photo, prompt="a")])[0].value == reference

    def fails_with(pattern: str) -> None:
        with pytest.raises(ModelUnavailableError, match=pattern):
            get_scorer("hpsv21", demo_settings.replace(hps_model=str(folder))).score(
                [Sample(refs=(), out=photo, prompt="a")]
            )

    broken = dict(checkpoint["state_dict"])
    del broken["visual.proj"]
    torch.save({"state_dict": broken}, folder / "HPS_v2.1_compressed.pt")
    fails_with(r"MASC_HPS_MODEL.*visual\.proj")
    torch.save(checkpoint, folder / "HPS_v2.1_compressed.pt")
    config = json.loads((folder / "open_clip_config.json").read_text())
    config["model_cfg"]["text_cfg"]["width"] = 32  # sizes that do not fit the weights
    (folder / "open_clip_config.json").write_text(json.dumps(config))
    fails_with(r"does not load into OpenCLIP ViT-H-14 \(sizes of open_clip_config.json\)")
    (folder / "open_clip_config.json").unlink()  # no config: the built-in ViT-H-14 (not built here: 1B parameters)
    assert model_config(folder / "HPS_v2.1_compressed.pt", what="t") == {}
    (folder / "open_clip_config.json").write_text('{"model_cfg": {"embed_dim": 16}}')
    fails_with("no model_cfg with embed_dim, vision_cfg, text_cfg")
    with pytest.raises(ModelUnavailableError, match="MASC_HPS_MODEL"):
        get_scorer("hpsv21", demo_settings.replace(hps_model=str(tmp_path / "none"))).score(
            [Sample(refs=(), out=photo, prompt="a")]
        )
