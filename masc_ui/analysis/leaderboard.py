"""The leaderboard: per method (or category) each metric's mean and the mean human rating of each criterion,
with bootstrap CIs and ranks, and the rank agreement (Kendall tau-b) of each metric's method ranking with the
humans'.

Input: the per-sample records of agreement analysis (`AgreementData` of `AgreementRecord`s: sample id, method,
category, metric values, ratings per criterion per rater). Conventions:
- Groups: the distinct values of `by` (`method` or `category`), sorted. Records without one are left out and
  counted (`Leaderboard.n_ungrouped`).
- Metric mean of a group: the plain mean over the group's samples that have a value (None/NaN = not computed,
  left out); its `n` counts those samples.
- Human mean of a group for criterion c: each sample's ratings of c are first averaged over its raters, then
  these per-sample means are averaged over the samples with at least one rating (each sample weighs the same
  whatever its number of raters); on the data's rating scale (0-4). Its `n` counts the rated samples.
- CIs: percentile bootstrap stratified by group: each group's samples are resampled with replacement (n_g of
  n_g) independently of the other groups (one seed per group, spawned from `seed` in sorted group order), and
  one set of resamples per group is shared by all its metrics and criteria (paired). A resample's mean is the
  mean over the drawn samples that have a value; a resample with none is left out of that CI.
- Ranks: 1 = best; a metric's direction from `higher_is_better` (default: higher is better, as every metric of
  the registry), human ratings higher-is-better; equal means share the best rank of their block ("1224") and an
  undefined mean gets no rank (`masc_ui.analysis.ranking`).
- Rank agreement of metric m with criterion c: Kendall tau-b (`scipy.stats.kendalltau`, variant b) between the
  groups' direction-adjusted metric means (mean, or -mean when lower is better) and their human means, over the
  groups where both are defined. tau-b depends only on the two orders, so this is tau-b between the metric's
  ranking and the humans' ranking; +1 = the metric orders the methods exactly as the humans do. Tied means
  (in either ranking) are handled by tau-b's tie correction. With fewer than 3 groups it is undefined (NaN): two
  groups give +-1 by construction, which is no evidence. NaN too when all groups tie on either side. Its CI:
  tau-b of each stratified resample's group means (the same resamples as the means).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau

from ..errors import InputError
from .bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_N_BOOT,
    Estimate,
    check_resamples,
    child_seeds,
    estimate,
    resampled_nanmeans,
)
from .correlation import kendall_tau_b
from .data import AgreementData, AgreementRecord, chosen_names
from .ranking import competition_ranks

LEADERBOARD_GROUPINGS = ("method", "category")
MIN_GROUPS_FOR_TAU = 3
"""Fewest groups with both means defined for a rank agreement (two groups give +-1 by construction)."""


@dataclass(frozen=True)
class LeaderboardCell:
    """One group's mean of one metric (or human criterion) with its CI, its sample count and its rank."""

    mean: Estimate
    n: int
    """Samples with a value (metric) or with at least one rating (criterion)."""
    rank: int | None
    """1 = best among the groups; None when the mean is undefined."""


@dataclass(frozen=True)
class LeaderboardRow:
    group: str
    """The method (or category) name."""
    n: int
    """Samples of the group."""
    metrics: Mapping[str, LeaderboardCell]
    """Metric name -> its cell."""
    humans: Mapping[str, LeaderboardCell]
    """Criterion (`cp`, `pf`, ...) -> the mean human rating's cell."""


@dataclass(frozen=True)
class RankAgreement:
    """Kendall tau-b between one metric's group ranking and the humans' ranking for one criterion."""

    metric: str
    criterion: str
    n_groups: int
    """Groups with both means defined (tau is NaN below `MIN_GROUPS_FOR_TAU`)."""
    tau: Estimate
    reason: str | None = None
    """Why `tau` is undefined (NaN), in words for a reader; None when it is defined."""


@dataclass(frozen=True)
class Leaderboard:
    """A leaderboard and the parameters that produced it."""

    by: str
    metrics: tuple[str, ...]
    criteria: tuple[str, ...]
    higher_is_better: Mapping[str, bool]
    """Metric name -> direction used for its ranks and its rank agreement."""
    rating_range: tuple[float, float]
    n_boot: int
    seed: int | None
    level: float
    n_ungrouped: int
    """Records left out because they have no `by` value."""
    rows: tuple[LeaderboardRow, ...]
    """One per group, in sorted group order."""
    agreement: tuple[RankAgreement, ...]
    """One per (metric, criterion), metrics outer."""

    @property
    def groups(self) -> list[str]:
        return [r.group for r in self.rows]

    def row(self, group: str) -> LeaderboardRow:
        for r in self.rows:
            if r.group == group:
                return r
        raise KeyError(f"no leaderboard row for {self.by} {group!r}")

    def rank_agreement(self, metric: str, criterion: str) -> RankAgreement:
        for a in self.agreement:
            if a.metric == metric and a.criterion == criterion:
                return a
        raise KeyError(f"no rank agreement for metric {metric!r} and criterion {criterion!r}")


def leaderboard(
    data: AgreementData,
    metrics: Sequence[str] | None = None,
    criteria: Sequence[str] | None = None,
    by: str = "method",
    higher_is_better: Mapping[str, bool] | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = 0,
    level: float = DEFAULT_LEVEL,
) -> Leaderboard:
    """The leaderboard of `data` grouped `by` method or category (conventions in the module docstring).

    Args:
        data: per-sample metric values and ratings.
        metrics: metric names (default: every metric with a value in `data`, first-seen order).
        criteria: human criteria (default: every criterion rated in `data`); [] for metrics only.
        by: `method` or `category`.
        higher_is_better: metric name -> direction (e.g. `{s.name: s.higher_is_better for s in list_metrics()}`);
            metrics not listed are higher-is-better.
        n_boot: resamples per group, 0..MAX_N_BOOT (0 = no CIs); seed: their seed; level: CI level.
    Raises:
        InputError: unknown `by`, a metric/criterion without any value, bad n_boot/level/seed, no grouped sample.
    """
    if by not in LEADERBOARD_GROUPINGS:
        raise InputError(f"leaderboard `by` must be one of {', '.join(LEADERBOARD_GROUPINGS)}; got {by!r}")
    check_resamples(n_boot, level)
    metrics = chosen_names(metrics, data.metric_names, "metric")
    criteria = chosen_names(criteria, data.criteria, "criterion")
    directions = {m: bool((higher_is_better or {}).get(m, True)) for m in metrics}
    groups = data.groups(by)
    if not groups:
        raise InputError(f"no sample has a {by}; a leaderboard by {by} needs samples that name their {by}")
    seeds = child_seeds(seed, len(groups))
    columns = len(metrics) + len(criteria)
    observed = np.full((len(groups), columns), np.nan)
    counts = np.zeros((len(groups), columns), dtype=np.int64)
    replicates = np.full((n_boot, len(groups), columns), np.nan)
    sizes = []
    for g, group in enumerate(groups):
        records = data.select(by, group)
        sizes.append(len(records))
        values = _sample_table(data, records, metrics, criteria)
        present = ~np.isnan(values)
        counts[g] = present.sum(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            observed[g] = np.nanmean(values, axis=0)
        if n_boot:
            replicates[:, g] = resampled_nanmeans(values, n_boot, seeds[g])
    signs = np.array([1.0 if directions[m] else -1.0 for m in metrics] + [1.0] * len(criteria))
    ranks = [competition_ranks(signs[k] * observed[:, k]) for k in range(columns)]

    def cell(g: int, k: int) -> LeaderboardCell:
        return LeaderboardCell(
            estimate(observed[g, k], replicates[:, g, k] if n_boot else None, level), int(counts[g, k]), ranks[k][g]
        )

    rows = tuple(
        LeaderboardRow(
            group,
            sizes[g],
            {m: cell(g, k) for k, m in enumerate(metrics)},
            {c: cell(g, len(metrics) + j) for j, c in enumerate(criteria)},
        )
        for g, group in enumerate(groups)
    )
    agreement = tuple(
        _rank_agreement(
            m,
            c,
            signs[k] * observed[:, k],
            observed[:, len(metrics) + j],
            signs[k] * replicates[:, :, k] if n_boot else None,
            replicates[:, :, len(metrics) + j] if n_boot else None,
            level,
        )
        for k, m in enumerate(metrics)
        for j, c in enumerate(criteria)
    )
    n_ungrouped = sum(1 for r in data.records if getattr(r, by) is None)
    return Leaderboard(
        by,
        tuple(metrics),
        tuple(criteria),
        directions,
        data.rating_range,
        n_boot,
        seed,
        level,
        n_ungrouped,
        rows,
        agreement,
    )


def _sample_table(
    data: AgreementData, records: list[AgreementRecord], metrics: list[str], criteria: list[str]
) -> np.ndarray:
    """float64 (N, metrics + criteria): metric values, then each criterion's per-sample mean over raters."""
    columns = [data.metric_values(records, m) for m in metrics]
    for criterion in criteria:
        _, ratings = data.rating_matrix(records, criterion)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            columns.append(np.nanmean(ratings, axis=0) if ratings.shape[0] else np.full(len(records), np.nan))
    return np.stack(columns, axis=1) if columns else np.zeros((len(records), 0))


def _rank_agreement(
    metric: str,
    criterion: str,
    metric_means: np.ndarray,
    human_means: np.ndarray,
    metric_reps: np.ndarray | None,
    human_reps: np.ndarray | None,
    level: float,
) -> RankAgreement:
    both = ~(np.isnan(metric_means) | np.isnan(human_means))
    n_groups = int(both.sum())
    undefined = Estimate(float("nan"), float("nan"), float("nan"))
    if n_groups < MIN_GROUPS_FOR_TAU:
        reason = f"Kendall tau needs at least {MIN_GROUPS_FOR_TAU} groups with both a metric mean and a human mean"
        return RankAgreement(metric, criterion, n_groups, undefined, f"{reason}; {n_groups} have both")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a constant input and returns NaN
        tau = float(kendalltau(metric_means[both], human_means[both], variant="b").statistic)
    if np.isnan(tau):
        tied = "the metric's means" if np.ptp(metric_means[both]) == 0 else "the human means"
        reason = f"{tied} are the same for all {n_groups} groups: a ranking with every group tied has no Kendall tau"
        return RankAgreement(metric, criterion, n_groups, undefined, reason)
    reps = None if metric_reps is None else kendall_tau_b(metric_reps[:, both], human_reps[:, both])
    return RankAgreement(metric, criterion, n_groups, estimate(tau, reps, level))
