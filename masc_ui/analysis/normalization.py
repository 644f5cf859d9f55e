"""The normalization convention that puts metrics and human ratings on one [0, 1] scale before alpha.

Convention (DreamBench++ / MaSC, METRICS.md "Agreement between a metric and humans"):
- a *continuous* metric (cosines, CP, PF, PickScore, ...) is min-max normalized to [0, 1] over the pooled
  set of samples being compared (one table row: all samples, one method or one category);
- a *rating* (a human's 0-4, or an integer judge rating such as GPT-4o's 0-4) is mapped from its declared
  range to [0, 1]: (v - lo) / (hi - lo), i.e. divided by 4 for the 0-4 scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..errors import InputError

KINDS = ("continuous", "rating")
HUMAN_RATING_RANGE = (0.0, 4.0)
"""The human rating scale of the DreamBench++ protocol (integers 0-4)."""


@dataclass(frozen=True)
class MetricScale:
    """How a metric's values are mapped to [0, 1] for Krippendorff's alpha.

    `kind="continuous"`: min-max over the compared set (`value_range` is ignored for alpha).
    `kind="rating"`: (v - lo) / (hi - lo) with `value_range=(lo, hi)`, the declared scale (default 0-4).
    """

    kind: Literal["continuous", "rating"] = "continuous"
    value_range: tuple[float, float] = HUMAN_RATING_RANGE

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"metric scale kind must be one of {', '.join(KINDS)}; got {self.kind!r}")
        lo, hi = (float(v) for v in self.value_range)
        if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
            raise InputError(f"metric scale value_range must be finite (lo, hi) with hi > lo; got {self.value_range!r}")
        object.__setattr__(self, "value_range", (lo, hi))


CONTINUOUS = MetricScale("continuous")
RATING_0_4 = MetricScale("rating", HUMAN_RATING_RANGE)


def scale_for(kind: str, value_range: tuple[float, float] | None = None) -> MetricScale:
    """The scale of a metric from its declared kind and range (e.g. a registry spec's `range`).

    A `rating` without a range is taken to be on the 0-4 scale.
    """
    if kind == "rating":
        return MetricScale("rating", value_range or HUMAN_RATING_RANGE)
    return MetricScale(kind)  # validates the kind


def minmax(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Min-max normalize `values` to [0, 1] along `axis`, ignoring NaN (NaN stays NaN).

    A constant slice (max == min) cannot be min-max normalized: it becomes all NaN, so the statistics that
    use it come out undefined (NaN) instead of an arbitrary number. Shape is kept; dtype float64.
    """
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(all="ignore"):
        lo = np.nanmin(v, axis=axis, keepdims=True) if v.size else v
        hi = np.nanmax(v, axis=axis, keepdims=True) if v.size else v
        span = hi - lo
        out = np.where(span > 0, (v - lo) / np.where(span > 0, span, 1.0), np.nan)
    return np.where(np.isnan(v), np.nan, out)


def normalize_metric(values: np.ndarray, scale: MetricScale = CONTINUOUS, axis: int = -1) -> np.ndarray:
    """Metric values (any shape, NaN = missing) mapped to [0, 1] per `scale` (min-max along `axis` when
    continuous; fixed declared range when a rating). Returns float64 of the same shape."""
    v = np.asarray(values, dtype=np.float64)
    if scale.kind == "continuous":
        return minmax(v, axis=axis)
    lo, hi = scale.value_range
    return (v - lo) / (hi - lo)


def normalize_ratings(ratings: np.ndarray, rating_range: tuple[float, float] = HUMAN_RATING_RANGE) -> np.ndarray:
    """Human ratings (any shape, NaN = missing) divided onto [0, 1]: (r - lo) / (hi - lo); 0-4 -> r / 4."""
    return normalize_metric(ratings, MetricScale("rating", rating_range))
