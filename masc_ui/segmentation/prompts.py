"""Validation of Segment Anything prompts given in pixel coordinates of the original image.

Coordinates are XY pixels (x to the right, y down, origin at the top-left corner of the image), floats allowed,
a point inside the image satisfies 0 <= x <= W and 0 <= y <= H. Boxes are XYXY: (left, top, right, bottom).
Every problem raises `InputError` naming the prompt and saying what to do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..errors import InputError

Point = Sequence[float]
"""(x, y, label) with label 1 = foreground (positive click), 0 = background (negative click); (x, y) means label 1."""
Box = Sequence[float]
"""(x0, y0, x1, y1): left, top, right, bottom in pixels, x0 < x1 and y0 < y1."""


def check_points(points: Sequence[Point] | None, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray] | None:
    """Points as (coords float32 (N, 2) XY, labels int32 (N,)), or None when there are none.

    `size` is the image's (W, H).
    """
    if points is None or len(points) == 0:
        return None
    w, h = size
    coords, labels = [], []
    for i, point in enumerate(points):
        what = f"point {i + 1} {tuple(point) if _is_sequence(point) else point!r}"
        if not _is_sequence(point) or len(point) not in (2, 3):
            raise InputError(f"{what}: a point is (x, y) or (x, y, label) with label 1 (subject) or 0 (background)")
        x, y = _number(point[0], what, "x"), _number(point[1], what, "y")
        label = 1 if len(point) == 2 else point[2]
        if isinstance(label, (bool, np.bool_)):
            label = int(label)
        if not isinstance(label, (int, np.integer)) or label not in (0, 1):
            raise InputError(
                f"{what}: the label must be 1 (subject, positive click) or 0 (background, negative "
                f"click), got {label!r}"
            )
        if not (0 <= x <= w and 0 <= y <= h):
            raise InputError(
                f"{what} is outside the {w}x{h} image; points are (x, y) pixels with 0 <= x <= {w} and 0 <= y <= {h}"
            )
        coords.append((x, y))
        labels.append(int(label))
    return np.asarray(coords, dtype=np.float32), np.asarray(labels, dtype=np.int32)


def check_box(box: Box | None, size: tuple[int, int]) -> np.ndarray | None:
    """The box as float32 (4,) XYXY, or None. `size` is the image's (W, H)."""
    if box is None:
        return None
    what = f"box {tuple(box) if _is_sequence(box) else box!r}"
    if not _is_sequence(box) or len(box) != 4:
        raise InputError(f"{what}: a box is four numbers (x0, y0, x1, y1): left, top, right, bottom in pixels")
    x0, y0, x1, y1 = (_number(v, what, name) for v, name in zip(box, ("x0", "y0", "x1", "y1")))
    if x1 <= x0 or y1 <= y0:
        raise InputError(
            f"{what} is inverted or empty: boxes are (x0, y0, x1, y1) = (left, top, right, bottom) "
            "with x0 < x1 and y0 < y1"
        )
    w, h = size
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        raise InputError(f"{what} reaches outside the {w}x{h} image; keep 0 <= x0 < x1 <= {w} and 0 <= y0 < y1 <= {h}")
    return np.asarray([x0, y0, x1, y1], dtype=np.float32)


def check_low_res_logits(logits: object, side: int) -> np.ndarray:
    """A previous prediction's low-resolution logits as float32 (1, side, side); (side, side) is accepted too."""
    arr = np.asarray(logits, dtype=np.float32) if not isinstance(logits, np.ndarray) else logits.astype(np.float32)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.shape != (1, side, side):
        raise InputError(
            f"prev_low_res_logits must have shape ({side}, {side}) or (1, {side}, {side}) for this "
            f"model, got {tuple(np.shape(logits))}; pass SamPrediction.best_low_res_logits of a "
            "prediction on the same image"
        )
    if not np.isfinite(arr).all():
        raise InputError("prev_low_res_logits contains NaN or infinite values")
    return arr


def _is_sequence(value: object) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def _number(value: object, what: str, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{what}: {name} must be a number of pixels, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise InputError(f"{what}: {name} must be finite, got {value!r}")
    return number
