"""Paired bootstrap over samples and percentile confidence intervals.

"Paired": one set of resampled sample indices is shared by every statistic computed on the same
samples (each metric, the humans, the difference of two metrics), so their CIs and the CI of their
difference come from the same resamples. The indices depend only on (N, n_boot, seed).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

DEFAULT_N_BOOT = 2000
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    """A statistic on the observed samples and its bootstrap percentile CI (NaN when undefined)."""

    value: float
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict[str, float | None]:
        """JSON-able: NaN becomes None."""
        return {k: (None if math.isnan(v) else float(v))
                for k, v in (("value", self.value), ("ci_low", self.ci_low), ("ci_high", self.ci_high))}


def check_bootstrap_args(n_boot: int, level: float) -> None:
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise InputError(f"n_boot must be an integer >= 0 (0 = no confidence intervals); got {n_boot!r}")
    if not 0.0 < level < 1.0:
        raise InputError(f"confidence level must be within (0, 1), e.g. 0.95; got {level!r}")


def bootstrap_indices(n: int, n_boot: int = DEFAULT_N_BOOT, seed: int | None = 0) -> np.ndarray:
    """Resampled sample indices, int64 array (n_boot, n): each row draws n of range(n) with replacement."""
    check_bootstrap_args(n_boot, DEFAULT_LEVEL)
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(n_boot, n)) if n > 0 else np.zeros((n_boot, 0), dtype=np.int64)


def resample_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each of the n units occurs in each resample: float64 (n_boot, n) from indices (n_boot, k)."""
    b = indices.shape[0]
    flat = (indices + np.arange(b)[:, None] * n).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def percentile_ci(replicates: np.ndarray, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Percentile CI of bootstrap replicates (1-D; NaN replicates, where the statistic was undefined on a
    resample, are left out). (NaN, NaN) when no replicate is defined."""
    r = np.asarray(replicates, dtype=np.float64)
    r = r[~np.isnan(r)]
    if r.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.percentile(r, [tail, 100.0 - tail])
    return float(lo), float(hi)


def estimate(value: float, replicates: np.ndarray | None, level: float = DEFAULT_LEVEL) -> Estimate:
    """An `Estimate` from the observed value and its replicates (None = no bootstrap: NaN CI)."""
    if replicates is None or len(replicates) == 0:
        return Estimate(float(value), float("nan"), float("nan"))
    lo, hi = percentile_ci(replicates, level)
    return Estimate(float(value), lo, hi)
