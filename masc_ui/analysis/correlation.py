"""Spearman rho, Kendall tau-b and Pearson r, vectorized over bootstrap resamples, NaN-aware.

Every function takes x, y of shape (..., N) and returns float64 (...). A unit where x or y is NaN is
left out of that slice (pairwise-complete). Fewer than two complete pairs, or a constant x or y,
give NaN (undefined), as in scipy. On complete data the results equal `scipy.stats.pearsonr`,
`spearmanr` and `kendalltau(variant="b")` slice by slice (tested).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import kendalltau, rankdata

from ..errors import InputError

# Kendall's pairwise signs are (..., N (N - 1) / 2): O(N^2) per slice, faster than a loop over scipy's
# O(N log N) routine up to about this many units; beyond it each slice goes through scipy.
PAIRWISE_KENDALL_MAX_N = 128
# Resampled Kendall by per-level cumulative weights is used when y (or x) has at most this many values.
MAX_LEVELS = 64
# The signs are built in chunks of slices so memory stays near this many floats.
CHUNK_ELEMENTS = 8_000_000


def _complete(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise InputError(f"correlation needs x and y of the same shape; got {x.shape} and {y.shape}")
    valid = ~(np.isnan(x) | np.isnan(y))
    return np.where(valid, x, np.nan), np.where(valid, y, np.nan), valid


def pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis."""
    x, y, valid = _complete(x, y)
    n = valid.sum(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        xc = np.where(valid, x - np.nansum(x, axis=-1, keepdims=True) / n, 0.0)
        yc = np.where(valid, y - np.nansum(y, axis=-1, keepdims=True) / n, 0.0)
        sxx = (xc * xc).sum(axis=-1)
        syy = (yc * yc).sum(axis=-1)
        r = (xc * yc).sum(axis=-1) / np.sqrt(sxx * syy)
        # Constant input: its centred values are rounding noise, not spread.
        scale_x = np.maximum(1.0, np.nansum(x * x, axis=-1))
        scale_y = np.maximum(1.0, np.nansum(y * y, axis=-1))
    undefined = (n[..., 0] < 2) | (sxx <= 1e-24 * scale_x) | (syy <= 1e-24 * scale_y)
    return np.where(undefined, np.nan, np.clip(r, -1.0, 1.0))


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman rho along the last axis: Pearson r of the average ranks among the complete pairs."""
    x, y, valid = _complete(x, y)
    if x.shape[-1] == 0:
        return np.full(x.shape[:-1], np.nan)
    if valid.all():
        return pearson(rankdata(x, axis=-1), rankdata(y, axis=-1))
    return pearson(rankdata(x, axis=-1, nan_policy="omit"), rankdata(y, axis=-1, nan_policy="omit"))


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall tau-b along the last axis: sum sgn(dx) sgn(dy) / sqrt(sum sgn(dx)^2 * sum sgn(dy)^2) over
    unit pairs, which is (C - D) / sqrt((n0 - n1)(n0 - n2)) with ties in x, in y, and in both handled."""
    x, y, valid = _complete(x, y)
    lead = x.shape[:-1]
    n = x.shape[-1]
    if n < 2:
        return np.full(lead, np.nan)
    xs = x.reshape(-1, n)
    ys = y.reshape(-1, n)
    out = np.empty(xs.shape[0])
    if n > PAIRWISE_KENDALL_MAX_N:
        vs = valid.reshape(-1, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, (a, b, v) in enumerate(zip(xs, ys, vs)):
                out[i] = kendalltau(a[v], b[v], variant="b").statistic if v.sum() >= 2 else np.nan
        return out.reshape(lead)
    first, second = np.triu_indices(n, 1)
    step = max(1, CHUNK_ELEMENTS // max(1, first.size))
    for s in range(0, xs.shape[0], step):
        # sign(NaN) is NaN: a pair with a missing unit counts as tied in both, i.e. not at all.
        sx = np.sign(xs[s : s + step, first] - xs[s : s + step, second])
        sy = np.sign(ys[s : s + step, first] - ys[s : s + step, second])
        if not valid.all():
            sx = np.nan_to_num(sx)
            sy = np.nan_to_num(sy)
        num = np.einsum("ij,ij->i", sx, sy)
        den = np.sqrt(np.count_nonzero(sx, axis=1).astype(np.float64) * np.count_nonzero(sy, axis=1))
        with np.errstate(all="ignore"):
            out[s : s + step] = np.where(den > 0, num / den, np.nan)
    return np.clip(out, -1.0, 1.0).reshape(lead)


def kendall_tau_b_resampled(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray | None:
    """Kendall tau-b on bootstrap resamples given as counts, in O(B N K) for K distinct values of y (or x).

    Args:
        x, y: (N,) the observed units (NaN = missing, dropped).
        counts: (B, N) how often each unit occurs in each resample (`np.bincount` of the resample indices).
    Returns:
        (B,) tau-b of each resample, equal to `kendall_tau_b(x[idx], y[idx])`; or None when both x and y have
        more than `MAX_LEVELS` distinct values (call `kendall_tau_b` on the gathered resamples instead).

    Copies of one unit tie in both x and y, so a resample is the units weighted by their counts:
    sum over ordered pairs of sgn(dx) sgn(dy) = sum_i w_i sum_j w_j sgn(x_i - x_j) sgn(y_i - y_j), computed
    level by level of y along x's sort order from cumulative weights of the lower and higher levels;
    untied pairs in x = W^2 - sum over x-tie groups of (group weight)^2, and likewise in y.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    valid = ~(np.isnan(x) | np.isnan(y))
    x, y = x[valid], y[valid]
    w = np.asarray(counts, dtype=np.float64)[:, valid]
    y_values, y_levels = np.unique(y, return_inverse=True)
    if y_values.size > MAX_LEVELS:
        x_values = np.unique(x)
        if x_values.size > MAX_LEVELS:
            return None
        x, y = y, x
        y_values, y_levels = np.unique(y, return_inverse=True)
    n, k = x.size, y_values.size
    if n < 2:
        return np.full(w.shape[0], np.nan)
    order = np.argsort(x, kind="stable")
    xs, levels, ws = x[order], y_levels[order], w[:, order]
    new_group = np.concatenate([[True], xs[1:] != xs[:-1]])
    group = np.cumsum(new_group) - 1
    starts = np.flatnonzero(new_group)
    ends = np.concatenate([starts[1:], [n]])  # one past each x-tie group's last sorted position
    first, last = starts[group], ends[group]
    out = np.empty(w.shape[0])
    step = max(1, CHUNK_ELEMENTS // n)
    for s in range(0, w.shape[0], step):
        wc = ws[s : s + step]
        b = wc.shape[0]
        num = np.zeros(b)
        level_totals = np.empty((b, k))
        for level in range(k):
            at = levels == level
            # Weight at sorted positions < p of units with a lower / higher y level: cum[:, p].
            lower = np.concatenate([np.zeros((b, 1)), np.cumsum(wc * (levels < level), axis=1)], axis=1)
            higher = np.concatenate([np.zeros((b, 1)), np.cumsum(wc * (levels > level), axis=1)], axis=1)
            f, e = first[at], last[at]
            # sum_j w_j sgn(x_i - x_j) sgn(y_i - y_j) for each unit i at this level
            concordant = lower[:, f] - higher[:, f] + (higher[:, -1:] - higher[:, e]) - (lower[:, -1:] - lower[:, e])
            num += (wc[:, at] * concordant).sum(axis=1)
            level_totals[:, level] = wc[:, at].sum(axis=1)
        total = wc.sum(axis=1)
        cw = np.concatenate([np.zeros((b, 1)), np.cumsum(wc, axis=1)], axis=1)
        group_w = cw[:, ends] - cw[:, starts]
        untied_x = total**2 - (group_w**2).sum(axis=1)
        untied_y = total**2 - (level_totals**2).sum(axis=1)
        with np.errstate(all="ignore"):
            out[s : s + step] = np.where((untied_x > 0) & (untied_y > 0), num / np.sqrt(untied_x * untied_y), np.nan)
    return np.clip(out, -1.0, 1.0)


CORRELATIONS = {"spearman": spearman, "kendall": kendall_tau_b, "pearson": pearson}
"""Name -> vectorized correlation function."""
