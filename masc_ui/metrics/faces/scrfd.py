"""SCRFD, the face detector of insightface's `buffalo_l` model pack (`det_10g.onnx`), run with onnxruntime and
decoded here. The `insightface` package (2.1 on PyPI) is not used: it requires the GUI build `opencv-python`,
today 5.x, which installs into the same `cv2` package as our pinned `opencv-python-headless` 4.x. Recipe of insightface's `SCRFD.detect`, the one FaceSim's reference (OpenS2V `facesim_cur`) calls:

- letterbox: scale the image so it fits `det_size` x `det_size` (320) keeping its aspect (`cv2.resize`, bilinear;
  the scaled side is `int(...)`, at least 1 px here), place it at the top-left of a black canvas;
- input RGB, (x - 127.5) / 128, NCHW float32;
- outputs: for strides 8, 16, 32 (2 anchors per cell) the scores, box distances and 5-landmark offsets (x stride);
  anchor centres (col * stride, row * stride); keep score >= 0.5; box = centre -/+ distances; landmarks =
  centre + offsets; all divided by the letterbox scale;
- sort by score (stable), NMS at IoU 0.4 (inclusive-pixel areas).
When nothing is found, the image is padded by 25% of its height/width on each side with grey 128 and detected
again; the landmarks (and boxes) are shifted back (`facesim_cur`'s retry).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ...errors import ModelUnavailableError
from .boxes import as_box, nms
from .types import Face, FaceDetections

DET_SIZE = 320
THRESHOLD = 0.5
NMS_THRESHOLD = 0.4
STRIDES = (8, 16, 32)
ANCHORS_PER_CELL = 2
PAD_FRACTION = 0.25
PAD_GREY = 128
PACK_DETECTOR = "det_10g.onnx"
"""The detection model of the `buffalo_l` pack."""


class ScrfdDetector:
    """SCRFD from a local insightface model-pack folder (the reference detector of FaceSim)."""

    name = "scrfd"
    reference = True

    def __init__(
        self, pack_dir: str | Path, *, device: str = "cpu", det_size: int = DET_SIZE, threshold: float = THRESHOLD
    ) -> None:
        import onnxruntime

        self.model_file = find_pack_detector(Path(pack_dir))
        providers = ["CPUExecutionProvider"]
        if device.startswith("cuda") and "CUDAExecutionProvider" in onnxruntime.get_available_providers():
            providers.insert(0, "CUDAExecutionProvider")
        try:
            self.session = onnxruntime.InferenceSession(str(self.model_file), providers=providers)
        except Exception as exc:  # onnxruntime raises its own exception types for unreadable graphs
            raise ModelUnavailableError(
                f"SCRFD face detector: {self.model_file} is not a loadable ONNX model ({exc})"
            ) from exc
        outputs = self.session.get_outputs()
        if len(outputs) != 3 * len(STRIDES):
            raise ModelUnavailableError(
                f"SCRFD face detector: {self.model_file} has {len(outputs)} outputs; FaceSim needs the 9-output "
                "SCRFD graph with 5 landmarks (scores, boxes, landmarks for strides 8, 16, 32), as in buffalo_l"
            )
        self.input_name = self.session.get_inputs()[0].name
        self.output_names = [o.name for o in outputs]
        self.det_size = det_size
        self.threshold = threshold

    def describe(self) -> dict[str, Any]:
        return {
            "detector": self.name,
            "reference_detector": True,
            "weights": str(self.model_file),
            "params": f"det_size {self.det_size}, threshold {self.threshold}, NMS {NMS_THRESHOLD}, "
            f"retry padded {int(PAD_FRACTION * 100)}% grey {PAD_GREY}, 5-point alignment",
        }

    def detect(self, rgb: np.ndarray) -> FaceDetections:
        """Faces in `rgb` (H, W, 3) uint8, best score first."""
        faces = self._detect(rgb)
        if faces:
            return FaceDetections(faces=tuple(faces), detector=self.name)
        h, w = rgb.shape[:2]
        top, left = int(h * PAD_FRACTION), int(w * PAD_FRACTION)
        padded = cv2.copyMakeBorder(rgb, top, top, left, left, cv2.BORDER_CONSTANT, value=(PAD_GREY,) * 3)
        shift = np.array([left, top], dtype=np.float32)
        faces = [
            Face(
                box=(f.box[0] - left, f.box[1] - top, f.box[2] - left, f.box[3] - top),
                score=f.score,
                landmarks=None if f.landmarks is None else f.landmarks - shift,
            )
            for f in self._detect(padded)
        ]
        return FaceDetections(faces=tuple(faces), detector=self.name, padded_retry=bool(faces))

    def _detect(self, rgb: np.ndarray) -> list[Face]:
        canvas, scale = letterbox(rgb, self.det_size)
        blob = ((canvas.astype(np.float32) - 127.5) / 128.0).transpose(2, 0, 1)[None]
        outs = [o[0] if o.ndim == 3 else o for o in self.session.run(self.output_names, {self.input_name: blob})]
        boxes, scores, points = decode_scrfd(outs, self.det_size, self.det_size, self.threshold)
        if not len(scores):
            return []
        order = np.argsort(-scores, kind="stable")
        boxes, scores, points = boxes[order] / scale, scores[order], points[order] / scale
        keep = nms(boxes, scores, NMS_THRESHOLD)
        return [
            Face(box=as_box(boxes[i]), score=float(scores[i]), landmarks=points[i].astype(np.float32)) for i in keep
        ]


def letterbox(rgb: np.ndarray, size: int) -> tuple[np.ndarray, float]:
    """(size, size, 3) uint8 canvas with `rgb` scaled to fit at its top-left, and the scale (new height / height)."""
    h, w = rgb.shape[:2]
    if h / w > 1.0:
        new_h, new_w = size, max(1, int(size / (h / w)))
    else:
        new_w, new_h = size, max(1, int(size * (h / w)))
    canvas = np.zeros((size, size, 3), dtype=np.uint8)
    canvas[:new_h, :new_w] = cv2.resize(rgb, (new_w, new_h))
    return canvas, new_h / h


def decode_scrfd(
    outs: list[np.ndarray], height: int, width: int, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boxes (N, 4), scores (N,), landmarks (N, 5, 2) of the anchors scoring >= `threshold`, in input pixels.

    `outs`: 9 arrays, scores (A, 1) x 3 strides, box distances (A, 4) x 3, landmark offsets (A, 10) x 3, with
    A = (height // stride) * (width // stride) * 2 anchors in (row, col, anchor) order."""
    boxes, scores, points = [], [], []
    n = len(STRIDES)
    for i, stride in enumerate(STRIDES):
        rows, cols = height // stride, width // stride
        cy, cx = np.mgrid[:rows, :cols]
        centres = np.repeat(np.stack([cx, cy], axis=-1).reshape(-1, 2) * stride, ANCHORS_PER_CELL, axis=0)
        score = outs[i].reshape(-1)
        dist = outs[i + n].reshape(-1, 4) * stride
        offsets = outs[i + 2 * n].reshape(-1, 5, 2) * stride
        keep = score >= threshold
        c = centres[keep].astype(np.float32)
        d = dist[keep]
        boxes.append(np.concatenate([c - d[:, :2], c + d[:, 2:]], axis=1))
        scores.append(score[keep])
        points.append(c[:, None, :] + offsets[keep])
    return np.concatenate(boxes), np.concatenate(scores), np.concatenate(points)


def find_pack_detector(pack_dir: Path) -> Path:
    """The SCRFD graph of an insightface model pack: `det_10g.onnx` (buffalo_l), else the one `det_*.onnx`."""
    if not pack_dir.is_dir():
        raise ModelUnavailableError(
            f"SCRFD face detector: the model-pack folder {pack_dir} does not exist. Unzip "
            "insightface's buffalo_l pack there (MASC_FACE_DETECTOR_DIR)."
        )
    if (pack_dir / PACK_DETECTOR).is_file():
        return pack_dir / PACK_DETECTOR
    found = sorted(pack_dir.glob("det_*.onnx"))
    if len(found) != 1:
        raise ModelUnavailableError(
            f"SCRFD face detector: {pack_dir} holds no {PACK_DETECTOR} (found "
            f"{[p.name for p in found] or 'no det_*.onnx'}); point MASC_FACE_DETECTOR_DIR "
            "at the unzipped buffalo_l folder"
        )
    return found[0]
