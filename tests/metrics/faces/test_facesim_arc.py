"""FaceSim-Arc: equal to an independent computation (insightface 2.1's `ArcFaceONNX.get` written here: `norm_crop`
of the BGR image with scikit-image's `SimilarityTransform`, `cv2.dnn.blobFromImages(..., swapRB=True)`, onnxruntime on
the tiny `w600k_r50.onnx`), the crop of a face found on SCRFD's padded retry taken from the padded image, batched ==
one at a time with each reference embedded once, detection shared with FaceSim, insightface's input-normalisation
rule and fixed-batch graphs, the SCRFD pack, the video rule (zeros kept), bad inputs and missing files."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import cv2
import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from PIL import Image, ImageOps
from skimage import data
from skimage import transform as sktransform

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.imaging import open_video
from masc_ui.metrics.faces.arcface import PACK_RECOGNIZER, ArcFaceOnnx, input_normalisation
from masc_ui.metrics.faces.detection import FaceDetectionService
from masc_ui.metrics.faces.facesim_arc import ArcFaceSimScorer
from masc_ui.metrics.faces.mtcnn import MtcnnFaceDetector
from masc_ui.metrics.faces.types import Face, FaceDetections
from masc_ui.metrics.registry import get_scorer, get_spec, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.demo.faces import ARCFACE_FILE
from masc_ui.models.loaded_models import ModelRegistry
from tests.video_files import encode_video

ARCFACE_DST = np.array(
    [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655], [70.7299, 92.2041]],
    dtype=np.float32,
)
"""insightface `face_align.arcface_dst`."""


def _astronaut() -> Image.Image:
    return Image.fromarray(data.astronaut())


def _views() -> dict[str, Image.Image]:
    a = _astronaut()
    return {
        "rot8": a.rotate(8),
        "small": a.resize((300, 300)),
        "mirror": ImageOps.mirror(a),
        "crop": a.crop((100, 20, 400, 320)),
    }


def _insightface_embedding(session, bgr: np.ndarray, kps: np.ndarray, *, points_dtype=np.float64) -> np.ndarray:
    """insightface 2.1: `face_align.norm_crop(img, kps, 112)` then `ArcFaceONNX.get_feat` (mean = std = 127.5).

    insightface estimates the similarity from float32 points (`arcface_dst`, SCRFD's landmarks), which moves the
    matrix by ~1e-5 from the exact least-squares one (float64, what runs here) and can shift a pixel's bilinear weights
    by one of cv2's 1/32 steps; `points_dtype=np.float32` computes insightface's own rounding."""
    tform = sktransform.SimilarityTransform.from_estimate(kps.astype(points_dtype), ARCFACE_DST.astype(points_dtype))
    aimg = cv2.warpAffine(bgr, tform.params[0:2, :], (112, 112), borderValue=0.0)
    blob = cv2.dnn.blobFromImages([aimg], 1.0 / 127.5, (112, 112), (127.5, 127.5, 127.5), swapRB=True)
    inp, out = session.get_inputs()[0].name, session.get_outputs()[0].name
    emb = session.run([out], {inp: blob})[0].flatten().astype(np.float64)
    return emb / np.linalg.norm(emb)


def _independent(session, img: Image.Image, *, points_dtype=np.float64) -> np.ndarray:
    rgb = np.asarray(img.convert("RGB"))
    face = _largest(MtcnnFaceDetector().detect(rgb).faces)
    return _insightface_embedding(
        session, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), face.landmarks, points_dtype=points_dtype
    )


def _largest(faces):
    return sorted(faces, key=lambda f: (f.box[2] - f.box[0]) * (f.box[3] - f.box[1]))[-1]


@pytest.fixture(scope="module")
def session(demo_weights: Path):
    return onnxruntime.InferenceSession(
        str(demo_weights / "arcface" / PACK_RECOGNIZER), providers=["CPUExecutionProvider"]
    )


def test_facesim_arc_equals_an_independent_computation(demo_settings, session):
    v = _views()
    samples = [
        Sample(refs=(_astronaut(),), out=v["rot8"]),
        Sample(refs=(v["small"], v["mirror"]), out=v["crop"]),
    ]
    images = [(_astronaut(), v["rot8"]), ((v["small"], v["mirror"]), v["crop"])]
    got = get_scorer("facesim_arc", demo_settings).score(samples)
    for (refs, out), value in zip(images, got):
        refs = refs if isinstance(refs, tuple) else (refs,)
        e_out = _independent(session, out)
        cos = [float(np.dot(_independent(session, r), e_out)) for r in refs]
        assert value.reason is None
        np.testing.assert_allclose(value.extras["cos"], cos, atol=1e-5)
        assert value.value == pytest.approx(float(np.mean([max(0.0, c) for c in cos])), abs=1e-5)
        e32 = _independent(session, out, points_dtype=np.float32)
        rounded = [float(np.dot(_independent(session, r, points_dtype=np.float32), e32)) for r in refs]
        np.testing.assert_allclose(value.extras["cos"], rounded, atol=1e-3)  # insightface's float32 points
    provenance = got[0].provenance
    assert provenance["dtype"] == "float32" and provenance["model_id"].endswith(PACK_RECOGNIZER)
    assert (
        provenance["params"]["architecture"].startswith("ArcFace") and "onnxruntime" in provenance["params"]["runtime"]
    )
    assert provenance["params"]["detector"]["detector"] == "mtcnn"


class _PaddedRetry:
    """MTCNN on the image padded by 25% with grey 128 (SCRFD's retry), faces shifted back, `padded_retry` set."""

    name = "mtcnn"
    reference = False

    def describe(self):
        return {"detector": self.name, "reference_detector": False, "weights": "-", "params": "padded"}

    def detect(self, rgb):
        h, w = rgb.shape[:2]
        top, left = int(h * 0.25), int(w * 0.25)
        padded = cv2.copyMakeBorder(rgb, top, top, left, left, cv2.BORDER_CONSTANT, value=(128, 128, 128))
        shift = np.array([left, top], np.float32)
        faces = tuple(
            Face(
                box=(f.box[0] - left, f.box[1] - top, f.box[2] - left, f.box[3] - top),
                score=f.score,
                landmarks=f.landmarks - shift,
            )
            for f in MtcnnFaceDetector().detect(padded).faces
        )
        return FaceDetections(faces=faces, detector=self.name, padded_retry=True)


def test_a_face_found_on_the_padded_retry_is_cropped_from_the_padded_image(demo_settings, session):
    """insightface embeds the face in the image it detected it in: the padded one (grey border), not the original."""
    models = ModelRegistry()
    models.get(("face-detector", "mtcnn", None, "cpu"), lambda: FaceDetectionService(_PaddedRetry()))
    edge = _astronaut().crop((150, 60, 512, 400))  # the forehead cut by the top edge: the crop reaches past it
    value = get_scorer("facesim_arc", demo_settings, models).score([Sample(refs=(_astronaut(),), out=edge)])[0]

    def embeddings(img):
        """(insightface's: the padded image, grey border; the same landmarks on the original image, black border)."""
        rgb = np.asarray(img)
        h, w = rgb.shape[:2]
        top, left = int(h * 0.25), int(w * 0.25)
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        padded = cv2.copyMakeBorder(bgr, top, top, left, left, cv2.BORDER_CONSTANT, value=(128, 128, 128))
        kps = _largest(MtcnnFaceDetector().detect(cv2.cvtColor(padded, cv2.COLOR_BGR2RGB)).faces).landmarks
        shifted = kps - np.array([left, top], np.float32)
        return _insightface_embedding(session, padded, kps), _insightface_embedding(session, bgr, shifted)

    (ref_grey, ref_black), (out_grey, out_black) = embeddings(_astronaut()), embeddings(edge)
    expected = float(np.dot(ref_grey, out_grey))
    assert value.extras["cos"][0] == pytest.approx(expected, abs=1e-5)
    assert value.extras["faces"]["out"]["padded_retry"] is True
    black = float(np.dot(ref_black, out_black))
    assert abs(black - expected) > 1e-4  # the border matters here: the test tells the two crops apart


def test_batched_equals_one_at_a_time_each_reference_embedded_once_detection_shared(demo_settings):
    v = _views()
    ref = _astronaut()
    samples = [Sample(refs=(ref,), out=v[k]) for k in v] + [Sample(refs=(ref, v["small"]), out=v["rot8"])]
    models = ModelRegistry()
    scorer = get_scorer("facesim_arc", demo_settings, models)
    batched = scorer.score(samples)
    backbone = scorer.backbone()
    assert backbone.forwards == 5  # 5 distinct images, the shared reference once
    scorer.score(samples)
    assert backbone.forwards == 5
    facesim = get_scorer("facesim", demo_settings, models)
    assert facesim.backbone().detection is backbone.detection
    detected = backbone.detection.detections
    facesim.score(samples)
    assert backbone.detection.detections == detected  # FaceSim reads FaceSim-Arc's detections
    for sample, value in zip(samples, batched):
        single = get_scorer("facesim_arc", demo_settings, ModelRegistry()).score([sample])[0]
        assert single.value == pytest.approx(value.value, abs=1e-6)


def _mxnet_style_graph(path: Path, batch: int | str) -> None:
    """Sub and Mul first (an mxnet conversion normalises inside): mean over pixels of x * 0.5, per channel."""
    nodes = [
        helper.make_node("Sub", ["data", "zero"], ["sub"], name="_minus0"),
        helper.make_node("Mul", ["sub", "half"], ["mul"], name="_mul0"),
        helper.make_node("GlobalAveragePool", ["mul"], ["pool"], name="pool0"),
        helper.make_node("Flatten", ["pool"], ["fc1"], name="flat0", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "mxnet_style",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [batch, 3, 112, 112])],
        [helper.make_tensor_value_info("fc1", TensorProto.FLOAT, [batch, 3])],
        initializer=[
            numpy_helper.from_array(np.zeros(1, np.float32), "zero"),
            numpy_helper.from_array(np.full(1, 0.5, np.float32), "half"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_insightface_normalisation_rule_and_fixed_batch_graphs(tmp_path, demo_weights):
    assert input_normalisation(["conv_0", "relu_0"]) == (127.5, 127.5)
    assert input_normalisation(["Sub_1", "Mul_2", "Conv_3"]) == (0.0, 1.0)
    assert input_normalisation(["Sub_1"] + ["x"] * 8 + ["Mul_2"]) == (127.5, 127.5)  # beyond the first 8 nodes
    demo = ArcFaceOnnx(demo_weights / "arcface" / PACK_RECOGNIZER)
    assert (demo.input_mean, demo.input_std, demo.size, demo.fixed_batch) == (127.5, 127.5, 112, None)
    crops = np.random.default_rng(0).integers(0, 256, (3, 112, 112, 3), dtype=np.uint8)
    for batch in ("N", 1):
        path = tmp_path / f"mx_{batch}.onnx"
        _mxnet_style_graph(path, batch)
        graph = ArcFaceOnnx(path)
        assert (graph.input_mean, graph.input_std, graph.fixed_batch) == (0.0, 1.0, None if batch == "N" else 1)
        np.testing.assert_allclose(graph.embed(crops), crops.reshape(3, -1, 3).mean(1) * 0.5, rtol=1e-5)


def test_scrfd_pack_holds_both_detector_and_recognizer(demo_settings, demo_weights, scrfd_pack, tmp_path):
    pack = tmp_path / "buffalo_l"
    pack.mkdir()
    shutil.copy(scrfd_pack / "det_10g.onnx", pack)
    shutil.copy(demo_weights / "arcface" / PACK_RECOGNIZER, pack)
    settings = demo_settings.replace(face_detector_dir=str(pack))
    value = get_scorer("facesim_arc", settings).score([Sample(refs=(_astronaut(),), out=_views()["rot8"])])[0]
    assert value.extras["detector"] == "scrfd" and value.provenance["params"]["detector"]["reference_detector"]
    assert value.provenance["model_id"] == str(pack / PACK_RECOGNIZER)
    (pack / PACK_RECOGNIZER).unlink()
    with pytest.raises(ModelUnavailableError, match="holds no w600k_r50.onnx.*MASC_FACE_DETECTOR_DIR"):
        get_scorer("facesim_arc", settings).score([Sample(refs=(_astronaut(),), out=_astronaut())])
    with pytest.raises(ModelUnavailableError, match="MASC_FACE_DETECTOR_DIR"):
        get_scorer("facesim_arc", demo_settings.replace(face_detector_dir="/no/such/pack")).score(
            [Sample(refs=(_astronaut(),), out=_astronaut())]
        )
    (pack / PACK_RECOGNIZER).write_bytes(b"not an onnx graph")
    with pytest.raises(ModelUnavailableError, match="not a readable ONNX model"):
        get_scorer("facesim_arc", settings).score([Sample(refs=(_astronaut(),), out=_astronaut())])


def test_no_face_and_bad_inputs(demo_settings):
    spec = get_spec("facesim_arc")
    assert spec.range == (0.0, 1.0) and spec.needs_reference and spec.family == "faces"
    assert spec.backbone_settings == ("face_detector_dir",) and ARCFACE_FILE == PACK_RECOGNIZER
    scorer = get_scorer("facesim_arc", demo_settings)
    blank = Image.new("RGB", (64, 64), (128, 128, 128))
    [no_out, no_ref] = scorer.score([Sample(refs=(_astronaut(),), out=blank), Sample(refs=(blank,), out=_astronaut())])
    assert math.isnan(no_out.value) and no_out.reason == "no face found in the output"
    assert math.isnan(no_ref.value) and no_ref.reason == "no face found in reference 1"
    with pytest.raises(InputError, match="facesim_arc needs reference, which sample 0 lacks"):
        scorer.score([Sample(refs=(), out=_astronaut())])
    with pytest.raises(InputError, match="sample 0 is a str"):
        scorer.score(["a face"])


def test_a_video_keeps_the_frames_that_score_zero_as_opens2v_arc_loop(demo_settings):
    assert ArcFaceSimScorer.VIDEO_DROPS_ZEROS is False
    face = _astronaut()
    blank = Image.new("RGB", face.size, (128, 128, 128))
    frames = [face, face.rotate(6), blank, ImageOps.mirror(face), blank]
    video = open_video(encode_video(frames, "mp4"))
    value = score_metrics([Sample(refs=(face,), out=video)], ["facesim_arc"], demo_settings, ModelRegistry())[
        "facesim_arc"
    ][0]
    kept = [s for s in value.extras["per_frame"] if s is not None]
    assert 0 < len(kept) < 32 and value.extras["n_used"] == len(kept)
    assert value.value == pytest.approx(float(np.mean(kept)), abs=1e-9)
    assert "zeros kept" in value.provenance["params"]["video_aggregate"]
    from masc_ui.metrics.video.facesim_video import video_facesim

    assert video_facesim([0.8, None, -0.2, 0.0], drop_zeros=False)[0] == pytest.approx(0.8 / 3)
