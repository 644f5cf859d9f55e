"""FaceSim: equal to an independent computation (plain cv2/scikit-image alignment + a functional IR forward
written here from the state dict), batched == one at a time, cached reruns cost nothing, NaN with the reason
when a side has no face (real detection, packaged MTCNN), bad inputs, strict loading, the released
IR-101 key layout, the SCRFD detector when a pack is configured, and the Score tab's explanation."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
from PIL import Image, ImageOps
from skimage import data
from skimage.transform import SimilarityTransform
from torch.nn import functional as F

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.imaging import as_input_image
from masc_ui.metrics.faces.detection import FaceDetectionService
from masc_ui.metrics.faces.mtcnn import MtcnnFaceDetector
from masc_ui.metrics.faces.types import Face, FaceDetections
from masc_ui.metrics.registry import get_scorer, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.models.nets.ir import IR101_UNITS, IR101_WIDTHS, IRArchitecture, IRBackbone, ir_architecture

TEMPLATE_112 = np.array(
    [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655], [70.7299, 92.2041]]
)
RECOGNIZER = "face-recognizer/glint360k_curricular_face_r101_backbone.bin"


def _astronaut() -> Image.Image:
    return Image.fromarray(data.astronaut())


def _variants() -> dict[str, Image.Image]:
    a = _astronaut()
    return {
        "rot8": a.rotate(8),
        "small": a.resize((300, 300)),
        "mirror": ImageOps.mirror(a),
        "crop": a.crop((100, 20, 400, 320)),
        "rotm10": a.rotate(-10).resize((420, 420)),
    }


def _ir_forward(sd: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The IR backbone (TFace/OpenS2V) written functionally from the released key names."""

    def bn(t, p):
        return F.batch_norm(
            t,
            sd[p + ".running_mean"],
            sd[p + ".running_var"],
            sd.get(p + ".weight"),
            sd.get(p + ".bias"),
            False,
            0.0,
            1e-5,
        )

    x = F.prelu(bn(F.conv2d(x, sd["input_layer.0.weight"], padding=1), "input_layer.1"), sd["input_layer.2.weight"])
    n, width = 0, None
    while f"body.{n}.res_layer.1.weight" in sd:
        p = f"body.{n}"
        out = sd[p + ".res_layer.1.weight"].shape[0]
        stride = 2 if out != width else 1
        width = out
        if p + ".shortcut_layer.0.weight" in sd:
            short = bn(F.conv2d(x, sd[p + ".shortcut_layer.0.weight"], stride=stride), p + ".shortcut_layer.1")
        else:
            short = x[:, :, ::stride, ::stride]
        r = F.conv2d(bn(x, p + ".res_layer.0"), sd[p + ".res_layer.1.weight"], padding=1)
        r = F.prelu(bn(r, p + ".res_layer.2"), sd[p + ".res_layer.3.weight"])
        r = bn(F.conv2d(r, sd[p + ".res_layer.4.weight"], stride=stride, padding=1), p + ".res_layer.5")
        x = r + short
        n += 1
    x = F.linear(bn(x, "output_layer.0").flatten(1), sd["output_layer.3.weight"], sd["output_layer.3.bias"])
    return F.batch_norm(
        x, sd["output_layer.4.running_mean"], sd["output_layer.4.running_var"], None, None, False, 0.0, 1e-5
    )


def _independent_embedding(sd, img) -> np.ndarray:
    """`img`: a sample's image (an InputImage; its decoded RGB pixels are what a scorer sees)."""
    rgb = np.asarray(as_input_image(img).pixels)
    face = max(MtcnnFaceDetector().detect(rgb).faces, key=lambda f: f.area)
    tform = SimilarityTransform.from_estimate(
        face.landmarks.astype(np.float64), TEMPLATE_112[: len(face.landmarks)] * 2
    )
    crop = cv2.resize(cv2.warpAffine(rgb, tform.params[:2], (224, 224), borderValue=0.0), (112, 112))
    x = (torch.from_numpy(crop).permute(2, 0, 1)[None].float() / 255 - 0.5) / 0.5
    with torch.no_grad():
        emb = _ir_forward(sd, x)[0].numpy().astype(np.float64)
    return emb / np.linalg.norm(emb)


def test_facesim_equals_an_independent_computation(demo_settings, demo_weights):
    sd = torch.load(demo_weights / RECOGNIZER)
    v = _variants()
    samples = [
        Sample(refs=(_astronaut(),), out=v["rot8"]),
        Sample(refs=(v["small"], v["mirror"]), out=v["crop"]),
        Sample(refs=(v["rotm10"],), out=_astronaut()),
    ]
    got = get_scorer("facesim", demo_settings).score(samples)
    for sample, value in zip(samples, got):
        out = _independent_embedding(sd, sample.out)
        per_ref = [max(0.0, float(np.dot(_independent_embedding(sd, r), out))) for r in sample.refs]
        assert value.reason is None
        assert value.value == pytest.approx(float(np.mean(per_ref)), abs=1e-5)
        np.testing.assert_allclose(value.extras["per_ref"], per_ref, atol=1e-5)
        assert value.extras["detector"] == "mtcnn" and value.extras["faces"]["out"]["used"] == 0
    prov = got[0].provenance
    assert (
        prov["params"]["detector"]["reference_detector"] is False
        and "not the reference SCRFD" in prov["params"]["detector"]["note"]
    )
    assert prov["params"]["architecture"].startswith("IR (units [1, 1, 1, 1]")


def test_batched_equals_one_at_a_time_and_reruns_are_cached(demo_settings):
    v = _variants()
    samples = [Sample(refs=(_astronaut(),), out=v[k]) for k in v] + [
        Sample(refs=(v["crop"], v["small"]), out=v["rot8"])
    ]
    models = ModelRegistry()
    scorer = get_scorer("facesim", demo_settings, models)
    batched = scorer.score(samples)
    backbone = scorer.backbone()
    assert backbone.forwards == 6 and backbone.detection.detections == 6  # 6 distinct images
    assert scorer.score(samples)[0].value == batched[0].value
    assert backbone.forwards == 6 and backbone.detection.detections == 6  # rerun: 0 forwards, 0 detections
    for sample, value in zip(samples, batched):
        single = get_scorer("facesim", demo_settings, ModelRegistry()).score([sample])[0]
        assert single.value == pytest.approx(value.value, abs=1e-6)


def test_no_face_gives_nan_naming_the_image(demo_settings, shared_data: Path):
    photos = shared_data / "dreambooth" / "dataset"
    teapot, backpack = Image.open(photos / "teapot" / "00.jpg"), Image.open(photos / "backpack" / "05.jpg")
    values = get_scorer("facesim", demo_settings).score(
        [
            Sample(refs=(_astronaut(),), out=teapot),
            Sample(refs=(_astronaut(), backpack), out=_astronaut()),
            Sample(refs=(teapot,), out=backpack),
        ]
    )
    assert [v.reason for v in values] == [
        "no face found in the output",
        "no face found in reference 2",
        "no face found in the output and reference 1",
    ]
    assert all(math.isnan(v.value) for v in values)
    assert values[1].extras["faces"]["refs"][1]["faces"] == []


def test_bad_inputs(demo_settings):
    scorer = get_scorer("facesim", demo_settings)
    tiny = Image.new("RGB", (1, 1))
    assert scorer.score([Sample(refs=(_astronaut(),), out=tiny)])[0].reason == "no face found in the output"
    rgba, grey = _astronaut().convert("RGBA"), _astronaut().convert("L")
    plain = scorer.score([Sample(refs=(_astronaut(),), out=grey.convert("RGB"))])[0]
    modes = scorer.score([Sample(refs=(rgba,), out=grey)])[0]
    assert modes.value == pytest.approx(plain.value, abs=1e-6) and not math.isnan(modes.value)
    with pytest.raises(InputError, match="facesim needs reference"):
        scorer.score([Sample(refs=(), out=_astronaut())])
    assert scorer.score([Sample(refs=(), out=_astronaut())], missing="nan")[0].reason.startswith("facesim needs")


def test_facesim_and_facescore_share_one_detection(demo_settings):
    models = ModelRegistry()
    v = _variants()
    samples = [Sample(refs=(_astronaut(),), out=v["rot8"]), Sample(refs=(_astronaut(),), out=v["crop"])]
    result = score_metrics(samples, "facesim,facescore", demo_settings, models)
    service = get_scorer("facesim", demo_settings, models).backbone().detection
    assert service is get_scorer("facescore", demo_settings, models).backbone().detection
    assert service.detections == 3 and result["facescore"][0].extras["count"] == 1


def test_explanation_gives_both_aligned_crops(demo_settings):
    explained = get_scorer("facesim", demo_settings).explain(_variants()["rot8"], _astronaut())
    assert explained.out_crop.size == explained.ref_crop.size == (112, 112)
    assert explained.out_image.size == (512, 512) and explained.detector == "mtcnn"
    assert not explained.reference_detector and explained.reason is None
    blank = get_scorer("facesim", demo_settings).explain(Image.new("RGB", (64, 64)), _astronaut())
    assert blank.out_crop is None and blank.reason == "no face found in the output"


def test_scrfd_pack_is_used_when_configured(demo_settings, scrfd_pack):
    settings = demo_settings.replace(face_detector_dir=str(scrfd_pack))
    value = get_scorer("facesim", settings).score([Sample(refs=(_astronaut(),), out=_variants()["rot8"])])[0]
    assert value.extras["detector"] == "scrfd" and value.provenance["params"]["detector"]["reference_detector"]
    assert len(value.extras["faces"]["out"]["faces"][0]["landmarks"]) == 5
    with pytest.raises(ModelUnavailableError, match="MASC_FACE_DETECTOR_DIR"):
        get_scorer("facesim", demo_settings.replace(face_detector_dir="/no/such/pack")).score(
            [Sample(refs=(_astronaut(),), out=_astronaut())]
        )


def test_released_ir101_key_layout():
    """Written from TFace/OpenS2V `model_irse.py` (Backbone(input_size=[112, 112], 100, "ir"))."""
    with torch.device("meta"):
        model = IRBackbone(IRArchitecture(stem=64, units=IR101_UNITS, widths=IR101_WIDTHS, embedding=512))
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert len([k for k in shapes if k.endswith("res_layer.1.weight")]) == 49
    expected = {
        "input_layer.0.weight": (64, 3, 3, 3),
        "input_layer.1.running_var": (64,),
        "input_layer.2.weight": (64,),
        "body.0.res_layer.0.weight": (64,),
        "body.0.res_layer.1.weight": (64, 64, 3, 3),
        "body.0.res_layer.3.weight": (64,),
        "body.0.res_layer.4.weight": (64, 64, 3, 3),
        "body.3.shortcut_layer.0.weight": (128, 64, 1, 1),
        "body.3.shortcut_layer.1.running_mean": (128,),
        "body.16.shortcut_layer.0.weight": (256, 128, 1, 1),
        "body.46.shortcut_layer.0.weight": (512, 256, 1, 1),
        "body.48.res_layer.5.bias": (512,),
        "output_layer.0.weight": (512,),
        "output_layer.3.weight": (512, 25088),
        "output_layer.3.bias": (512,),
        "output_layer.4.running_mean": (512,),
        "output_layer.4.running_var": (512,),
        "output_layer.4.num_batches_tracked": (),
    }
    for key, shape in expected.items():
        assert shapes[key] == shape, key
    assert (
        "body.0.shortcut_layer.0.weight" not in shapes and "output_layer.4.weight" not in shapes
    )  # MaxPool; affine=False
    assert ir_architecture(model.state_dict(), what="IR-101").label == "IR-101"


def test_recognizer_loading_errors_name_the_key(demo_weights, demo_settings, tmp_path):
    sd = torch.load(demo_weights / RECOGNIZER)
    for name, broken in {
        "extra": {**sd, "head.kernel": torch.zeros(3)},
        "missing": {k: v for k, v in sd.items() if k != "body.2.res_layer.2.running_var"},
        "shape": {**sd, "output_layer.3.bias": torch.zeros(7)},
    }.items():
        path = tmp_path / name / "glint360k_curricular_face_r101_backbone.bin"
        path.parent.mkdir()
        torch.save(broken, path)
        settings = demo_settings.replace(face_recognizer=str(path))
        key = {"extra": "head.kernel", "missing": "body.2.res_layer.2.running_var", "shape": "output_layer.3.bias"}[
            name
        ]
        with pytest.raises(ModelUnavailableError, match=key.replace(".", r"\.")):
            get_scorer("facesim", settings).score([Sample(refs=(_astronaut(),), out=_astronaut())])
    without_counter = {k: v for k, v in sd.items() if not k.endswith("num_batches_tracked")}
    path = tmp_path / "old.bin"
    torch.save(without_counter, path)
    value = get_scorer("facesim", demo_settings.replace(face_recognizer=str(path))).score(
        [Sample(refs=(_astronaut(),), out=_variants()["rot8"])]
    )[0]
    assert not math.isnan(value.value)
    with pytest.raises(ModelUnavailableError, match="MASC_FACE_RECOGNIZER"):
        get_scorer("facesim", demo_settings.replace(face_recognizer=str(tmp_path / "nope.bin"))).score(
            [Sample(refs=(_astronaut(),), out=_astronaut())]
        )


class _BoxesOnlyDetector:
    """A detector backend that finds one face filling the image and gives no landmarks."""

    name = "boxes-only"
    reference = False

    def describe(self) -> dict[str, object]:
        return {"detector": self.name, "reference_detector": False, "weights": None, "params": ""}

    def detect(self, rgb: np.ndarray) -> FaceDetections:
        h, w = rgb.shape[:2]
        return FaceDetections(
            faces=(Face(box=(0.0, 0.0, float(w), float(h)), score=0.99, landmarks=None),), detector=self.name
        )


def test_a_detector_without_landmarks_is_refused_clearly(demo_settings):
    scorer = get_scorer("facesim", demo_settings, ModelRegistry())
    scorer.backbone().detection = FaceDetectionService(_BoxesOnlyDetector())
    with pytest.raises(ModelUnavailableError, match="boxes-only face detector gives none"):
        scorer.score([Sample(refs=(_astronaut(),), out=_variants()["rot8"])])
