"""Krippendorff's alpha: the interval closed form for two raters (metric vs human) and the general
nominal / ordinal / interval / ratio alpha of several raters through the `krippendorff` package.

Closed form (METRICS.md): for N units each rated by both raters, x (metric) and y (human),
    D_o = mean((x - y)^2)
    D_e = 2 M Var(v) / (M - 1),  v = the M = 2N pooled values, Var the *population* variance (ddof=0)
    alpha = 1 - D_o / D_e.
This is Krippendorff's interval alpha exactly: with two values per unit, D_o = (1/n) sum_u 2 (x_u - y_u)^2
over n = 2N pairable values, and D_e = (1/(n(n-1))) sum_{i != j} (v_i - v_j)^2 = 2 n Var_pop(v) / (n - 1).
A unit with one of the two values missing is not pairable and is dropped, as Krippendorff prescribes.
"""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np

from ..errors import InputError

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def interval_alpha_pairs(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Interval alpha between two raters, vectorized over leading axes.

    Args:
        x, y: float arrays of the same shape (..., N): N units; NaN = missing (the unit is dropped).
    Returns:
        float64 array of shape (...): alpha per leading index; NaN where fewer than one pair remains or
        all pooled values are equal (D_e = 0, where the package raises "more than one value in the domain").
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise InputError(f"interval alpha needs two rating arrays of the same shape; got {x.shape} and {y.shape}")
    valid = ~(np.isnan(x) | np.isnan(y))
    xv = np.where(valid, x, 0.0)
    yv = np.where(valid, y, 0.0)
    n_pairs = valid.sum(axis=-1)
    m = 2 * n_pairs
    with np.errstate(all="ignore"):
        d_o = ((xv - yv) ** 2).sum(axis=-1) / n_pairs
        mean = (xv.sum(axis=-1) + yv.sum(axis=-1)) / m
        mu = mean[..., None]
        var = (
            (np.where(valid, xv - mu, 0.0) ** 2).sum(axis=-1) + (np.where(valid, yv - mu, 0.0) ** 2).sum(axis=-1)
        ) / m
        d_e = 2.0 * m * var / (m - 1)
        alpha = 1.0 - d_o / d_e
    # Equal pooled values leave D_e zero up to rounding; call that undefined, like the package does.
    degenerate = (n_pairs < 1) | ~(d_e > 1e-12 * np.maximum(1.0, mean**2))
    return np.where(degenerate, np.nan, alpha)


def interval_alpha(x: np.ndarray, y: np.ndarray) -> float:
    """Interval alpha between two raters' ratings of N units (1-D arrays, NaN = missing). See module doc."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1:
        raise InputError(f"interval_alpha takes two 1-D arrays of N units; got shapes {x.shape} and {y.shape}")
    return float(interval_alpha_pairs(x, y))


def krippendorff_alpha(reliability: np.ndarray, level: str = "interval") -> float:
    """Krippendorff's alpha of several raters through the `krippendorff` package.

    Args:
        reliability: array (raters, units), float; NaN = that rater did not rate that unit.
        level: `nominal`, `ordinal`, `interval` or `ratio`.
    Returns:
        alpha, or NaN when it is undefined: fewer than one unit rated by two raters, or a single value
        in the whole domain (the package raises for these).
    """
    if level not in LEVELS:
        raise InputError(f"alpha level of measurement must be one of {', '.join(LEVELS)}; got {level!r}")
    data = np.asarray(reliability, dtype=np.float64)
    if data.ndim != 2:
        raise InputError(f"reliability data must be a 2-D array (raters, units); got shape {data.shape}")
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    if data.shape[0] < 2 or not pairable.any():
        return float("nan")
    values = data[:, pairable]
    if np.unique(values[~np.isnan(values)]).size < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(krippendorff.alpha(reliability_data=values, level_of_measurement=level))


MAX_VALUES = 64
"""`krippendorff_alpha_resampled` handles data with at most this many distinct values (ratings); beyond it
callers fall back to one package call per resample."""


def krippendorff_alpha_resampled(
    reliability: np.ndarray, counts: np.ndarray, level: str = "interval"
) -> np.ndarray | None:
    """Krippendorff's alpha of several raters on each bootstrap resample of the units, in one pass.

    Args:
        reliability: (raters, units) float, NaN = not rated.
        counts: (B, units) how often each unit occurs in each resample.
        level: `nominal`, `ordinal`, `interval` or `ratio`.
    Returns:
        (B,) alpha per resample, equal to `krippendorff_alpha(reliability[:, idx], level)` for the resample's
        indices `idx` (NaN where that is undefined); None when the data have more than `MAX_VALUES` values.

    The package's algorithm with the resample as unit weights: the coincidence matrix is linear in the
    units, o_b = sum_u counts[b, u] * (n_u n_u^T - diag(n_u)) / (m_u - 1), with n_u the unit's value counts
    and m_u its number of ratings; n_c = row sums of o_b; alpha = 1 - sum(o_b * d) / sum(e_b * d), with
    e_b = (n n^T - diag(n)) / (sum(n) - 1) and d the level's squared distance (ordinal: from the n_c of b).
    """
    if level not in LEVELS:
        raise InputError(f"alpha level of measurement must be one of {', '.join(LEVELS)}; got {level!r}")
    data = np.asarray(reliability, dtype=np.float64)
    weights = np.asarray(counts, dtype=np.float64)
    if data.ndim != 2 or weights.ndim != 2 or weights.shape[1] != data.shape[1]:
        raise InputError(
            f"reliability (raters, units) and counts (resamples, units) disagree: {data.shape}, {weights.shape}"
        )
    domain = np.unique(data[~np.isnan(data)])
    if domain.size > MAX_VALUES:
        return None
    v = domain.size
    if v < 2:
        return np.full(weights.shape[0], np.nan)
    unit_counts = (data.T[:, :, None] == domain[None, None, :]).sum(axis=1).astype(np.float64)  # (N, V)
    m = unit_counts.sum(axis=1)
    per_unit = unit_counts[:, :, None] * unit_counts[:, None, :] - unit_counts[:, :, None] * np.eye(v)[None]
    per_unit /= (np.maximum(m, 2) - 1)[:, None, None]
    o = (weights @ per_unit.reshape(len(m), v * v)).reshape(-1, v, v)  # (B, V, V)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    with np.errstate(all="ignore"):
        e = (n_c[:, :, None] * n_c[:, None, :] - n_c[:, :, None] * np.eye(v)[None]) / (n - 1)[:, None, None]
    d = _distances(domain, n_c, level)
    with np.errstate(all="ignore"):
        observed = (o * d).sum(axis=(1, 2))
        expected = (e * d).sum(axis=(1, 2))
        alpha = 1.0 - observed / expected
    # One value only in the resample (package: "more than one value in the domain"), or no pairable unit.
    one_value = (n_c > 0).sum(axis=1) < 2
    return np.where(one_value | ~(expected > 0), np.nan, alpha)


def _distances(domain: np.ndarray, n_c: np.ndarray, level: str) -> np.ndarray:
    """Squared distances between domain values, (V, V) or per resample (B, V, V) for ordinal."""
    a, b = domain[:, None], domain[None, :]
    if level == "nominal":
        return (a != b).astype(np.float64)
    if level == "interval":
        return (a - b) ** 2
    if level == "ratio":
        total = a + b
        return np.divide(a - b, total, out=np.zeros((domain.size, domain.size)), where=total != 0) ** 2
    idx = np.arange(domain.size)
    lo, hi = np.minimum(idx[:, None], idx[None, :]), np.maximum(idx[:, None], idx[None, :])
    cum = np.concatenate([np.zeros((n_c.shape[0], 1)), np.cumsum(n_c, axis=1)], axis=1)  # cum[:, i] = sum n_c[:i]
    between = cum[:, hi + 1] - cum[:, lo]  # sum of n_g for g from lo to hi inclusive
    return (between - (n_c[:, idx[:, None]] + n_c[:, idx[None, :]]) / 2.0) ** 2


def metric_vs_raters_alpha(metric: np.ndarray, ratings: np.ndarray) -> np.ndarray:
    """Interval alpha of a metric against each human rater (group), averaged over raters.

    Args:
        metric: (..., N) metric values already normalized to [0, 1]; NaN = missing.
        ratings: (R, ..., N) human ratings already normalized to [0, 1] (rating / 4); NaN = not rated.
    Returns:
        (...) mean over the R raters of the per-rater alpha, ignoring raters whose alpha is undefined;
        NaN when none is defined. With R = 1 this is the plain two-rater alpha.
    """
    ratings = np.asarray(ratings, dtype=np.float64)
    if ratings.shape[0] == 0:
        return np.full(np.shape(metric)[:-1], np.nan)
    per_rater = np.stack([interval_alpha_pairs(metric, r) for r in ratings])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(per_rater, axis=0)
