"""Krippendorff alpha: the closed form equals the `krippendorff` package; several raters; edge cases."""

import krippendorff
import numpy as np
import pytest

from masc_ui.analysis.alpha import interval_alpha, interval_alpha_pairs, krippendorff_alpha, metric_vs_raters_alpha
from masc_ui.errors import InputError


def package(x, y):
    return krippendorff.alpha(reliability_data=np.stack([x, y]), level_of_measurement="interval")


@pytest.mark.parametrize("n", [2, 3, 7, 50, 120])
@pytest.mark.parametrize("seed", range(4))
def test_closed_form_equals_package_on_random_data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = rng.integers(0, 5, n) / 4  # human ratings / 4: ties
    assert interval_alpha(x, y) == pytest.approx(package(x, y), abs=1e-12)


def test_closed_form_equals_package_with_ties_negative_and_scaled_values():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, 30).astype(float) * 10 - 7
    y = -x + rng.normal(size=30)  # disagreement: alpha < 0
    a = interval_alpha(x, y)
    assert a < 0
    assert a == pytest.approx(package(x, y), abs=1e-12)


def test_missing_values_drop_the_unit_like_the_package():
    rng = np.random.default_rng(3)
    x, y = rng.random(40), rng.random(40)
    x[[1, 5, 9]] = np.nan
    y[[2, 5, 30]] = np.nan
    assert interval_alpha(x, y) == pytest.approx(package(x, y), abs=1e-12)
    keep = ~np.isnan(x) & ~np.isnan(y)
    assert interval_alpha(x, y) == pytest.approx(interval_alpha(x[keep], y[keep]), abs=1e-12)


def test_population_variance_is_the_one_that_matches():
    # The closed form with the sample variance (ddof=1) would differ from the package; ddof=0 matches.
    x, y = np.array([0.0, 0.5, 1.0, 0.2]), np.array([0.25, 0.5, 0.75, 0.0])
    v = np.concatenate([x, y])
    m = v.size
    alpha_pop = 1 - np.mean((x - y) ** 2) / (2 * m * v.var(ddof=0) / (m - 1))
    alpha_sample = 1 - np.mean((x - y) ** 2) / (2 * m * v.var(ddof=1) / (m - 1))
    assert package(x, y) == pytest.approx(alpha_pop, abs=1e-12)
    assert package(x, y) != pytest.approx(alpha_sample, abs=1e-6)
    assert interval_alpha(x, y) == pytest.approx(alpha_pop, abs=1e-12)


def test_perfect_agreement_is_one_and_single_pair_matches_package():
    x = np.array([0.1, 0.4, 0.9])
    assert interval_alpha(x, x) == pytest.approx(1.0)
    a, b = np.array([1.0, np.nan, 1.0]), np.array([0.0, 1.0, np.nan])
    assert interval_alpha(a, b) == pytest.approx(package(a, b), abs=1e-12)


def test_undefined_cases_are_nan_where_the_package_raises():
    with pytest.raises(ValueError):
        package(np.ones(3), np.ones(3))
    assert np.isnan(interval_alpha(np.ones(3), np.ones(3)))
    assert np.isnan(interval_alpha(np.array([np.nan, 1.0]), np.array([0.0, np.nan])))
    assert np.isnan(interval_alpha(np.array([]), np.array([])))


def test_vectorized_over_leading_axes():
    rng = np.random.default_rng(1)
    x, y = rng.random((3, 4, 20)), rng.random((3, 4, 20))
    out = interval_alpha_pairs(x, y)
    assert out.shape == (3, 4)
    assert out[2, 1] == pytest.approx(package(x[2, 1], y[2, 1]), abs=1e-12)


def test_shape_errors():
    with pytest.raises(InputError, match="same shape"):
        interval_alpha_pairs(np.zeros(3), np.zeros(4))
    with pytest.raises(InputError, match="1-D"):
        interval_alpha(np.zeros((2, 3)), np.zeros((2, 3)))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_several_raters_with_missing_values_go_through_the_package(level):
    rng = np.random.default_rng(5)
    data = rng.integers(0, 5, (3, 25)).astype(float)
    data[0, :3] = np.nan
    data[2, 10] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-12)


def test_krippendorff_alpha_undefined_and_errors():
    assert np.isnan(krippendorff_alpha(np.ones((2, 5)), "ordinal"))  # one value in the domain
    assert np.isnan(krippendorff_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]])))  # no pairable unit
    assert np.isnan(krippendorff_alpha(np.array([[1.0, 2.0]])))  # one rater
    with pytest.raises(InputError, match="level"):
        krippendorff_alpha(np.zeros((2, 2)), "cardinal")
    with pytest.raises(InputError, match="2-D"):
        krippendorff_alpha(np.zeros(3))


def test_metric_vs_raters_is_the_mean_of_per_rater_alphas():
    rng = np.random.default_rng(2)
    metric = rng.random(30)
    ratings = rng.integers(0, 5, (2, 30)) / 4
    ratings[1, :4] = np.nan
    expected = np.mean([package(metric, r) for r in ratings])
    assert float(metric_vs_raters_alpha(metric, ratings)) == pytest.approx(expected, abs=1e-12)
    # A rater with no ratings has an undefined alpha and is left out of the average.
    ratings[1] = np.nan
    assert float(metric_vs_raters_alpha(metric, ratings)) == pytest.approx(package(metric, ratings[0]), abs=1e-12)
    assert np.isnan(metric_vs_raters_alpha(metric, np.zeros((0, 30))))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_resampled_alpha_equals_the_package_on_each_resample(level):
    from masc_ui.analysis.alpha import krippendorff_alpha_resampled
    from masc_ui.analysis.bootstrap import bootstrap_indices, resample_counts

    rng = np.random.default_rng(11)
    data = rng.integers(0, 5, (3, 30)).astype(float) / 4
    data[0, :4] = np.nan
    data[2, 2:8] = np.nan
    data[1, 3] = np.nan  # unit 3 has one rating only: not pairable
    idx = bootstrap_indices(30, 40, seed=1)
    got = krippendorff_alpha_resampled(data, resample_counts(idx, 30), level)
    expected = [krippendorff.alpha(reliability_data=data[:, i], level_of_measurement=level) for i in idx]
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_resampled_alpha_undefined_resamples_and_fallback():
    from masc_ui.analysis import alpha
    from masc_ui.analysis.bootstrap import resample_counts

    data = np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    idx = np.array([[1, 2, 2], [0, 1, 2]])  # the first resample holds one value only
    got = alpha.krippendorff_alpha_resampled(data, resample_counts(idx, 3), "interval")
    assert np.isnan(got[0]) and got[1] == pytest.approx(1.0)
    continuous = np.random.default_rng(0).random((2, alpha.MAX_VALUES))
    assert alpha.krippendorff_alpha_resampled(continuous, np.ones((2, alpha.MAX_VALUES)), "interval") is None
    with pytest.raises(InputError, match="disagree"):
        alpha.krippendorff_alpha_resampled(data, np.ones((2, 4)))
    with pytest.raises(InputError, match="level"):
        alpha.krippendorff_alpha_resampled(data, np.ones((2, 3)), "cardinal")
