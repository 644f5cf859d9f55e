"""Paired bootstrap over samples and percentile confidence intervals.

"Paired": one set of resampled sample indices is shared by every statistic computed on the same
samples (each metric, the humans, the difference of two metrics), so their CIs and the CI of their
difference come from the same resamples. The indices depend only on (N, n_boot, seed).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

DEFAULT_N_BOOT = 2000
DEFAULT_LEVEL = 0.95
MAX_N_BOOT = 20_000
"""Most resamples the leaderboard and pairwise analyses accept: one request must not exhaust the memory or the
time of a process that serves every user."""
INDEX_CHUNK = 250
"""Resample rows drawn per step by `bootstrap_index_chunks` (bounds memory at INDEX_CHUNK x n indices)."""


@dataclass(frozen=True)
class Estimate:
    """A statistic on the observed samples and its bootstrap percentile CI (NaN when undefined)."""

    value: float
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict[str, float | None]:
        """JSON-able: NaN becomes None."""
        return {
            k: (None if math.isnan(v) else float(v))
            for k, v in (("value", self.value), ("ci_low", self.ci_low), ("ci_high", self.ci_high))
        }


def check_bootstrap_args(n_boot: int, level: float) -> None:
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise InputError(f"n_boot must be an integer >= 0 (0 = no confidence intervals); got {n_boot!r}")
    if not 0.0 < level < 1.0:
        raise InputError(f"confidence level must be within (0, 1), e.g. 0.95; got {level!r}")


def check_resamples(n_boot: int, level: float) -> None:
    """`check_bootstrap_args` plus the upper bound `MAX_N_BOOT`."""
    check_bootstrap_args(n_boot, level)
    if n_boot > MAX_N_BOOT:
        raise InputError(
            f"n_boot must be at most {MAX_N_BOOT:,} resamples (0 = no confidence intervals); got {n_boot:,}"
        )


def bootstrap_indices(
    n: int, n_boot: int = DEFAULT_N_BOOT, seed: int | np.random.SeedSequence | None = 0
) -> np.ndarray:
    """Resampled sample indices, int64 array (n_boot, n): each row draws n of range(n) with replacement."""
    check_bootstrap_args(n_boot, DEFAULT_LEVEL)
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(n_boot, n)) if n > 0 else np.zeros((n_boot, 0), dtype=np.int64)


def bootstrap_index_chunks(
    n: int, n_boot: int = DEFAULT_N_BOOT, seed: int | np.random.SeedSequence | None = 0, chunk: int = INDEX_CHUNK
) -> Iterator[np.ndarray]:
    """The rows of `bootstrap_indices(n, n_boot, seed)` in consecutive blocks of at most `chunk` rows (int64
    (rows, n) each), drawn from the same generator one block at a time so memory stays at chunk x n."""
    check_bootstrap_args(n_boot, DEFAULT_LEVEL)
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, chunk):
        rows = min(chunk, n_boot - start)
        yield rng.integers(0, n, size=(rows, n)) if n > 0 else np.zeros((rows, 0), dtype=np.int64)


def child_seeds(seed: int | None, k: int) -> list[np.random.SeedSequence | None]:
    """k independent seeds derived from `seed` (`SeedSequence(seed).spawn(k)`), one per stratum (group) of a
    stratified bootstrap, so that strata of equal size do not share resample rows; None stays None (unseeded)."""
    if seed is None:
        return [None] * k
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed must be an integer >= 0 (or None for an unseeded run); got {seed!r}")
    return list(np.random.SeedSequence(seed).spawn(k))


def resample_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each of the n units occurs in each resample: float64 (n_boot, n) from indices (n_boot, k)."""
    b = indices.shape[0]
    flat = (indices + np.arange(b)[:, None] * n).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def resampled_nanmeans(values: np.ndarray, n_boot: int, seed: int | np.random.SeedSequence | None) -> np.ndarray:
    """Each column's mean over the drawn rows that have a value, per resample of the rows.

    Args:
        values: float (N, K), NaN = no value. The rows are resampled (`bootstrap_index_chunks(N, n_boot, seed)`),
            one set of resamples for all K columns (paired).
    Returns:
        float64 (n_boot, K): equal to `np.nanmean(values[idx], axis=0)` per resample `idx`; NaN where a resample
        drew no row with a value.
    """
    n = values.shape[0]
    present = (~np.isnan(values)).astype(np.float64)
    filled = np.nan_to_num(values)
    parts = [np.zeros((0, values.shape[1]))]
    for idx in bootstrap_index_chunks(n, n_boot, seed):
        weights = resample_counts(idx, n)
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append((weights @ filled) / (weights @ present))
    return np.concatenate(parts)


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
