"""What a face detector returns, in original-image pixel coordinates (x right, y down, float)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Face:
    """One detected face."""

    box: tuple[float, float, float, float]
    """(x0, y0, x1, y1) pixels of the original image."""
    score: float
    """The detector's confidence."""
    landmarks: np.ndarray | None
    """(K, 2) float32 (x, y) pixels: K = 5 (left eye, right eye, nose, left and right mouth corners, as the
    ArcFace template; every detector here gives these) or K = 2 (left eye, right eye: alignment accepts them); None
    when the detector gives none."""

    @property
    def area(self) -> float:
        x0, y0, x1, y1 = self.box
        return max(0.0, x1 - x0) * max(0.0, y1 - y0)

    def to_json(self) -> dict[str, Any]:
        return {
            "box": [round(float(v), 2) for v in self.box],
            "score": round(float(self.score), 4),
            "landmarks": None if self.landmarks is None else np.round(self.landmarks, 2).tolist(),
        }


@dataclass(frozen=True)
class FaceDetections:
    """Every face a detector found in one image (best first as the detector orders them)."""

    faces: tuple[Face, ...]
    detector: str
    """Registry name of the detector, e.g. `scrfd` or `mtcnn`."""
    padded_retry: bool = False
    """True when the faces were found only on the image padded by 25% with grey 128 (SCRFD's retry); coordinates
    are shifted back to the original image."""

    @property
    def largest(self) -> Face | None:
        """The face with the largest box (the one FaceSim uses, as OpenS2V), or None."""
        return max(self.faces, key=lambda f: f.area) if self.faces else None

    def to_json(self) -> dict[str, Any]:
        return {
            "detector": self.detector,
            "padded_retry": self.padded_retry,
            "faces": [f.to_json() for f in self.faces],
        }
