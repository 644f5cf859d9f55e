"""Pluggable face detection: a registry of detector backends (`DETECTORS`), the choice of backend for each
face metric (`choose_detector`), and the service that detects each image once (`FaceDetectionService`).

Policy (the lead's decision, README "Face metrics"): METRICS.md names SCRFD (insightface `buffalo_l`) for
FaceSim and RetinaFace-MobileNet0.25 for FaceScore. When a metric's detector weights are not configured (the
setting is unset and the profile's default is not on this machine / not downloadable, or the profile has
none, as `demo`), that metric falls back to MTCNN with the weights shipped inside the PyPI package `mtcnn`
(`faces.mtcnn`; five landmarks, as the reference detectors) — then FaceSim and FaceScore use the same detector
and one detection per image serves both. A detector setting that is set but unusable is
an error, never a silent fallback. Provenance records the detector, its weights and whether it is the
reference one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ...caching import LruCache
from ...errors import ModelUnavailableError
from ...imaging import InputImage
from ...models.loaded_models import ModelRegistry
from ...models.profiles import ModelIds
from ...models.weight_files import resolve_weights_file
from ...settings import Settings
from .types import FaceDetections

CACHE_SIZE = 4096
"""Detections kept per detector (they are small: a few boxes and points per image)."""


class FaceDetector(Protocol):
    name: str
    reference: bool

    def describe(self) -> dict[str, Any]:
        """JSON-able: detector, reference_detector, weights, params (goes into provenance)."""

    def detect(self, rgb: np.ndarray) -> FaceDetections:
        """Faces of one (H, W, 3) uint8 RGB image."""


@dataclass(frozen=True)
class DetectorChoice:
    """Which backend a face metric uses, with what weights, and why."""

    name: str
    """Key of `DETECTORS`."""
    weights: str | None
    """Model-pack folder or weights file; None for the packaged MTCNN."""
    note: str = ""
    """Why the fallback was chosen (empty for the reference detector)."""


def _build_scrfd(weights: str | None, device: str) -> FaceDetector:
    from .scrfd import ScrfdDetector

    return ScrfdDetector(Path(weights or ""), device=device)


def _build_retinaface(weights: str | None, device: str) -> FaceDetector:
    from ...models.nets.retinaface import load_retinaface
    from .retinaface import RetinaFaceDetector

    return RetinaFaceDetector(load_retinaface(Path(weights or ""), device=device), weights=str(weights), device=device)


def _build_mtcnn(weights: str | None, device: str) -> FaceDetector:
    from .mtcnn import MtcnnFaceDetector

    return MtcnnFaceDetector(device=device)


DETECTORS: dict[str, Callable[[str | None, str], FaceDetector]] = {
    "scrfd": _build_scrfd,
    "retinaface": _build_retinaface,
    "mtcnn": _build_mtcnn,
}
"""name -> build(weights, device)."""


def list_detectors() -> list[str]:
    return list(DETECTORS)


def choose_detector(metric: str, settings: Settings, ids: ModelIds) -> DetectorChoice:
    """The detector of `metric` (`facesim`: SCRFD, `facescore`: RetinaFace) under the policy of this module."""
    if metric == "facesim":
        return _choose_scrfd(settings, ids)
    if metric == "facescore":
        return _choose_retinaface(settings, ids)
    raise KeyError(f"no face detector policy for metric {metric!r}")


def _choose_scrfd(settings: Settings, ids: ModelIds) -> DetectorChoice:
    if ids.face_detector_dir:
        pack = Path(ids.face_detector_dir).expanduser()
        if pack.is_dir() or settings.face_detector_dir is not None:
            return DetectorChoice("scrfd", str(pack))
        why = f"the profile's SCRFD pack {ids.face_detector_dir} is not on this machine"
    else:
        why = "no SCRFD model pack is configured"
    return DetectorChoice(
        "mtcnn",
        None,
        f"fallback detector, not the reference SCRFD: {why} (set "
        "MASC_FACE_DETECTOR_DIR to an unzipped insightface buffalo_l folder)",
    )


def _choose_retinaface(settings: Settings, ids: ModelIds) -> DetectorChoice:
    from ...models.nets.retinaface import RELEASED_FILE

    if ids.retinaface:
        try:
            path = resolve_weights_file(
                ids.retinaface,
                filename=RELEASED_FILE,
                what="RetinaFace weights",
                setting="retinaface_weights",
                cache_dir=settings.resolved_cache_dir,
            )
            return DetectorChoice("retinaface", str(path))
        except ModelUnavailableError as exc:
            if settings.retinaface_weights is not None:
                raise
            why = f"the profile's RetinaFace weights are unavailable ({exc})"
    else:
        why = "no RetinaFace weights are configured"
    return DetectorChoice(
        "mtcnn",
        None,
        f"fallback detector, not the reference RetinaFace: {why} (set MASC_RETINAFACE_WEIGHTS to {RELEASED_FILE})",
    )


class FaceDetectionService:
    """One detector and its detections, cached by (image sha256, detector name) in an owned `LruCache`.

    `detections` counts the images that went through the detector (not the cached ones)."""

    def __init__(self, detector: FaceDetector, *, cache_size: int = CACHE_SIZE) -> None:
        self.detector = detector
        self.cache: LruCache[FaceDetections] = LruCache(cache_size)
        self.detections = 0
        self._count_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.detector.name

    def describe(self, choice: DetectorChoice | None = None) -> dict[str, Any]:
        """The detector's description, plus why a metric fell back to it (`choice.note`)."""
        info = dict(self.detector.describe())
        if choice is not None and choice.note:
            info["note"] = choice.note
        return info

    def detect_many(self, images: Sequence[InputImage]) -> list[FaceDetections]:
        """Faces of each image, in order; each distinct image is detected once per detector."""
        found: dict[str, FaceDetections] = {}
        todo: dict[str, InputImage] = {}
        for img in images:
            if img.sha256 in found or img.sha256 in todo:
                continue
            cached = self.cache.get((img.sha256, self.name))
            if cached is None:
                todo[img.sha256] = img
            else:
                found[img.sha256] = cached
        if todo:
            arrays = [np.asarray(img.pixels.convert("RGB")) for img in todo.values()]
            many = getattr(self.detector, "detect_many", None)
            results = many(arrays) if many is not None else [self.detector.detect(a) for a in arrays]
            with self._count_lock:
                self.detections += len(arrays)
            for sha, result in zip(todo, results):
                self.cache.put((sha, self.name), result)
                found[sha] = result
        return [found[img.sha256] for img in images]


def shared_face_detection(
    models: ModelRegistry, settings: Settings, choice: DetectorChoice, device: str
) -> FaceDetectionService:
    """The process-wide detection service of `choice`: FaceSim and FaceScore get the same object (and so the
    same detections) whenever they resolve to the same detector and weights."""
    key = ("face-detector", choice.name, choice.weights, device)
    return models.get(key, lambda: FaceDetectionService(DETECTORS[choice.name](choice.weights, device)))
