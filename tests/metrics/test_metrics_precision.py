"""Every metric under the precision policy: bfloat16 within the documented tolerance (docs/models.md) of float32 on
the tiny demo checkpoints, the dtype in every value's provenance (so the two never mix), `auto` following the
hardware report, and the MaSC engine's CPU forward cap keeping batched == one-at-a-time."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from PIL import Image, ImageOps
from skimage import data

from masc_ui.imaging import open_image, open_video
from masc_ui.metrics import MaSC
from masc_ui.metrics.masc import encoding as masc_encoding
from masc_ui.metrics.registry import get_scorer, get_spec, list_metrics, metric_names, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.metrics.video.sample import VideoSample
from masc_ui.models import precision
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.models.precision import HardwareReport
from tests.video_files import encode_video, synthetic_frames

COSINE_TOLERANCE = 1e-2
"""docs/models.md ("Precision policy"): bfloat16 stays within 0.01 of float32 in cosine units on the measured
checkpoints."""
SCALE = {"clipscore": 2.5, "pickscore": 100.0, "hpsv21": 100.0}
"""Scores that scale a cosine (CLIPScore x 2.5, PickScore x its logit scale, HPSv2.1 x 100) scale the tolerance with
it."""
PROBABILITY_TOLERANCE = 1e-2
LOG_PROBABILITY_TOLERANCE = 0.1
"""Probabilities (VQAScore, ITMScore): |dp| <= 0.01 and |d ln p| <= 0.1 (the error of the score's log, i.e. of the
logit gap it comes from; it compares the tiny P(Yes) of random checkpoints too)."""
HEAD_RELATIVE, HEAD_ABSOLUTE = 0.05, 1e-3
"""Unbounded head outputs (FaceScore, ArtScore, ImageReward, aesthetic): |d| <= 0.05 |float32 value| + 0.001 (in the
head's own units)."""
KINDS = {
    "cosine": (
        "cp",
        "pf",
        "clip_i",
        "clip_i_seg",
        "clip_t",
        "dino_i",
        "dino_i_seg",
        "dinov2_i",
        "dinov2_i_seg",
        "dreamsim",
        "dreamsim_seg",
        "facesim",
        "facesim_arc",
        "gmescore",
        "nexusscore",
    ),
    "scaled cosine": ("clipscore", "pickscore", "hpsv21"),
    "probability": ("vqascore", "itmscore"),
    "unbounded head": ("facescore", "artscore", "imagereward", "aesthetic"),
}
FLOAT32_ONLY = ("facesim_arc",)
"""Metrics whose model is an ONNX graph run by onnxruntime in float32 whatever the dtype setting (provenance says so)."""
NO_LOCAL_MODEL = ("naturalscore", "dbpp_cp", "dbpp_pf", "motion", "opens2v_total")
"""Metrics that run no network of their own in float32 or bfloat16 here: NaturalScore and the DreamBench++ judge ask
a remote judge by default (provenance dtype None; the local judge's answer is a parsed integer 0-4, not a value a
dtype moves by a tolerance), Motion is optical flow on pixels (no network), and the OpenS2V Total is a weighted sum
of the others."""
KIND = {name: kind for kind, names in KINDS.items() for name in names}


def within_tolerance(name: str, exact: float, fast: float) -> bool:
    """Whether bfloat16 value `fast` is within the documented tolerance of float32 value `exact` for metric `name`."""
    kind = KIND[name]
    if kind == "probability":
        return (
            abs(exact - fast) <= PROBABILITY_TOLERANCE
            and abs(math.log(exact) - math.log(fast)) <= LOG_PROBABILITY_TOLERANCE
        )
    if kind == "unbounded head":
        return abs(exact - fast) <= HEAD_RELATIVE * abs(exact) + HEAD_ABSOLUTE
    return abs(exact - fast) <= COSINE_TOLERANCE * SCALE.get(name, 1.0)


def _image(seed: int, w: int = 96, h: int = 80) -> Image.Image:
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (h // 8, w // 8, 3), dtype=np.uint8)
    return Image.fromarray(coarse).resize((w, h), Image.BILINEAR)


def _mask(h: int = 80, w: int = 96) -> np.ndarray:
    m = np.zeros((h, w), dtype=np.uint8)
    m[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4] = 255
    return m


def _samples() -> list[Sample]:
    ref = _image(100)
    return [
        Sample(
            refs=(ref,),
            out=_image(k),
            prompt=f"a photo of a kitten {k} on a sunny beach",
            subject="kitten",
            ref_masks=(_mask(),),
            out_mask=_mask(),
        )
        for k in range(4)
    ]


def _face_samples() -> list[Sample]:
    """Views of `skimage.data.astronaut()` (224-300 px), each with one face the packaged MTCNN detector finds with
    both eyes, so that every image metric, the face metrics included, scores every sample."""
    photo = Image.fromarray(data.astronaut())
    ref = photo.crop((100, 20, 400, 320))
    outs = [ref.rotate(8), ImageOps.mirror(ref), photo.crop((120, 30, 380, 290)), ref.resize((224, 224))]
    return [
        Sample(
            refs=(ref,),
            out=out,
            prompt=f"a photo of an astronaut {k} in a white space suit",
            subject="astronaut",
            ref_masks=(_mask(*ref.size[::-1]),),
            out_mask=_mask(*out.size[::-1]),
        )
        for k, out in enumerate(outs)
    ]


def test_every_registered_metric_has_a_precision_tolerance():
    assert len(KIND) == sum(len(names) for names in KINDS.values())  # no metric in two kinds
    assert set(KIND) | set(NO_LOCAL_MODEL) == set(metric_names(None))
    assert not set(KIND) & set(NO_LOCAL_MODEL)


IMAGE_CASES = [
    pytest.param(spec.name, {}, id=spec.name) for spec in list_metrics() if spec.name not in NO_LOCAL_MODEL
] + [pytest.param("vqascore", {"vqa_model": "qwen2.5-vl"}, id="vqascore-chat-vlm")]


@pytest.mark.parametrize("name, models", IMAGE_CASES)
def test_every_image_metric_in_bfloat16_is_within_tolerance_of_float32(demo_settings, name, models):
    samples = _face_samples()
    settings = demo_settings.replace(**{k: str(demo_settings.demo_weights_dir / v) for k, v in models.items()})
    exact = score_metrics(samples, name, settings, ModelRegistry())[name]
    fast = score_metrics(samples, name, settings.replace(dtype="bfloat16"), ModelRegistry())[name]
    if name in FLOAT32_ONLY:
        assert [a.value for a in exact] == [b.value for b in fast] and not any(a.is_nan for a in exact), name
        assert {v.provenance["dtype"] for v in exact + fast} == {"float32"}, name
        return
    for a, b in zip(exact, fast):
        assert not math.isnan(a.value) and not math.isnan(b.value), (name, a.reason, b.reason)
        assert within_tolerance(name, a.value, b.value), (name, a.value, b.value)
        assert a.provenance["dtype"] == "float32" and b.provenance["dtype"] == "bfloat16", name
        assert "float32_parts" not in a.provenance["params"]
        ran = (a.extras["cos"], b.extras["cos"]) if name == "clipscore" else (a.value, b.value)
        at_bound = a.value in get_spec(name).range  # e.g. DreamSim's 0 for the same image, clipped in both dtypes
        assert at_bound or ran[0] != ran[1], name  # bfloat16 really ran


def test_score_heads_stay_float32_in_bfloat16(demo_settings):
    fast = demo_settings.replace(dtype="bfloat16")
    heads = {
        "facescore": ["head"],
        "artscore": ["fc"],
        "itmscore": ["itm_head"],
        "imagereward": ["head"],
        "aesthetic": ["head"],
    }
    for name, parts in heads.items():
        value = get_scorer(name, fast).score(_face_samples()[:1])[0]
        assert value.provenance["params"]["float32_parts"] == parts, name


def test_video_metrics_in_bfloat16_are_within_tolerance_of_float32(demo_settings):
    """GmeScore and NexusScore on a small clip (NexusScore's cuts lowered so that its detections are kept: the same
    detections in both precisions, their similarities within the cosine tolerance)."""
    frames = synthetic_frames(12)
    video = open_video(encode_video(frames, "mp4"))
    ref = open_image(Image.fromarray(frames[0][16:40, 0:40]).resize((48, 48)))
    sample = VideoSample(video=video, refs=(ref,), prompt="a green square moving right", class_labels=("square",))
    for name, params in (("gmescore", {}), ("nexusscore", {"conf_threshold": 0.5, "text_threshold": -1.0})):
        exact, fast = (
            get_scorer(name, demo_settings.replace(dtype=dtype), ModelRegistry(), **params).score([sample])[0]
            for dtype in ("float32", "bfloat16")
        )
        assert within_tolerance(name, exact.value, fast.value), (name, exact.value, fast.value)
        assert exact.value != fast.value, name  # bfloat16 really ran
        assert (exact.provenance["dtype"], fast.provenance["dtype"]) == ("float32", "bfloat16")
        if name == "nexusscore":
            assert exact.extras["n_kept"] > 0
            for key in ("n_kept", "n_frames_with_detection"):
                assert exact.extras[key] == fast.extras[key], key
            assert fast.provenance["params"]["detector_float32_parts"] == ["box_head", "class_head", "objectness_head"]


@pytest.mark.parametrize("checkpoint, patches", [("siglip2-naflex", 256), ("siglip2-fixed", None)])
def test_masc_bfloat16_within_tolerance(demo_weights, checkpoint, patches):
    kwargs = {"naflex_max_patches": patches} if patches else {}
    exact = MaSC(str(demo_weights / checkpoint), device="cpu", dtype="float32", **kwargs)
    fast = MaSC(str(demo_weights / checkpoint), device="cpu", dtype="bfloat16", **kwargs)
    assert fast.backbone.dtype == torch.bfloat16 and fast.provenance["dtype"] == "bfloat16"
    for a, b in zip(exact.score_many(_samples()), fast.score_many(_samples())):
        assert abs(a.cp - b.cp) <= COSINE_TOLERANCE and abs(a.pf - b.pf) <= COSINE_TOLERANCE
        assert (a.cp, a.pf) != (b.cp, b.pf)


def test_bfloat16_and_float32_engines_never_share(demo_weights):
    models = ModelRegistry()
    path = str(demo_weights / "siglip2-naflex")
    exact = MaSC(path, device="cpu", dtype="float32", models=models)
    fast = MaSC(path, device="cpu", dtype="bfloat16", models=models)
    assert exact.model is not fast.model
    assert exact.provenance != fast.provenance  # the storage key differs by the dtype


def test_auto_follows_the_capability_report(demo_settings, monkeypatch):
    from masc_ui.metrics.masc.factory import build_masc

    monkeypatch.setattr(precision, "hardware_report", lambda device: HardwareReport("cpu", cpu_amx=True))
    assert build_masc(demo_settings.replace(dtype="auto")).backbone.dtype == torch.bfloat16
    monkeypatch.setattr(precision, "hardware_report", lambda device: HardwareReport("cpu", cpu_capability="AVX2"))
    assert build_masc(demo_settings.replace(dtype="auto")).backbone.dtype == torch.float32
    value = score_metrics(_samples()[:1], "dino_i", demo_settings.replace(dtype="auto"))["dino_i"][0]
    assert value.provenance["dtype"] == "float32"


def test_score_prints_the_precision_in_use(demo_weights, tmp_path, capsys, monkeypatch):
    from masc_ui.cli import main

    monkeypatch.delenv("MASC_DTYPE", raising=False)
    monkeypatch.setattr(precision, "hardware_report", lambda device: HardwareReport("cpu", cpu_avx512_bf16=True))
    ref, out, mask = tmp_path / "ref.png", tmp_path / "out.png", tmp_path / "mask.png"
    _image(1).save(ref)
    _image(2).save(out)
    Image.fromarray(_mask()).save(mask)
    assert (
        main(
            [
                "score",
                "--ref",
                str(ref),
                "--ref-mask",
                str(mask),
                "--out",
                str(out),
                "--out-mask",
                str(mask),
                "--prompt",
                "a kitten",
                "--profile",
                "demo",
                "--demo-weights-dir",
                str(demo_weights),
                "--device",
                "cpu",
                "--naflex-max-patches",
                "64",
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    assert "provenance.dtype\tbfloat16" in printed.out
    assert "precision: bfloat16 (auto: the CPU has AVX-512-BF16)" in printed.err
    assert (
        main(
            [
                "score",
                "--ref",
                str(ref),
                "--out",
                str(out),
                "--prompt",
                "a kitten",
                "--metrics",
                "clip_t,dino_i",
                "--profile",
                "demo",
                "--demo-weights-dir",
                str(demo_weights),
                "--device",
                "cpu",
                "--json",
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    record = json.loads(printed.out)  # stdout stays JSON: the values by metric, the profile and the notice
    assert {record[m]["provenance"]["dtype"] for m in ("clip_t", "dino_i")} == {"bfloat16"}
    assert "precision: bfloat16 (auto" in printed.err
    assert (
        main(
            [
                "score",
                "--ref",
                str(ref),
                "--out",
                str(out),
                "--prompt",
                "a kitten",
                "--metrics",
                "clip_t,dino_i",
                "--profile",
                "demo",
                "--demo-weights-dir",
                str(demo_weights),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("\t")[-1] for line in lines] == ["bfloat16", "bfloat16"]


def test_cpu_forwards_are_capped_and_still_equal_one_at_a_time(demo_weights, monkeypatch):
    masc = MaSC(str(demo_weights / "siglip2-naflex"), device="cpu", naflex_max_patches=64)
    sizes = []
    hook = masc.model.vision_model.register_forward_pre_hook(
        lambda module, args, kwargs: sizes.append(tuple(kwargs["pixel_values"].shape[:2])), with_kwargs=True
    )
    monkeypatch.setattr(masc_encoding, "CPU_FORWARD_TOKENS", 128)  # two 64-patch images per forward
    samples = _samples()
    batched = masc.score_many(samples, batch_size=8)
    hook.remove()
    assert sizes and all(b * n <= 128 for b, n in sizes) and sum(b for b, _ in sizes) == 5  # 1 ref + 4 outputs
    for sample, got in zip(samples, batched):
        masc.clear_caches()
        alone = masc.score_many([sample], batch_size=1)[0]
        assert abs(got.cp - alone.cp) <= 1e-5 and abs(got.pf - alone.pf) <= 1e-5


def test_pickscore_keeps_its_float32_temperature_in_bfloat16(demo_settings):
    """exp(logit_scale) is read before the cast: bfloat16 would store log(100) as 4.59375, a scale of 98.9."""
    from masc_ui.metrics.clip.backbone import load_clip_backbone
    from masc_ui.models.profiles import model_ids

    ids = model_ids(demo_settings)
    fast = load_clip_backbone(
        ids.pickscore, ids.pickscore_processor, demo_settings.replace(dtype="bfloat16"), what="PickScore"
    )
    assert fast.model.logit_scale.dtype == torch.bfloat16
    assert fast.logit_scale == pytest.approx(100.0, rel=1e-6)
    assert float(fast.model.logit_scale.float().exp()) == pytest.approx(98.87, abs=0.01)
