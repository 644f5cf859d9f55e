"""Paired bootstrap indices and percentile CIs."""

import math

import numpy as np
import pytest

from masc_ui.analysis.bootstrap import (
    MAX_N_BOOT,
    Estimate,
    bootstrap_indices,
    check_resamples,
    child_seeds,
    estimate,
    percentile_ci,
    resampled_nanmeans,
)
from masc_ui.errors import InputError


def test_indices_are_seeded_and_shaped():
    a = bootstrap_indices(30, 200, seed=4)
    assert a.shape == (200, 30) and a.min() >= 0 and a.max() < 30
    np.testing.assert_array_equal(a, bootstrap_indices(30, 200, seed=4))
    assert not np.array_equal(a, bootstrap_indices(30, 200, seed=5))
    assert bootstrap_indices(0, 5).shape == (5, 0)


def test_percentile_ci_matches_numpy_and_ignores_undefined_replicates():
    r = np.random.default_rng(0).normal(size=1000)
    lo, hi = percentile_ci(r, 0.95)
    assert (lo, hi) == pytest.approx(tuple(np.percentile(r, [2.5, 97.5])))
    with_nan = np.concatenate([r, [np.nan] * 50])
    assert percentile_ci(with_nan, 0.95) == pytest.approx((lo, hi))
    assert percentile_ci(r, 0.5) == pytest.approx(tuple(np.percentile(r, [25, 75])))
    assert all(math.isnan(v) for v in percentile_ci(np.array([np.nan, np.nan])))


def test_ci_of_a_mean_covers_the_truth_about_as_often_as_it_says():
    rng = np.random.default_rng(1)
    idx = bootstrap_indices(40, 400, seed=2)
    hits = 0
    for _ in range(200):
        x = rng.normal(loc=1.0, size=40)
        lo, hi = percentile_ci(x[idx].mean(axis=1), 0.9)
        hits += lo <= 1.0 <= hi
    assert 0.8 <= hits / 200 <= 0.97


def test_estimate_and_json():
    e = estimate(0.5, np.array([0.4, 0.6, 0.5]), 0.95)
    assert e.value == 0.5 and e.ci_low < e.ci_high
    no_ci = estimate(0.5, None)
    assert math.isnan(no_ci.ci_low)
    assert Estimate(float("nan"), 1.0, 2.0).to_dict() == {"value": None, "ci_low": 1.0, "ci_high": 2.0}


@pytest.mark.parametrize("n_boot", [-1, 2.5, "100"])
def test_bad_n_boot(n_boot):
    with pytest.raises(InputError, match="n_boot"):
        bootstrap_indices(10, n_boot)


def test_resample_counts():
    from masc_ui.analysis.bootstrap import resample_counts

    idx = np.array([[0, 0, 2], [1, 2, 2]])
    np.testing.assert_array_equal(resample_counts(idx, 4), [[2, 0, 1, 0], [0, 1, 2, 0]])


def test_child_seeds_are_independent_and_reproducible():
    a, b = child_seeds(3, 2)
    rows_a, rows_b = bootstrap_indices(20, 5, a), bootstrap_indices(20, 5, b)
    assert not np.array_equal(rows_a, rows_b)
    np.testing.assert_array_equal(rows_a, bootstrap_indices(20, 5, child_seeds(3, 2)[0]))
    assert child_seeds(None, 3) == [None, None, None]
    with pytest.raises(InputError, match="seed"):
        child_seeds(-1, 2)


def test_resamples_are_bounded():
    check_resamples(MAX_N_BOOT, 0.95)
    with pytest.raises(InputError, match="at most"):
        check_resamples(MAX_N_BOOT + 1, 0.95)


def test_resampled_nanmeans_equal_nanmean_of_gathered_rows():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(30, 3))
    values[rng.random((30, 3)) < 0.3] = np.nan
    values[:, 2] = np.nan
    values[4, 2] = 1.5  # one value: most resamples miss it
    got = resampled_nanmeans(values, 600, 8)
    idx = bootstrap_indices(30, 600, 8)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nanmean(values[idx], axis=1)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert np.isnan(got[:, 2]).any() and resampled_nanmeans(values, 0, 1).shape == (0, 3)
