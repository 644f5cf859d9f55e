"""Metric pairwise accuracy: how often a metric prefers the output that people preferred.

For one criterion, each output pair (a, b) gets the humans' decision from its votes: a is preferred when more
of its votes say a than say b (tie votes count for neither side), b likewise; equal counts are a *human tie*
and the pair is left out (`n_human_ties`), as are pairs without a value of the metric on either sample
(`n_missing`). On each remaining (decided) pair the metric prefers the output with the better value (higher,
or lower when `higher_is_better` is False) and scores
    1 when it prefers the humans' output, 0 when it prefers the other, 1/2 when its two values are equal
(a *metric tie*, exact float equality: the expected score of a coin toss, counted in `n_metric_ties`).
Accuracy = mean score over the decided pairs; 0.5 = chance. Votes between outputs of one method count too:
the question is about outputs, not methods.

CIs: percentile bootstrap over the criterion's decided pairs, one set of resamples shared by every metric
(paired, so two metrics' CIs come from the same resamples); a metric missing on some pairs averages the drawn
pairs it has.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .bootstrap import DEFAULT_LEVEL, DEFAULT_N_BOOT, Estimate, check_resamples, estimate, resampled_nanmeans
from .data import chosen_names
from .pairwise_data import A_WINS, B_WINS, PairwiseData

METRIC_TIE_SCORE = 0.5


@dataclass(frozen=True)
class PairwiseAccuracy:
    metric: str
    criterion: str
    higher_is_better: bool
    accuracy: Estimate
    n_pairs: int
    """Human-decided pairs with the metric on both samples (the denominator)."""
    n_metric_ties: int
    """Of those, pairs on which the metric's two values are equal (scored 1/2)."""
    n_human_ties: int
    """Pairs left out because their votes are balanced."""
    n_missing: int
    """Human-decided pairs left out because the metric lacks a value on one or both samples."""
    n_boot: int
    seed: int | None
    level: float


def pairwise_accuracy(
    data: PairwiseData,
    metric_values: Mapping[str, Mapping[str, float | None]],
    metrics: Sequence[str] | None = None,
    criteria: Sequence[str] | None = None,
    higher_is_better: Mapping[str, bool] | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = 0,
    level: float = DEFAULT_LEVEL,
) -> list[PairwiseAccuracy]:
    """Pairwise accuracy of each metric for each criterion (see the module docstring).

    Args:
        data: the pairwise judgments.
        metric_values: sample id -> {metric name: value (None/NaN = not computed)}, e.g.
            `{r.sample_id: r.metrics for r in agreement_data.records}`.
        metrics: names (default: every metric in `metric_values`); criteria: default every judged criterion.
        higher_is_better: metric -> direction; metrics not listed are higher-is-better.
        n_boot, seed, level: bootstrap over decided pairs (0 = no CIs).
    Returns:
        One `PairwiseAccuracy` per (criterion, metric), criteria outer.
    Raises:
        InputError: a metric or criterion without data, bad bootstrap arguments.
    """
    check_resamples(n_boot, level)
    available = list(dict.fromkeys(name for values in metric_values.values() for name in values))
    metrics = chosen_names(metrics, available, "metric")
    criteria = chosen_names(criteria, data.criteria, "criterion")
    directions = {m: bool((higher_is_better or {}).get(m, True)) for m in metrics}
    out = []
    for criterion in criteria:
        votes = data.votes(criterion)
        a_votes = np.bincount(votes.pair[votes.outcome == A_WINS], minlength=len(votes.pairs))
        b_votes = np.bincount(votes.pair[votes.outcome == B_WINS], minlength=len(votes.pairs))
        decided = np.flatnonzero(a_votes != b_votes)
        human_a = a_votes[decided] > b_votes[decided]
        scores = (
            np.stack([_scores(votes.pairs, decided, human_a, metric_values, m, directions[m]) for m in metrics], axis=1)
            if metrics
            else np.zeros((decided.size, 0))
        )
        reps = resampled_nanmeans(scores, n_boot, seed) if n_boot and decided.size else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            observed = np.nanmean(scores, axis=0) if decided.size else np.full(len(metrics), np.nan)
        for k, metric in enumerate(metrics):
            present = ~np.isnan(scores[:, k])
            out.append(
                PairwiseAccuracy(
                    metric,
                    criterion,
                    directions[metric],
                    estimate(observed[k], None if reps is None or not present.any() else reps[:, k], level),
                    int(present.sum()),
                    int((scores[present, k] == METRIC_TIE_SCORE).sum()),
                    len(votes.pairs) - decided.size,
                    int((~present).sum()),
                    n_boot,
                    seed,
                    level,
                )
            )
    return out


def _scores(
    pairs: tuple[tuple[str, str], ...],
    decided: np.ndarray,
    human_a: np.ndarray,
    metric_values: Mapping[str, Mapping[str, float | None]],
    metric: str,
    higher: bool,
) -> np.ndarray:
    """(D,) per decided pair: 1 / 0 / 0.5 as the module docstring says; NaN where the metric is missing."""
    x = np.array([_value(metric_values, pairs[p][0], metric) for p in decided], dtype=np.float64)
    y = np.array([_value(metric_values, pairs[p][1], metric) for p in decided], dtype=np.float64)
    diff = (x - y) if higher else (y - x)  # > 0: the metric prefers a
    agree = np.where(human_a, diff > 0, diff < 0)
    return np.where(np.isnan(diff), np.nan, np.where(diff == 0, METRIC_TIE_SCORE, agree.astype(np.float64)))


def _value(metric_values: Mapping[str, Mapping[str, float | None]], sample: str, metric: str) -> float:
    value = metric_values.get(sample, {}).get(metric)
    return float("nan") if value is None else float(value)
