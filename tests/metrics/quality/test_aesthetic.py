"""Aesthetic score: equal to an independent computation (OpenS2V's `get_aesscore.py` recipe written here with
transformers' `CLIPProcessor` + `CLIPVisionModelWithProjection` and the MLP as plain `F.linear` calls on the tiny
head), batched == one at a time, the CLIP shared with CLIP-I (one forward per image between them), a video = the mean
of its 32 linspace frames, the release layout and strict loading, bad inputs."""

from __future__ import annotations

import io
import math
import shutil
from pathlib import Path

import av
import numpy as np
import pytest
import torch
from PIL import Image
from skimage import data
from torch.nn import functional as F
from transformers import CLIPProcessor, CLIPVisionModelWithProjection

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.imaging import open_video
from masc_ui.metrics.registry import get_scorer, get_spec, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry
from tests.video_files import encode_video

HEAD_FILE = "sac+logos+ava1-l14-linearMSE.pth"


def _independent(weights: Path, images: list[Image.Image]) -> np.ndarray:
    """OpenS2V `AestheticScorer.__call__`: processor -> image_embeds -> / norm -> MLP (layers 0, 2, 4, 6, 7)."""
    clip = CLIPVisionModelWithProjection.from_pretrained(weights / "clip").eval()
    processor = CLIPProcessor.from_pretrained(weights / "clip")
    sd = torch.load(weights / "aesthetic" / HEAD_FILE)
    with torch.no_grad():
        embed = clip(**processor(images=images, return_tensors="pt"))[0]
        x = embed / torch.linalg.vector_norm(embed, dim=-1, keepdim=True)
        for layer in ("0", "2", "4", "6", "7"):
            x = F.linear(x, sd[f"layers.{layer}.weight"], sd[f"layers.{layer}.bias"])
    return x.squeeze(1).numpy().astype(np.float64)


def _images() -> list[Image.Image]:
    photo = Image.fromarray(data.astronaut())
    return [photo, photo.crop((0, 0, 512, 300)), Image.fromarray(data.chelsea()), Image.fromarray(data.coffee())]


def test_aesthetic_equals_an_independent_computation(demo_settings, demo_weights):
    images = _images()
    values = get_scorer("aesthetic", demo_settings).score([Sample(refs=(), out=img) for img in images])
    expected = _independent(demo_weights, images)
    np.testing.assert_allclose([v.value for v in values], expected, atol=1e-5)
    assert len({round(v.value, 6) for v in values}) == len(values)
    provenance = values[0].provenance
    assert provenance["model_id"].endswith(HEAD_FILE) and provenance["params"]["clip_model"].endswith("clip")


def test_batched_equals_one_at_a_time_and_the_clip_is_shared_with_clip_i(demo_settings):
    images = _images()
    samples = [Sample(refs=(images[0],), out=img) for img in images + images[:2]]
    models = ModelRegistry()
    values = score_metrics(samples, ["aesthetic", "clip_i"], demo_settings, models)
    clip = get_scorer("clip_i", demo_settings, models).backbone()
    assert get_scorer("aesthetic", demo_settings, models).backbone().clip is clip
    assert clip.image_forwards == 4  # 4 distinct images for both metrics (the reference is one of them)
    for sample, value in zip(samples, values["aesthetic"]):
        single = get_scorer("aesthetic", demo_settings, ModelRegistry()).score([sample])[0]
        assert single.value == pytest.approx(value.value, abs=1e-6)


def test_a_video_is_the_mean_of_its_32_linspace_frames(demo_settings, demo_weights):
    images = [img.resize((96, 64)) for img in _images()[:3]]
    encoded = encode_video(images + images[::-1], "mp4")
    value = score_metrics([Sample(refs=(), out=open_video(encoded))], ["aesthetic"], demo_settings)["aesthetic"][0]
    indices = [int(i) for i in np.linspace(0, 5, 32, dtype=int)]  # OpenS2V's sample_video_frames(num_frames=32)
    with av.open(io.BytesIO(encoded)) as container:
        frames = [Image.fromarray(f.to_ndarray(format="rgb24")) for f in container.decode(video=0)]
    per_frame = _independent(demo_weights, [frames[i] for i in indices])
    assert value.value == pytest.approx(float(per_frame.mean()), abs=1e-5)  # OpenS2V: aes_scores.mean()
    assert value.extras["frames"]["indices"] == indices
    assert value.provenance["params"]["video_frames"]["count"] == 32


def test_spec_and_bad_inputs(demo_settings):
    spec = get_spec("aesthetic")
    assert spec.family == "quality" and not spec.needs_prompt and not spec.needs_reference
    assert spec.backbone_settings == ("aesthetic_head", "aesthetic_clip_model")
    scorer = get_scorer("aesthetic", demo_settings)
    with pytest.raises(InputError, match="sample 0 is a str"):
        scorer.score(["a photo"])
    with pytest.raises(InputError, match="has no parameter"):
        get_scorer("aesthetic", demo_settings, frames=16)
    tiny, grey = Image.new("RGB", (1, 1), (200, 10, 10)), Image.fromarray(data.camera())
    odd = scorer.score([Sample(refs=(), out=img) for img in (tiny, grey, _images()[0].convert("RGBA"))])
    assert all(math.isfinite(v.value) for v in odd)


def test_release_layout_strict_loading_and_the_clip_width(demo_settings, demo_weights, tmp_path):
    folder = tmp_path / "aes"
    shutil.copytree(demo_weights / "aesthetic", folder)
    sd = torch.load(folder / HEAD_FILE)
    assert sorted(sd) == sorted(f"layers.{i}.{p}" for i in (0, 2, 4, 6, 7) for p in ("weight", "bias"))
    assert [tuple(sd[f"layers.{i}.weight"].shape)[0] for i in (0, 2, 4, 6, 7)] == [1024, 128, 64, 16, 1]
    photo = _images()[0]

    def score(**changes):
        return get_scorer("aesthetic", demo_settings.replace(**changes)).score([Sample(refs=(), out=photo)])[0]

    reference = get_scorer("aesthetic", demo_settings).score([Sample(refs=(), out=photo)])[0].value
    assert score(aesthetic_head=str(folder)).value == reference
    broken = dict(sd)
    del broken["layers.6.bias"]
    torch.save(broken, folder / HEAD_FILE)
    with pytest.raises(ModelUnavailableError, match=r"MASC_AESTHETIC_HEAD.*layers\.6\.bias"):
        score(aesthetic_head=str(folder))
    torch.save(
        {"layers.0.weight": torch.zeros(1024, 768), **{k: v for k, v in sd.items() if k != "layers.0.weight"}},
        folder / HEAD_FILE,
    )
    with pytest.raises(ModelUnavailableError, match="reads 768-d CLIP embeddings.*gives 16-d.*clip-vit-large-patch14"):
        score(aesthetic_head=str(folder))
    with pytest.raises(ModelUnavailableError, match="MASC_AESTHETIC_HEAD"):
        score(aesthetic_head=str(tmp_path / "none"))
