"""The normalization convention: continuous metrics min-max over the compared set, ratings by their range."""

import numpy as np
import pytest

from masc_ui.analysis.normalization import (
    CONTINUOUS,
    RATING_0_4,
    MetricScale,
    minmax,
    normalize_metric,
    normalize_ratings,
    scale_for,
)
from masc_ui.errors import InputError


def test_continuous_metric_is_min_max_normalized_over_the_set():
    v = np.array([0.2, 0.7, np.nan, 0.45])
    np.testing.assert_allclose(normalize_metric(v, CONTINUOUS), [0.0, 1.0, np.nan, 0.5])


def test_min_max_per_row_along_the_axis():
    v = np.array([[1.0, 3.0, 2.0], [10.0, 0.0, 5.0]])
    np.testing.assert_allclose(minmax(v, axis=-1), [[0.0, 1.0, 0.5], [1.0, 0.0, 0.5]])


def test_constant_set_cannot_be_normalized_and_becomes_nan():
    assert np.isnan(minmax(np.array([0.3, 0.3, 0.3]))).all()
    assert minmax(np.array([])).shape == (0,)


def test_ratings_and_judges_are_divided_by_their_range():
    np.testing.assert_allclose(normalize_ratings(np.array([0, 1, 4, np.nan])), [0.0, 0.25, 1.0, np.nan])
    np.testing.assert_allclose(normalize_metric(np.array([0.0, 2.0, 3.0]), RATING_0_4), [0.0, 0.5, 0.75])
    # A judge that only used 1..3 stays on the 0-4 scale (not min-max): 1 -> 0.25, 3 -> 0.75.
    np.testing.assert_allclose(normalize_metric(np.array([1.0, 3.0]), RATING_0_4), [0.25, 0.75])
    np.testing.assert_allclose(normalize_ratings(np.array([0.0, 0.5, 1.0]), (0, 1)), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(normalize_metric(np.array([1.0, 10.0]), scale_for("rating", (1, 10))), [0.0, 1.0])


def test_scale_for_reads_a_declared_kind_and_range():
    assert scale_for("continuous", (-1, 1)) == CONTINUOUS
    assert scale_for("rating") == RATING_0_4
    assert scale_for("rating", (0, 10)).value_range == (0.0, 10.0)


def test_bad_scales_are_refused():
    with pytest.raises(InputError, match="kind"):
        scale_for("percent")
    with pytest.raises(InputError, match="value_range"):
        MetricScale("rating", (4, 0))
    with pytest.raises(InputError, match="value_range"):
        MetricScale("rating", (0, float("inf")))
