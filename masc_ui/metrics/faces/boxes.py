"""Greedy non-maximum suppression with the inclusive-pixel area convention (w = x1 - x0 + 1) that SCRFD
(insightface) and RetinaFace (Pytorch_Retinaface, batch-face) both use."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Box = tuple[float, float, float, float]
"""(x0, y0, x1, y1) pixels, x right, y down."""


def as_box(values: Sequence[float] | np.ndarray) -> Box:
    """The 4 numbers `values` (x0, y0, x1, y1) as a tuple of Python floats."""
    x0, y0, x1, y1 = (float(v) for v in values)
    return x0, y0, x1, y1


def nms(boxes: np.ndarray, scores: np.ndarray, threshold: float) -> np.ndarray:
    """Indices (int64) of the boxes kept, best score first.

    `boxes` (N, 4) float (x0, y0, x1, y1), `scores` (N,). A box is dropped when its IoU with a kept, better box
    is > `threshold`. Ties in score keep the earlier box first.
    """
    x0, y0, x1, y1 = (boxes[:, i].astype(np.float64) for i in range(4))
    areas = (x1 - x0 + 1) * (y1 - y0 + 1)
    order = np.argsort(-scores, kind="stable")
    keep = []
    while order.size:
        i = order[0]
        keep.append(i)
        rest = order[1:]
        w = np.maximum(0.0, np.minimum(x1[i], x1[rest]) - np.maximum(x0[i], x0[rest]) + 1)
        h = np.maximum(0.0, np.minimum(y1[i], y1[rest]) - np.maximum(y0[i], y0[rest]) + 1)
        inter = w * h
        iou = inter / (areas[i] + areas[rest] - inter)
        order = rest[iou <= threshold]
    return np.asarray(keep, dtype=np.int64)
