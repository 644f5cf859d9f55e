"""Face detectors (the packaged MTCNN: test_mtcnn.py): SCRFD decoding against an independent
computation on a tiny graph in SCRFD's output layout, RetinaFace's anchors/decoding against the reference's
loops, NMS, and the detection service (one detection per image and detector)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
from PIL import Image
from skimage import data

from masc_ui.imaging import open_image
from masc_ui.metrics.faces.boxes import nms
from masc_ui.metrics.faces.detection import FaceDetectionService, choose_detector
from masc_ui.metrics.faces.mtcnn import MtcnnFaceDetector
from masc_ui.metrics.faces.retinaface import RetinaFaceDetector
from masc_ui.metrics.faces.scrfd import ScrfdDetector
from masc_ui.metrics.faces.types import Face
from masc_ui.models.nets.retinaface import load_retinaface
from masc_ui.models.profiles import model_ids


def _plain_nms(boxes: np.ndarray, scores: np.ndarray, thresh: float) -> list[int]:
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    keep: list[int] = []
    for i in order:
        ok = True
        for j in keep:
            w = max(0.0, min(boxes[i][2], boxes[j][2]) - max(boxes[i][0], boxes[j][0]) + 1)
            h = max(0.0, min(boxes[i][3], boxes[j][3]) - max(boxes[i][1], boxes[j][1]) + 1)
            a_i = (boxes[i][2] - boxes[i][0] + 1) * (boxes[i][3] - boxes[i][1] + 1)
            a_j = (boxes[j][2] - boxes[j][0] + 1) * (boxes[j][3] - boxes[j][1] + 1)
            if w * h / (a_i + a_j - w * h) > thresh:
                ok = False
                break
        if ok:
            keep.append(i)
    return keep


def test_nms_keeps_the_best_of_overlapping_boxes():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 9]], dtype=np.float32)
    scores = np.array([0.8, 0.9, 0.7, 0.85], dtype=np.float32)
    assert nms(boxes, scores, 0.4).tolist() == [1, 2]
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 100, (60, 2))
    boxes = np.c_[xy, xy + rng.uniform(5, 40, (60, 2))]
    scores = rng.uniform(0, 1, 60)
    assert nms(boxes, scores, 0.4).tolist() == _plain_nms(boxes, scores, 0.4)


# --- SCRFD on a tiny graph in its output layout -----------------------------------------------------------------


def _independent_scrfd(model, rgb: np.ndarray, threshold: float = 0.5):
    h, w = rgb.shape[:2]
    if h > w:
        nh, nw = 320, int(320 / (h / w))
    else:
        nw, nh = 320, int(320 * (h / w))
    canvas = np.zeros((320, 320, 3), np.uint8)
    canvas[:nh, :nw] = cv2.resize(rgb, (nw, nh))
    x = torch.from_numpy((canvas.astype(np.float32) - 127.5) / 128.0).permute(2, 0, 1)[None]
    with torch.no_grad():
        outs = [o.numpy() for o in model(x)]
    cands = []
    for k, s in enumerate((8, 16, 32)):
        a = 0
        for row in range(320 // s):
            for col in range(320 // s):
                for _ in range(2):
                    score = float(outs[k][a, 0])
                    if score >= threshold:
                        d = outs[k + 3][a] * s
                        p = outs[k + 6][a] * s
                        box = [col * s - d[0], row * s - d[1], col * s + d[2], row * s + d[3]]
                        pts = [[col * s + p[2 * i], row * s + p[2 * i + 1]] for i in range(5)]
                        cands.append((score, np.array(box) / (nh / h), np.array(pts) / (nh / h)))
                    a += 1
    boxes = np.array([c[1] for c in cands])
    scores = np.array([c[0] for c in cands])
    return [cands[i] for i in _plain_nms(boxes, scores, 0.4)]


def test_scrfd_decoding_equals_an_independent_computation(scrfd_pack, tiny_scrfd):
    detector = ScrfdDetector(scrfd_pack)
    for rgb in (data.astronaut(), np.asarray(Image.fromarray(data.astronaut()).resize((300, 180)))):
        found = detector.detect(rgb)
        expected = _independent_scrfd(tiny_scrfd, rgb)
        assert len(found.faces) == len(expected) > 0
        for face, (score, box, pts) in zip(found.faces, expected):
            assert face.score == pytest.approx(score, abs=1e-5)
            np.testing.assert_allclose(face.box, box, atol=1e-3)
            np.testing.assert_allclose(face.landmarks, pts, atol=1e-3)


def test_scrfd_retries_on_the_padded_image_and_shifts_back(scrfd_pack):
    class PaddedOnly(ScrfdDetector):
        """Answers only on the padded image (which is larger): tests the retry's geometry, not detection."""

        def _detect(self, rgb):
            if rgb.shape[:2] == (100, 200):
                return []
            assert rgb.shape[:2] == (150, 300) and (rgb[0, 0] == 128).all()
            return [Face(box=(60.0, 35.0, 90.0, 70.0), score=0.9, landmarks=np.full((5, 2), 60.0, np.float32))]

    found = PaddedOnly(scrfd_pack).detect(np.zeros((100, 200, 3), np.uint8))
    assert found.padded_retry and found.faces[0].box == (10.0, 10.0, 40.0, 45.0)
    np.testing.assert_allclose(found.faces[0].landmarks, np.tile([10.0, 35.0], (5, 1)))


def test_scrfd_pack_errors_name_the_setting(tmp_path):
    from masc_ui.errors import ModelUnavailableError

    with pytest.raises(ModelUnavailableError, match="MASC_FACE_DETECTOR_DIR"):
        ScrfdDetector(tmp_path / "missing")
    with pytest.raises(ModelUnavailableError, match="holds no det_10g.onnx"):
        ScrfdDetector(tmp_path)


# --- RetinaFace -------------------------------------------------------------------------------------------------


def _reference_priors(h: int, w: int) -> np.ndarray:
    anchors = []
    for step, sizes in zip((8, 16, 32), ((16, 32), (64, 128), (256, 512))):
        for i, j in itertools.product(range(math.ceil(h / step)), range(math.ceil(w / step))):
            for size in sizes:
                anchors += [(j + 0.5) * step / w, (i + 0.5) * step / h, size / w, size / h]
    return np.array(anchors, dtype=np.float32).reshape(-1, 4)


def test_retinaface_decoding_equals_the_reference_loops(demo_weights):
    network = load_retinaface(demo_weights / "retinaface" / "mobilenet0.25_Final.pth")
    detector = RetinaFaceDetector(network, weights="demo")
    rgb = np.asarray(Image.fromarray(data.astronaut()).resize((160, 120)))
    found = detector.detect(rgb)
    x = torch.from_numpy(rgb[..., ::-1].astype(np.float32) - np.array([104, 117, 123], np.float32))
    with torch.no_grad():
        loc, conf, landms = (t[0].numpy() for t in network(x.permute(2, 0, 1)[None].contiguous()))
    priors = _reference_priors(120, 160)
    centre = priors[:, :2] + loc[:, :2] * 0.1 * priors[:, 2:]
    size = priors[:, 2:] * np.exp(loc[:, 2:] * 0.2)
    boxes = np.c_[centre - size / 2, centre + size / 2] * [160, 120, 160, 120]
    pts = np.concatenate([priors[:, :2] + landms[:, 2 * k : 2 * k + 2] * 0.1 * priors[:, 2:] for k in range(5)], 1)
    pts = pts.reshape(-1, 5, 2) * [160, 120]
    idx = np.where(conf[:, 1] > 0.5)[0]
    keep = [idx[i] for i in _plain_nms(boxes[idx], conf[idx, 1], 0.4)][:750]
    assert len(found.faces) == len(keep)
    for face, k in zip(found.faces, keep):
        assert face.score == pytest.approx(float(conf[k, 1]), abs=1e-6)
        np.testing.assert_allclose(face.box, boxes[k], atol=1e-3)
        np.testing.assert_allclose(face.landmarks, pts[k], atol=1e-3)


def test_retinaface_batches_same_size_images_like_single_ones(demo_weights):
    detector = RetinaFaceDetector(
        load_retinaface(demo_weights / "retinaface" / "mobilenet0.25_Final.pth"), weights="demo"
    )
    a = np.asarray(Image.fromarray(data.astronaut()).resize((96, 64)))
    b = np.ascontiguousarray(a[::-1])
    c = np.asarray(Image.fromarray(data.astronaut()).resize((64, 80)))
    batched = detector.detect_many([a, b, c])
    for img, got in zip((a, b, c), batched):
        single = detector.detect(img)
        assert len(single.faces) == len(got.faces)
        for f, g in zip(single.faces, got.faces):
            np.testing.assert_allclose(f.box, g.box, atol=1e-3)


# --- the service and the policy ---------------------------------------------------------------------------------


def test_each_image_is_detected_once_per_detector():
    service = FaceDetectionService(MtcnnFaceDetector())
    astronaut = open_image(data.astronaut(), name="astronaut")
    blank = open_image(np.zeros((40, 40, 3), np.uint8), name="blank")
    first = service.detect_many([astronaut, blank, astronaut])
    assert service.detections == 2 and first[0] is first[2] and len(first[0].faces) == 1
    again = service.detect_many([blank, astronaut])
    assert service.detections == 2 and again[1] is first[0]


def test_policy_falls_back_to_mtcnn_when_not_configured(demo_settings, scrfd_pack, tmp_path):
    from masc_ui.errors import ModelUnavailableError

    ids = model_ids(demo_settings)
    sim, score = choose_detector("facesim", demo_settings, ids), choose_detector("facescore", demo_settings, ids)
    assert sim.name == score.name == "mtcnn" and "not the reference SCRFD" in sim.note
    assert "not the reference RetinaFace" in score.note
    configured = demo_settings.replace(face_detector_dir=str(scrfd_pack))
    assert choose_detector("facesim", configured, model_ids(configured)).name == "scrfd"
    paper_missing = demo_settings.replace(profile="paper", cache_dir=tmp_path)
    ids = model_ids(paper_missing)
    if not Path(ids.face_detector_dir).expanduser().is_dir():
        assert choose_detector("facesim", paper_missing, ids).name == "mtcnn"
    wrong = demo_settings.replace(retinaface_weights=str(tmp_path / "nope.pth"))
    with pytest.raises(ModelUnavailableError, match="MASC_RETINAFACE_WEIGHTS"):
        choose_detector("facescore", wrong, model_ids(wrong))
