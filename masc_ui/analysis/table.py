"""The agreement table: each metric vs humans and humans vs humans, per group, with bootstrap CIs.

Conventions (METRICS.md "Agreement between a metric and humans", and our choices where it is silent):
- A metric row uses the samples of its group that have a value of the metric and at least one human
  rating of the criterion.
- alpha: interval Krippendorff alpha of the normalized metric (continuous metrics min-max normalized over
  the row's samples, ratings by their declared range) against each rater's ratings / rating range,
  averaged over raters (DreamBench++: the two groups are the two raters).
- Spearman, Kendall tau-b, Pearson: between the raw metric value and the per-sample mean of the human
  ratings (our choice; rank statistics and Pearson do not depend on the normalization).
- Human row: alpha among all raters of the group through the `krippendorff` package (level `human_level`,
  interval by default; missing ratings allowed), and correlations averaged over rater pairs, each on the
  samples both raters rated.
- CIs: paired bootstrap over the row's samples (`n_boot` resamples, `seed`), percentile interval at
  `level`; every statistic, including the min-max normalization, is recomputed on each resample.
  Resamples on which a statistic is undefined are left out of its interval.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .alpha import LEVELS, krippendorff_alpha, krippendorff_alpha_resampled, metric_vs_raters_alpha
from .bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_N_BOOT,
    Estimate,
    bootstrap_indices,
    check_bootstrap_args,
    estimate,
    resample_counts,
)
from .correlation import CORRELATIONS, kendall_tau_b, kendall_tau_b_resampled
from .data import POOLED, AgreementData, AgreementRecord, check_grouping
from .normalization import MetricScale, normalize_metric, normalize_ratings

HUMANS = "humans"
"""`metric` name of the human-vs-human rows."""
STATISTICS = ("alpha", "spearman", "kendall", "pearson")
BOOT_CHUNK = 250
"""Resamples evaluated per vectorized step (bounds memory at BOOT_CHUNK x raters x N floats)."""


@dataclass(frozen=True)
class AgreementRow:
    """Agreement of one metric (or of the humans among themselves) with humans on one group of samples."""

    metric: str
    """Metric name, or `HUMANS` for the human-vs-human row."""
    group: str
    """`all` (pooled) or the method / category name."""
    n: int
    """Samples used."""
    n_raters: int
    """Human raters (groups) with at least one rating among those samples."""
    alpha: Estimate
    spearman: Estimate
    kendall: Estimate
    pearson: Estimate

    @property
    def is_human(self) -> bool:
        return self.metric == HUMANS

    def stat(self, name: str) -> Estimate:
        if name not in STATISTICS:
            raise InputError(f"statistic must be one of {', '.join(STATISTICS)}; got {name!r}")
        return getattr(self, name)


@dataclass(frozen=True)
class AgreementTable:
    """All rows of one analysis plus the parameters that produced them."""

    criterion: str
    by: str | None
    n_boot: int
    seed: int | None
    level: float
    human_level: str
    rows: tuple[AgreementRow, ...]

    def row(self, metric: str, group: str = POOLED) -> AgreementRow:
        for r in self.rows:
            if r.metric == metric and r.group == group:
                return r
        raise KeyError(f"no agreement row for metric {metric!r} in group {group!r}")

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(r.group for r in self.rows))

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(r.metric for r in self.rows if not r.is_human))


@dataclass(frozen=True)
class MetricDifference:
    """`statistic`(metric_a) - `statistic`(metric_b) on the samples both have, with a paired bootstrap CI."""

    metric_a: str
    metric_b: str
    statistic: str
    group: str
    n: int
    a: Estimate
    b: Estimate
    difference: Estimate


def agreement_table(
    data: AgreementData,
    metrics: list[str] | None = None,
    criterion: str = "cp",
    by: str | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = 0,
    level: float = DEFAULT_LEVEL,
    human_level: str = "interval",
) -> AgreementTable:
    """Agreement of each metric with the humans' ratings of `criterion`, and among the humans.

    Args:
        data: the records (see `AgreementData`).
        metrics: metric names (default: every metric in `data`); [] gives the human rows only.
        criterion: which human ratings (e.g. `cp`, `pf`).
        by: None (pooled rows only), `method` or `category` (a pooled row, then one row per group).
        n_boot: bootstrap resamples (0 = no CIs); seed: their seed; level: CI level (0.95).
        human_level: Krippendorff level of the human-vs-human alpha (`interval`, `ordinal`, `nominal`, `ratio`).
    Returns:
        `AgreementTable` with, per group, one row per metric then the `humans` row.
    """
    check_grouping(by)
    check_bootstrap_args(n_boot, level)
    if human_level not in LEVELS:
        raise InputError(f"human_level must be one of {', '.join(LEVELS)}; got {human_level!r}")
    available = data.metric_names
    metrics = available if metrics is None else list(metrics)
    unknown = [m for m in metrics if m not in available]
    if unknown:
        raise InputError(f"metric(s) {unknown} have no values in the agreement data; available: {available}")
    if criterion not in data.criteria:
        raise InputError(f"no human ratings for criterion {criterion!r}; criteria with ratings: {data.criteria}")
    rows: list[AgreementRow] = []
    for group in [POOLED, *data.groups(by)]:
        records = data.select(by, group)
        for metric in metrics:
            rows.append(_metric_row(data, records, metric, criterion, group, n_boot, seed, level))
        rows.append(_human_row(data, records, criterion, group, n_boot, seed, level, human_level))
    return AgreementTable(criterion, by, n_boot, seed, level, human_level, tuple(rows))


def metric_difference(
    data: AgreementData,
    metric_a: str,
    metric_b: str,
    criterion: str = "cp",
    statistic: str = "alpha",
    by: str | None = None,
    group: str = POOLED,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = 0,
    level: float = DEFAULT_LEVEL,
) -> MetricDifference:
    """How much better `metric_a` agrees with humans than `metric_b` on the same samples (those with both
    metrics and a rating), with a paired bootstrap CI of the difference (both computed on each resample)."""
    check_grouping(by)
    check_bootstrap_args(n_boot, level)
    if statistic not in STATISTICS:
        raise InputError(f"statistic must be one of {', '.join(STATISTICS)}; got {statistic!r}")
    for name in (metric_a, metric_b):
        if name not in data.metric_names:
            raise InputError(f"metric {name!r} has no values in the agreement data; available: {data.metric_names}")
    if by is not None and group != POOLED and group not in data.groups(by):
        raise InputError(f"no samples with {by} {group!r}; groups: {data.groups(by)}")
    records = data.select(by, group)
    a = data.metric_values(records, metric_a)
    b = data.metric_values(records, metric_b)
    _, ratings = data.rating_matrix(records, criterion)
    keep = ~np.isnan(a) & ~np.isnan(b) & (~np.isnan(ratings)).any(axis=0)
    a, b, ratings = a[keep], b[keep], normalize_ratings(ratings[:, keep], data.rating_range)
    n = int(keep.sum())
    obs_a = _metric_stats(a[None], ratings[:, None], data.scale(metric_a))[statistic][0]
    obs_b = _metric_stats(b[None], ratings[:, None], data.scale(metric_b))[statistic][0]
    reps_a = reps_b = None
    if n_boot and n >= 2:
        idx = bootstrap_indices(n, n_boot, seed)
        reps_a = _replicates(a, ratings, data.scale(metric_a), idx)[statistic]
        reps_b = _replicates(b, ratings, data.scale(metric_b), idx)[statistic]
    diff = None if reps_a is None else reps_a - reps_b
    return MetricDifference(
        metric_a,
        metric_b,
        statistic,
        group,
        n,
        estimate(obs_a, reps_a, level),
        estimate(obs_b, reps_b, level),
        estimate(obs_a - obs_b, diff, level),
    )


def _metric_row(
    data: AgreementData,
    records: list[AgreementRecord],
    metric: str,
    criterion: str,
    group: str,
    n_boot: int,
    seed: int | None,
    level: float,
) -> AgreementRow:
    values = data.metric_values(records, metric)
    raters, ratings = data.rating_matrix(records, criterion)
    keep = ~np.isnan(values) & (~np.isnan(ratings)).any(axis=0)
    values, ratings = values[keep], normalize_ratings(ratings[:, keep], data.rating_range)
    n = int(keep.sum())
    n_raters = int((~np.isnan(ratings)).any(axis=1).sum())
    scale = data.scale(metric)
    observed = _metric_stats(values[None], ratings[:, None], scale)
    reps = _replicates(values, ratings, scale, bootstrap_indices(n, n_boot, seed)) if n_boot and n >= 2 else None
    return AgreementRow(
        metric,
        group,
        n,
        n_raters,
        **{s: estimate(observed[s][0], None if reps is None else reps[s], level) for s in STATISTICS},
    )


def _metric_stats(
    values: np.ndarray, ratings: np.ndarray, scale: MetricScale, kendall: bool = True
) -> dict[str, np.ndarray]:
    """Statistics per resample. values: (B, N) raw metric; ratings: (R, B, N) normalized, NaN = not rated."""
    normalized = normalize_metric(values, scale, axis=-1)
    stats = {"alpha": metric_vs_raters_alpha(normalized, ratings)}
    human_mean = _human_mean(ratings)
    for name, fn in CORRELATIONS.items():
        if kendall or name != "kendall":
            stats[name] = fn(values, human_mean)
    return stats


def _human_mean(ratings: np.ndarray) -> np.ndarray:
    """Mean over raters (axis 0) of normalized ratings, NaN where nobody rated."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(ratings, axis=0)


def _chunks(idx: np.ndarray) -> list[np.ndarray]:
    return np.array_split(idx, max(1, -(-len(idx) // BOOT_CHUNK)))


def _resampled_kendall(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Kendall tau-b of (x[i], y[i]) for each resample i (rows of idx); x, y: (N,)."""
    fast = kendall_tau_b_resampled(x, y, resample_counts(idx, x.size))
    return fast if fast is not None else np.concatenate([kendall_tau_b(x[i], y[i]) for i in _chunks(idx)])


def _replicates(values: np.ndarray, ratings: np.ndarray, scale: MetricScale, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Each statistic on each resample: dict name -> (n_boot,)."""
    parts = [_metric_stats(values[i], ratings[:, i], scale, kendall=False) for i in _chunks(idx)]
    reps = {s: np.concatenate([p[s] for p in parts]) for s in STATISTICS if s != "kendall"}
    reps["kendall"] = _resampled_kendall(values, _human_mean(ratings), idx)
    return reps


def _human_row(
    data: AgreementData,
    records: list[AgreementRecord],
    criterion: str,
    group: str,
    n_boot: int,
    seed: int | None,
    level: float,
    human_level: str,
) -> AgreementRow:
    _, ratings = data.rating_matrix(records, criterion)
    ratings = normalize_ratings(ratings, data.rating_range)
    # Only samples two or more raters rated carry agreement between people (alpha pairs values within a sample;
    # a sample one rater rated adds nothing), so they are the row's n and what its CI resamples.
    ratings = ratings[:, (~np.isnan(ratings)).sum(axis=0) >= 2]
    n = ratings.shape[1]
    observed = {
        "alpha": krippendorff_alpha(ratings, human_level) if ratings.shape[0] >= 2 and n else float("nan"),
        **{k: float(v[0]) for k, v in _pairwise_correlations(ratings[:, None]).items()},
    }
    reps = None
    if n_boot and n >= 2 and ratings.shape[0] >= 2:
        idx = bootstrap_indices(n, n_boot, seed)
        alphas = krippendorff_alpha_resampled(ratings, resample_counts(idx, n), human_level)
        if alphas is None:  # many distinct rating values: one package call per resample
            alphas = np.array([krippendorff_alpha(ratings[:, i], human_level) for i in idx])
        parts = [_pairwise_correlations(ratings[:, i], kendall=False) for i in _chunks(idx)]
        reps = {"alpha": alphas, **{k: np.concatenate([p[k] for p in parts]) for k in ("spearman", "pearson")}}
        reps["kendall"] = _mean_over_pairs(
            [
                _resampled_kendall(ratings[a], ratings[b], idx)
                for a, b in itertools.combinations(range(ratings.shape[0]), 2)
            ]
        )
    return AgreementRow(
        HUMANS,
        group,
        n,
        ratings.shape[0],
        **{s: estimate(observed[s], None if reps is None else reps[s], level) for s in STATISTICS},
    )


def _pairwise_correlations(ratings: np.ndarray, kendall: bool = True) -> dict[str, np.ndarray]:
    """Each correlation averaged over rater pairs, each pair on the units both rated.

    ratings: (R, B, N) normalized, NaN = not rated. Returns name -> (B,); NaN where no pair is defined."""
    pairs = list(itertools.combinations(range(ratings.shape[0]), 2))
    return {
        name: _mean_over_pairs([fn(ratings[a], ratings[b]) for a, b in pairs], ratings.shape[1])
        for name, fn in CORRELATIONS.items()
        if kendall or name != "kendall"
    }


def _mean_over_pairs(per_pair: list[np.ndarray], b: int = 0) -> np.ndarray:
    if not per_pair:
        return np.full(b, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.stack(per_pair), axis=0)
