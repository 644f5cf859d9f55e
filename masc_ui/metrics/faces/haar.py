"""The offline fallback face detector: OpenCV's Haar cascades shipped inside `opencv-python-headless` 4.x
(frontal face `haarcascade_frontalface_alt2.xml` + `haarcascade_eye.xml`). It is NOT the reference detector of
FaceSim (SCRFD) or FaceScore (RetinaFace); provenance and the UI say so.

Recipe (ours): grey image (ITU-R 601), histogram equalized; faces by `detectMultiScale(scaleFactor=1.1,
minNeighbors=5, minSize=24 px)`; eyes searched in the top 60% of each face box (`scaleFactor=1.1,
minNeighbors=3`, min size 1/10 of the face width); the eye with the largest box on each side of the face's
vertical centre line is kept. A face box in which both eyes are not found is dropped: the eyes are the
2-point alignment FaceSim needs, and requiring them removes most of the cascade's false positives (e.g. on
DreamBooth's backpack photos). Landmarks = the two eye-box centres, image-left first. Score = 1.0 (the cascade
gives no confidence). Faces are ordered by box area, largest first.
"""
from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from .types import Face, FaceDetections

FACE_CASCADE = "haarcascade_frontalface_alt2.xml"
EYE_CASCADE = "haarcascade_eye.xml"
SCALE_FACTOR = 1.1
FACE_MIN_NEIGHBORS = 5
FACE_MIN_SIZE = 24
EYE_MIN_NEIGHBORS = 3
EYE_REGION = 0.6
"""Fraction of the face box's height, from its top, searched for eyes."""


class HaarFaceDetector:
    """Frontal faces with both eyes, from the cascades bundled with OpenCV (no download, no weights setting)."""

    name = "haar"
    reference = False

    def __init__(self) -> None:
        self._faces = _cascade(FACE_CASCADE)
        self._eyes = _cascade(EYE_CASCADE)

    def describe(self) -> dict[str, Any]:
        return {"detector": self.name, "reference_detector": False,
                "weights": f"opencv-python-headless {cv2.__version__}: {FACE_CASCADE} + {EYE_CASCADE}",
                "params": f"scaleFactor {SCALE_FACTOR}, minNeighbors {FACE_MIN_NEIGHBORS}/{EYE_MIN_NEIGHBORS}, "
                          f"min face {FACE_MIN_SIZE} px, both eyes required, 2-point alignment"}

    def detect(self, rgb: np.ndarray) -> FaceDetections:
        """Faces in `rgb` (H, W, 3) uint8."""
        grey = cv2.equalizeHist(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
        found = self._faces.detectMultiScale(grey, scaleFactor=SCALE_FACTOR, minNeighbors=FACE_MIN_NEIGHBORS,
                                             minSize=(FACE_MIN_SIZE, FACE_MIN_SIZE))
        faces = [face for box in np.asarray(found).reshape(-1, 4) if (face := self._with_eyes(grey, box)) is not None]
        faces.sort(key=lambda f: -f.area)
        return FaceDetections(faces=tuple(faces), detector=self.name)

    def _with_eyes(self, grey: np.ndarray, box: np.ndarray) -> Face | None:
        x, y, w, h = (int(v) for v in box)
        region = grey[y:y + max(1, int(h * EYE_REGION)), x:x + w]
        min_eye = max(5, w // 10)
        eyes = np.asarray(self._eyes.detectMultiScale(region, scaleFactor=SCALE_FACTOR, minNeighbors=EYE_MIN_NEIGHBORS,
                                                      minSize=(min_eye, min_eye))).reshape(-1, 4)
        centre_x = w / 2.0
        sides: dict[bool, np.ndarray] = {}
        for ex, ey, ew, eh in eyes:
            right = ex + ew / 2.0 >= centre_x
            if right not in sides or ew * eh > sides[right][2] * sides[right][3]:
                sides[right] = np.array([ex, ey, ew, eh], dtype=np.float64)
        if len(sides) < 2:
            return None
        points = [(x + e[0] + e[2] / 2.0, y + e[1] + e[3] / 2.0) for e in (sides[False], sides[True])]
        return Face(box=(float(x), float(y), float(x + w), float(y + h)), score=1.0,
                    landmarks=np.asarray(points, dtype=np.float32))


def _cascade(filename: str) -> cv2.CascadeClassifier:
    from ...errors import ModelUnavailableError

    path = cv2.data.haarcascades + filename
    cascade = cv2.CascadeClassifier(path)
    if cascade.empty():
        raise ModelUnavailableError(f"the Haar cascade {path} could not be read; reinstall opencv-python-headless<5 "
                                    "(OpenCV 5 no longer ships the cascades)")
    return cascade
