"""Face alignment to the ArcFace template (insightface `norm_crop`), written here as a closed-form
least-squares similarity transform.

A similarity maps (x, y) -> (a*x - b*y + tx, b*x + a*y + ty) (scale s = hypot(a, b), rotation atan2(b, a), no
reflection). The (a, b, tx, ty) minimizing the summed squared distance to the template points is, with
centred points (x', y') -> (u', v'):  a = sum(x'u' + y'v') / sum(x'^2 + y'^2),  b = sum(x'v' - y'u') / sum(...),
t = mean(dst) - [a -b; b a] mean(src) — the same optimum as Umeyama's method used by scikit-image's
`SimilarityTransform.estimate` (insightface's choice).

- 5 landmarks (SCRFD): the ArcFace template, scaled by size / 112 (`norm_crop` to 224 for FaceSim).
- 2 landmarks (eye centres only, for a detector that gives no more): the template's two eye points; two point
  pairs fix a similarity exactly, so the eyes land exactly on the template's eyes. No detector of ours gives 2
  today (SCRFD, RetinaFace and the packaged MTCNN give 5); FaceSim's extras say how many were used.
"""

from __future__ import annotations

import cv2
import numpy as np

from ...errors import InputError

ARCFACE_TEMPLATE = np.array(
    [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655], [70.7299, 92.2041]],
    dtype=np.float32,
)
"""(5, 2) (x, y) of left eye, right eye, nose tip, left and right mouth corners in a 112x112 ArcFace crop."""
NORM_CROP_SIZE = 224
"""FaceSim aligns to 224 (OpenS2V `norm_crop(..., image_size=224)`), then resizes to the recognizer's 112."""
RECOGNIZER_SIZE = 112


def template(n_points: int, size: int) -> np.ndarray:
    """The (n_points, 2) float64 template for an output of `size` px: 5 points, or the 2 eye points."""
    if n_points not in (2, 5):
        raise InputError(f"face alignment takes 5 landmarks (or 2 eye centres), got {n_points}")
    if size % 112:
        raise InputError(f"ArcFace alignment needs a crop size that is a multiple of 112, got {size}")
    return ARCFACE_TEMPLATE[:n_points].astype(np.float64) * (size / 112.0)


def similarity_transform(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """(2, 3) float64 affine matrix of the least-squares similarity taking `src` (K, 2) onto `dst` (K, 2), K >= 2.

    Raises `InputError` when the source points all coincide (no scale can be told)."""
    src = np.asarray(src, dtype=np.float64)
    dst = np.asarray(dst, dtype=np.float64)
    if src.shape != dst.shape or src.ndim != 2 or src.shape[1] != 2 or len(src) < 2:
        raise InputError(f"similarity_transform needs two (K, 2) arrays with K >= 2, got {src.shape} and {dst.shape}")
    src_mean, dst_mean = src.mean(0), dst.mean(0)
    x, y = (src - src_mean).T
    u, v = (dst - dst_mean).T
    norm = float((x * x + y * y).sum())
    if norm <= 1e-12:
        raise InputError("the face landmarks all coincide; the face cannot be aligned")
    a = float((x * u + y * v).sum()) / norm
    b = float((x * v - y * u).sum()) / norm
    linear = np.array([[a, -b], [b, a]])
    return np.hstack([linear, (dst_mean - linear @ src_mean)[:, None]])


def norm_crop(rgb: np.ndarray, landmarks: np.ndarray, size: int = NORM_CROP_SIZE) -> np.ndarray:
    """(size, size, 3) uint8: `rgb` (H, W, 3) uint8 warped so that `landmarks` (5 or 2, 2) land on the template
    (bilinear, black outside the image: `cv2.warpAffine`'s defaults, as insightface)."""
    matrix = similarity_transform(landmarks, template(len(landmarks), size))
    return cv2.warpAffine(rgb, matrix, (size, size), borderValue=0.0)


def aligned_face(rgb: np.ndarray, landmarks: np.ndarray) -> np.ndarray:
    """(112, 112, 3) uint8 RGB crop the recognizer reads: `norm_crop` to 224, then `cv2.resize` to 112 (bilinear),
    as OpenS2V's `facesim_cur`."""
    crop = norm_crop(rgb, landmarks, NORM_CROP_SIZE)
    return cv2.resize(crop, (RECOGNIZER_SIZE, RECOGNIZER_SIZE), interpolation=cv2.INTER_LINEAR)
