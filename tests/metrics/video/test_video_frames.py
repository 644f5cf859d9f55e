"""Image metrics on a video output, frame by frame (`masc_ui.metrics.video.frames`): the video's value equals the
mean of the sampled frames scored as images one by one (frames decoded here with PyAV directly, scored through a
separate model registry so that no cache is shared), per-frame values and the sampling in extras and provenance,
references encoded once, frames without a value, missing inputs, mixed image/video batches, video FaceSim."""

from __future__ import annotations

import io
import math

import av
import numpy as np
import pytest
from PIL import Image
from skimage import data as skdata

from masc_ui.errors import InputError
from masc_ui.imaging import open_image, open_video
from masc_ui.metrics.registry import score_metrics, score_video_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.metrics.video.frame_masks import FrameMasks
from masc_ui.metrics.video.frames import as_video_sample
from masc_ui.models.loaded_models import ModelRegistry
from tests.video_files import dreambooth_frames, encode_video, synthetic_frames

METRICS = ["cp", "pf", "clip_i", "clip_i_seg", "clip_t", "dino_i"]


def decoded(data: bytes, indices: list[int]) -> list[np.ndarray]:
    """The frames at `indices`, decoded here with PyAV (RGB, FFmpeg's conversion)."""
    with av.open(io.BytesIO(data)) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    return [frames[i] for i in indices]


def box_mask(height: int, width: int) -> np.ndarray:
    mask = np.zeros((height, width), bool)
    mask[height // 4 : 3 * height // 4, width // 5 : 3 * width // 5] = True
    return mask


@pytest.fixture(params=["synthetic-mp4", "dreambooth-webm"])
def clip(request, shared_data_or_none):
    if request.param == "synthetic-mp4":
        frames = synthetic_frames(11, 96, 64)
        return encode_video(frames, "mp4"), Image.fromarray(frames[0]), "a green square moving right", "square"
    if shared_data_or_none is None:
        pytest.skip("shared DreamBooth photos not found (../shared/data)")
    photos = dreambooth_frames(shared_data_or_none, "cat", (128, 96))[:5]
    return encode_video(photos * 2, "webm"), photos[0], "a photo of a cat on a sofa", "cat"


@pytest.fixture()
def shared_data_or_none(request):
    try:
        return request.getfixturevalue("shared_data")
    except pytest.skip.Exception:
        return None


def test_video_value_is_the_mean_of_its_frames_scored_one_by_one(clip, demo_settings):
    data, ref_pixels, prompt, subject = clip
    settings = demo_settings.replace(video_frames=6)
    video = open_video(data, name="clip")
    ref = open_image(ref_pixels, name="reference")
    w, h = video.size
    ref_mask, out_mask = box_mask(ref.size[1], ref.size[0]), box_mask(h, w)
    sample = Sample(
        refs=(ref,),
        out=video,
        prompt=prompt,
        subject=subject,
        ref_masks=(ref_mask,),
        out_mask=FrameMasks.static(out_mask, 3),
    )
    values = score_metrics([sample], METRICS, settings, ModelRegistry())

    indices = [int(i) for i in np.linspace(0, video.frame_count - 1, 6, dtype=int)]
    alone = ModelRegistry()
    for name in METRICS:
        per_frame = []
        for arr in decoded(data, indices):
            frame = Sample(
                refs=(ref_pixels,),
                out=Image.fromarray(arr),
                prompt=prompt,
                subject=subject,
                ref_masks=(ref_mask,),
                out_mask=out_mask,
            )
            per_frame.append(score_metrics([frame], [name], settings, alone)[name][0].value)
        value = values[name][0]
        assert value.value == pytest.approx(float(np.mean(per_frame)), abs=1e-5), name
        assert value.extras["per_frame"] == pytest.approx(per_frame, abs=1e-5), name
        sampling = {"rule": "linspace", "count": 6, "frame_count": video.frame_count, "indices": indices}
        assert value.extras["frames"] == sampling and value.extras["n_frames_with_value"] == 6
        params = value.provenance["params"]
        assert params["video_frames"] == sampling and "mean over the sampled frames" in params["video_aggregate"]
        assert ("out_mask_frames" in params) == (name in ("pf", "clip_i_seg")), name
    assert values["pf"][0].provenance["params"]["out_mask_frames"]["method"] == "static"


def test_reference_encoded_once_and_frames_go_through_each_backbone_together(demo_settings):
    settings = demo_settings.replace(video_frames=6)
    frames = synthetic_frames(10)
    ref = open_image(frames[0], name="reference")
    videos = [open_video(encode_video(frames, "mp4")), open_video(encode_video(frames[::-1], "mp4"))]
    mask = box_mask(64, 96)
    samples = [
        Sample(refs=(ref,), out=v, prompt="a green square", subject="square", ref_masks=(mask,), out_mask=mask)
        for v in videos
    ]
    models = ModelRegistry()
    engine = __import__("masc_ui.metrics.registry", fromlist=["get_scorer"]).get_scorer("cp", settings, models).engine()
    batches: list[int] = []
    engine.backbone.model.vision_model.register_forward_hook(
        lambda module, args, kwargs, out: batches.append(int(kwargs["pixel_values"].shape[0])), with_kwargs=True
    )
    texts: list[int] = []
    engine.backbone.model.text_model.register_forward_hook(
        lambda module, args, kwargs, out: texts.append(int(kwargs["input_ids"].shape[0])), with_kwargs=True
    )
    values = score_metrics(samples, ["cp", "pf", "clip_i", "clip_t", "dino_i"], settings, models)

    distinct = 6  # linspace(0, 9, 6) = 0, 1, 3, 5, 7, 9: no repeats; the second video's frames are other frames
    assert all(math.isfinite(v.value) for vs in values.values() for v in vs)
    assert sum(batches) == 1 + 2 * distinct and max(batches) > 1  # the reference once, frames in batches
    assert sum(texts) == 1  # PF's stripped prompt once for both videos
    backbones = {
        key[0]: models.get(key, None) for key in models.loaded() if key[0] in ("clip-backbone", "dino-backbone")
    }
    assert backbones["clip-backbone"].image_forwards == 1 + 2 * distinct
    assert backbones["clip-backbone"].text_forwards == 1
    assert backbones["dino-backbone"].image_forwards == 1 + 2 * distinct


def test_short_video_repeats_frames_as_the_sampler_does(demo_settings):
    settings = demo_settings.replace(video_frames=7)
    video = open_video(encode_video(synthetic_frames(4), "mp4"))
    ref = open_image(synthetic_frames(1)[0])
    value = score_metrics([Sample(refs=(ref,), out=video)], ["clip_i"], settings, ModelRegistry())["clip_i"][0]
    indices = [int(i) for i in np.linspace(0, 3, 7, dtype=int)]
    assert value.extras["frames"]["indices"] == indices == [0, 0, 1, 1, 2, 2, 3]
    by_index = dict(zip(indices, value.extras["per_frame"]))
    assert value.extras["per_frame"] == [by_index[i] for i in indices]
    assert value.value == pytest.approx(float(np.mean([by_index[i] for i in indices])), abs=1e-9)


def test_frames_without_a_value_are_left_out_with_their_reason(demo_settings):
    settings = demo_settings.replace(video_frames=4)
    video = open_video(encode_video(synthetic_frames(4), "mp4"))
    ref = open_image(synthetic_frames(1)[0])
    full, empty = box_mask(64, 96), np.zeros((64, 96), bool)
    masks = FrameMasks.per_frame(
        {0: full, 1: empty, 2: full, 3: empty}, "text", {"model_id": "sam3-test", "threshold": 0.5}
    )
    sample = Sample(refs=(ref,), out=video, prompt="a square", subject="square", out_mask=masks)
    value = score_metrics([sample], ["clip_i_seg"], settings, ModelRegistry())["clip_i_seg"][0]
    assert value.extras["per_frame"][1] is None and value.extras["per_frame"][3] is None
    assert value.extras["n_frames_with_value"] == 2 and set(value.extras["frame_reasons"]) == {"1", "3"}
    assert value.value == pytest.approx(np.mean([value.extras["per_frame"][0], value.extras["per_frame"][2]]))
    assert value.provenance["params"]["out_mask_frames"] == {
        "method": "text",
        "model_id": "sam3-test",
        "threshold": 0.5,
    }
    nothing = FrameMasks.per_frame({i: empty for i in range(4)}, "text", {"model_id": "m", "threshold": 0.5})
    none = score_metrics([Sample(refs=(ref,), out=video, out_mask=nothing)], ["clip_i_seg"], settings, ModelRegistry())[
        "clip_i_seg"
    ][0]
    assert math.isnan(none.value) and none.reason.startswith("no sampled frame has a value (")


def test_missing_inputs_raise_or_give_nan_naming_the_video_sample(demo_settings):
    settings = demo_settings.replace(video_frames=3)
    video = open_video(encode_video(synthetic_frames(4), "mp4"))
    ref = open_image(synthetic_frames(1)[0])
    image = Sample(refs=(ref,), out=ref, prompt="a square", out_mask=box_mask(64, 96))
    lacking = Sample(refs=(ref,), out=video, prompt="a square")
    models = ModelRegistry()
    with pytest.raises(InputError, match="pf needs out_mask, which sample 1 lacks"):
        score_metrics([image, lacking], ["pf"], settings, models)
    values = score_metrics([image, lacking], ["pf", "clip_i"], settings, models, missing="nan")
    assert math.isfinite(values["pf"][0].value) and values["pf"][1].reason == "pf needs out_mask, which sample 1 lacks"
    assert values["pf"][1].provenance["params"]["video_frames"]["indices"] == [0, 1, 3]
    alone = score_metrics([image], ["clip_i"], settings, ModelRegistry())["clip_i"][0]
    assert values["clip_i"][0].value == pytest.approx(alone.value, abs=1e-6)  # the image sample as if alone
    assert "video_frames" not in values["clip_i"][0].provenance["params"]


def test_all_means_the_video_metrics_too_and_video_scorers_match_their_own_path(demo_settings):
    settings = demo_settings.replace(video_frames=2)
    video = open_video(encode_video(synthetic_frames(5), "mp4"))
    ref = open_image(synthetic_frames(1)[0])
    sample = Sample(refs=(ref,), out=video, prompt="a green square", subject="square")
    models = ModelRegistry()
    values = score_metrics([sample], ["gmescore", "nexusscore"], settings, models)
    direct = score_video_metrics([as_video_sample(sample)], "gmescore,nexusscore", settings, ModelRegistry())
    for name in ("gmescore", "nexusscore"):
        assert values[name][0].value == pytest.approx(direct[name][0].value, abs=1e-6)
        assert values[name][0].provenance["params"]["video_frames"]["count"] == 32
    assert values["nexusscore"][0].extras["class_labels"] == ["square"]  # the subject's name for every reference
    labelled = Sample(refs=(ref,), out=video, prompt="x", subject="square", ref_labels=("box",))
    assert as_video_sample(labelled).class_labels == ("box",)
    from masc_ui.metrics.registry import metrics_for

    names = [s.name for s in metrics_for([sample], settings)]
    assert "gmescore" in names and "nexusscore" in names and "naturalscore" not in names  # no judge key set
    assert "naturalscore" in [s.name for s in metrics_for([sample], settings.replace(judge_api_key="k"))]
    assert "gmescore" not in [s.name for s in metrics_for([Sample(refs=(ref,), out=ref)], settings)]


def test_video_facesim_follows_opens2v_over_the_image_facesim_of_each_frame(demo_settings):
    face = Image.fromarray(skdata.astronaut())  # 512 x 512: the packaged MTCNN detector finds the face
    blank = Image.new("RGB", face.size, (128, 128, 128))
    frames = [face, face.rotate(6), blank, face.transpose(Image.Transpose.FLIP_LEFT_RIGHT), blank]
    data = encode_video(frames, "mp4")
    video = open_video(data)
    sample = Sample(refs=(face, blank), out=video)
    value = score_metrics([sample], ["facesim"], demo_settings, ModelRegistry())["facesim"][0]

    indices = [int(i) for i in np.linspace(0, 4, 32, dtype=int)]
    alone, per_frame = ModelRegistry(), {}
    for index, arr in zip(sorted(set(indices)), decoded(data, sorted(set(indices)))):
        one = score_metrics([Sample(refs=(face,), out=Image.fromarray(arr))], ["facesim"], demo_settings, alone)
        per_frame[index] = None if math.isnan(one["facesim"][0].value) else one["facesim"][0].value
    used = [per_frame[i] for i in indices if per_frame[i] is not None and per_frame[i] != 0.0]
    assert [per_frame[i] for i in indices] == pytest.approx(value.extras["per_frame"], abs=1e-5)
    assert value.value == pytest.approx(float(np.mean(used)) if used else 0.0, abs=1e-5)
    assert value.extras["refs_used"] == [1]  # the grey reference has no face
    assert value.extras["frames"]["indices"] == indices and 0 < value.extras["n_with_face"] < 32 and used
    assert "get_facesim" in value.provenance["params"]["video_aggregate"]
    nobody = score_metrics([Sample(refs=(blank,), out=video)], ["facesim"], demo_settings, alone)["facesim"][0]
    assert math.isnan(nobody.value) and nobody.reason == "no face found in any reference"
