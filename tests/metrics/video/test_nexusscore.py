"""NexusScore's detector (OWLv2 image-guided) and rule on the tiny demo checkpoints, against plain transformers /
torchvision calls and a by-hand evaluation of the rule."""

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.imaging import VideoFrame, linspace_indices, open_image, open_video, read_frames
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.video.gme import load_gme
from masc_ui.metrics.video.nexus_detector import load_nexus_detector
from masc_ui.metrics.video.nexusscore import nexus_score
from masc_ui.metrics.video.sample import VideoSample
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.settings import Settings
from tests.video_files import encode_video, synthetic_frames

CPU = Settings(device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def detector(demo_weights):
    return load_nexus_detector(str(demo_weights / "owlv2"), CPU)


@pytest.fixture(scope="module")
def gme(demo_weights):
    return load_gme(str(demo_weights / "gme-qwen2-vl"), CPU)


def _image(seed: int, size=(90, 60)) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8))


def _reference_detections(model_dir, frame: Image.Image, query: Image.Image) -> list[tuple[list[float], float]]:
    """transformers' `image_guided_detection` + sigmoid + pixel boxes + clip + threshold 0.5 + torchvision NMS 0.7."""
    from torchvision.ops import nms
    from transformers import AutoProcessor, Owlv2ForObjectDetection

    model = Owlv2ForObjectDetection.from_pretrained(model_dir).eval()
    processor = AutoProcessor.from_pretrained(model_dir)
    inputs = processor(images=frame, query_images=query, return_tensors="pt")
    with torch.inference_mode():
        out = model.image_guided_detection(**inputs)
    conf = torch.sigmoid(out.logits[0, :, 0])
    cx, cy, w, h = out.target_pred_boxes[0].unbind(-1)
    boxes = torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1) * max(frame.size)
    boxes[:, 0::2] = boxes[:, 0::2].clamp(0, frame.width)
    boxes[:, 1::2] = boxes[:, 1::2].clamp(0, frame.height)
    keep = torch.nonzero(conf > 0.5).flatten()
    keep = keep[nms(boxes[keep], conf[keep], 0.7)][:100]
    return [(boxes[i].tolist(), float(conf[i])) for i in keep]


def test_detections_match_transformers_image_guided_detection(detector, demo_weights):
    frames = [_image(1), _image(2, (64, 96)), _image(3, (50, 50))]
    queries = [_image(10, (40, 40)), _image(11, (70, 30))]
    ours = detector.detect(frames, queries)
    n = 0
    for f, frame in enumerate(frames):
        for q, query in enumerate(queries):
            expected = _reference_detections(demo_weights / "owlv2", frame, query)
            assert len(ours[f][q]) == len(expected)
            for det, (box, conf) in zip(ours[f][q], expected):
                np.testing.assert_allclose(det.box, box, atol=1e-4)  # pixels
                assert det.confidence == pytest.approx(conf, abs=1e-5)
            n += len(expected)
    assert n > 10  # the tiny checkpoint does detect things


def test_detector_batched_equals_one_at_a_time(detector):
    frames = [open_image(_image(20 + i, (60 + 10 * i, 60))) for i in range(3)]
    query = [open_image(_image(30))]
    together = detector.detect(frames, query)
    alone = [detector.detect([f], query)[0] for f in frames]
    for a, b in zip(together, alone):
        assert [d.box for d in a[0]] == pytest.approx([d.box for d in b[0]], abs=1e-4)
        assert [d.confidence for d in a[0]] == pytest.approx([d.confidence for d in b[0]], abs=1e-5)
    assert detector.detect([], query) == [] and detector.detect(frames[:1], []) == [[]]


def _by_hand(frames, refs, labels, detector, gme, conf_threshold, text_threshold):
    """NexusScore evaluated step by step from the detector's boxes and GME embeddings."""
    kept, frames_with_detection = [], 0
    for frame in frames:
        per_ref = detector.detect([frame.image], refs)[0]
        frames_with_detection += any(per_ref)
        for ref, label, dets in zip(refs, labels, per_ref):
            for det in dets:
                x0, y0, x1, y1 = (int(round(v)) for v in det.box)
                if x1 <= x0 or y1 <= y0:
                    continue
                crop = gme.image_embeddings([frame.image.pixels.crop((x0, y0, x1, y1))])[0]
                text = float(crop @ gme.text_embeddings([label])[0])
                image = float(crop @ gme.image_embeddings([ref])[0])
                if det.confidence > conf_threshold and text > text_threshold and image != 0:
                    kept.append(image)
    return (np.mean(kept) / frames_with_detection if kept else 0.0), len(kept), frames_with_detection


@pytest.mark.parametrize(("conf_threshold", "text_threshold"), [(0.6, 0.30), (0.5, -1.0)])
def test_nexus_score_follows_the_rule(detector, gme, conf_threshold, text_threshold):
    frames = [VideoFrame(index=i, time_s=i / 8, image=open_image(_image(40 + i))) for i in range(4)]
    refs = [open_image(_image(50, (40, 40))), open_image(_image(51, (30, 50)))]
    labels = ["cup", "dog"]
    value, reason, extras = nexus_score(
        iter(frames), refs, labels, detector, gme, conf_threshold=conf_threshold, text_threshold=text_threshold
    )
    expected, n_kept, n_frames = _by_hand(frames, refs, labels, detector, gme, conf_threshold, text_threshold)
    assert reason is None and value == pytest.approx(expected, abs=1e-5)
    assert extras["n_kept"] == n_kept and extras["n_frames_with_detection"] == n_frames
    if text_threshold < 0:
        assert n_kept > 0 and extras["mean_kept"] == pytest.approx(value * n_frames, abs=1e-5)
    assert {"frame", "ref", "box", "confidence", "text_similarity", "image_similarity", "kept"} <= set(
        extras["detections"][0]
    )


def test_nexus_score_skips_unlabelled_references(detector, gme):
    frames = [VideoFrame(index=0, time_s=0.0, image=open_image(_image(60)))]
    value, reason, extras = nexus_score(iter(frames), [_image(61)], [None], detector, gme)
    assert np.isnan(value) and reason == "no reference image has a class label to detect"
    with pytest.raises(InputError, match="one class label per reference image"):
        nexus_score(iter(frames), [_image(61)], ["a", "b"], detector, gme)


def test_nexusscore_scorer_on_a_video(demo_settings):
    from storage.record_types import Provenance

    video = open_video(encode_video(synthetic_frames(20, 96, 64), "mp4"), name="clip")
    scorer = get_scorer("nexusscore", demo_settings, ModelRegistry(), conf_threshold=0.5, text_threshold=-1.0)
    ref = open_image(_image(70, (48, 48)))
    [value] = scorer.score([VideoSample(video=video, refs=(ref,), class_labels=("square",))])
    detector, gme = scorer.parts()
    frames = read_frames(video, linspace_indices(20, 32))
    expected, _, _ = _by_hand(frames, [ref], ["square"], detector, gme, 0.5, -1.0)
    assert value.value == pytest.approx(expected, abs=1e-5) and value.extras["frames"]["count"] == 32
    prov = value.provenance
    assert prov["params"]["detector"] == "owlv2-image-guided" and prov["params"]["conf_threshold"] == 0.5
    Provenance.from_mapping(prov)
    with pytest.raises(InputError, match="nexusscore needs class_labels"):
        scorer.score([VideoSample(video=video, refs=(ref,))])
    with pytest.raises(InputError, match="nexusscore needs reference, class_labels"):
        scorer.score([VideoSample(video=video)])
    with pytest.raises(InputError, match="conf_threshold must be a number"):
        get_scorer("nexusscore", demo_settings, conf_threshold="high")
    with pytest.raises(InputError, match="has no parameter"):
        get_scorer("nexusscore", demo_settings, iou=0.5)


def test_unsupported_detector_is_named(demo_weights):
    with pytest.raises(ModelUnavailableError, match="is a clip checkpoint; supported image-prompted detectors: owlv2"):
        load_nexus_detector(str(demo_weights / "clip"), CPU)
