"""Per-sample points of a metric against the mean human rating, for the Agreement tab's scatter plot."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .data import POOLED, AgreementData
from .normalization import normalize_ratings


@dataclass(frozen=True)
class ScatterPoints:
    """Samples with a value of `metric` and at least one rating of `criterion`, in record order.

    `values`: raw metric values (N,); `human_mean`: mean human rating on the data's scale (N,);
    `human_mean_unit`: the same mapped to [0, 1] (rating / 4); `n_ratings`: ratings averaged per sample."""

    metric: str
    criterion: str
    sample_ids: tuple[str, ...]
    methods: tuple[str | None, ...]
    categories: tuple[str | None, ...]
    values: np.ndarray
    human_mean: np.ndarray
    human_mean_unit: np.ndarray
    n_ratings: np.ndarray


def scatter_points(
    data: AgreementData, metric: str, criterion: str = "cp", by: str | None = None, group: str = POOLED
) -> ScatterPoints:
    """The points of one metric (optionally restricted to one method / category group)."""
    if metric not in data.metric_names:
        raise InputError(f"metric {metric!r} has no values in the agreement data; available: {data.metric_names}")
    records = data.select(by, group)
    values = data.metric_values(records, metric)
    _, ratings = data.rating_matrix(records, criterion)
    rated = (~np.isnan(ratings)).sum(axis=0)
    keep = ~np.isnan(values) & (rated > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(ratings, axis=0) if ratings.shape[0] else np.full(len(records), np.nan)
    kept = [r for r, k in zip(records, keep) if k]
    return ScatterPoints(
        metric,
        criterion,
        tuple(r.sample_id for r in kept),
        tuple(r.method for r in kept),
        tuple(r.category for r in kept),
        values[keep],
        mean[keep],
        normalize_ratings(mean[keep], data.rating_range),
        rated[keep],
    )
