"""Vectorized, NaN-aware Spearman / Kendall tau-b / Pearson equal scipy slice by slice."""

import numpy as np
import pytest
from scipy import stats

from masc_ui.analysis import correlation
from masc_ui.analysis.correlation import kendall_tau_b, pearson, spearman

SCIPY = {
    "pearson": (pearson, lambda a, b: stats.pearsonr(a, b).statistic),
    "spearman": (spearman, lambda a, b: stats.spearmanr(a, b).statistic),
    "kendall": (kendall_tau_b, lambda a, b: stats.kendalltau(a, b, variant="b").statistic),
}


def tied_data(rng, shape):
    x = rng.random(shape)
    y = np.round(4 * x + rng.normal(size=shape)).clip(0, 4)  # 0-4 ratings: many ties
    x[..., 1] = x[..., 0]  # ties in x too
    return x, y


@pytest.mark.parametrize("name", SCIPY)
@pytest.mark.parametrize("n", [5, 20, 150])  # 150 > PAIRWISE_KENDALL_MAX_N: scipy path for Kendall
def test_equals_scipy_on_each_slice(name, n):
    ours, ref = SCIPY[name]
    x, y = tied_data(np.random.default_rng(n), (4, n))
    got = ours(x, y)
    assert got.shape == (4,)
    np.testing.assert_allclose(got, [ref(a, b) for a, b in zip(x, y)], atol=1e-12)


def test_both_kendall_paths_agree(monkeypatch):
    x, y = tied_data(np.random.default_rng(0), (3, 60))
    pairwise = kendall_tau_b(x, y)
    monkeypatch.setattr(correlation, "PAIRWISE_KENDALL_MAX_N", 10)
    np.testing.assert_allclose(kendall_tau_b(x, y), pairwise, atol=1e-12)
    monkeypatch.setattr(correlation, "CHUNK_ELEMENTS", 1)  # one slice per chunk
    monkeypatch.setattr(correlation, "PAIRWISE_KENDALL_MAX_N", 128)
    np.testing.assert_allclose(kendall_tau_b(x, y), pairwise, atol=1e-12)


@pytest.mark.parametrize("name", SCIPY)
def test_missing_values_are_dropped_pairwise(name, monkeypatch):
    ours, ref = SCIPY[name]
    x, y = tied_data(np.random.default_rng(9), (2, 30))
    x[0, [1, 4]] = np.nan
    y[0, [4, 7]] = np.nan
    y[1, 0] = np.nan
    expected = []
    for a, b in zip(x, y):
        keep = ~np.isnan(a) & ~np.isnan(b)
        expected.append(ref(a[keep], b[keep]))
    np.testing.assert_allclose(ours(x, y), expected, atol=1e-12)
    if name == "kendall":
        monkeypatch.setattr(correlation, "PAIRWISE_KENDALL_MAX_N", 5)
        np.testing.assert_allclose(ours(x, y), expected, atol=1e-12)


@pytest.mark.parametrize("name", SCIPY)
def test_undefined_cases_are_nan(name):
    fn = SCIPY[name][0]
    assert np.isnan(fn(np.full(5, 0.3), np.arange(5.0)))  # constant x
    assert np.isnan(fn(np.arange(5.0), np.full(5, 2.0)))  # constant y
    assert np.isnan(fn(np.array([1.0]), np.array([2.0])))  # one pair
    assert np.isnan(fn(np.array([1.0, np.nan, 3.0]), np.array([np.nan, 1.0, 2.0])))  # one complete pair
    assert fn(np.zeros((2, 0)), np.zeros((2, 0))).shape == (2,)


def test_perfect_monotone_relation():
    x = np.linspace(0, 1, 12)
    assert spearman(x, x**3) == pytest.approx(1.0)
    assert kendall_tau_b(x, -x) == pytest.approx(-1.0)
    assert pearson(x, 2 * x + 1) == pytest.approx(1.0)


def counts_of(idx, n):
    return np.stack([np.bincount(i, minlength=n) for i in idx]).astype(float)


@pytest.mark.parametrize("n", [4, 30, 200])
def test_resampled_kendall_equals_kendall_on_the_gathered_resamples(n):
    rng = np.random.default_rng(n)
    x, y = tied_data(rng, n)
    x[: n // 3] = x[0]  # a large tie group in x
    x[1], y[2] = np.nan, np.nan
    idx = rng.integers(0, n, (40, n))
    expected = kendall_tau_b(x[idx], y[idx])
    np.testing.assert_allclose(correlation.kendall_tau_b_resampled(x, y, counts_of(idx, n)), expected, atol=1e-12)
    # Symmetric: with the continuous variable second, the levels are taken from the first.
    np.testing.assert_allclose(correlation.kendall_tau_b_resampled(y, x, counts_of(idx, n)), expected, atol=1e-12)


def test_resampled_kendall_declines_two_continuous_variables(monkeypatch):
    rng = np.random.default_rng(0)
    x, y = rng.random(100), rng.random(100)
    counts = counts_of(rng.integers(0, 100, (5, 100)), 100)
    assert correlation.kendall_tau_b_resampled(x, y, counts) is None
    monkeypatch.setattr(correlation, "CHUNK_ELEMENTS", 1)
    y = np.round(y * 4)
    idx = rng.integers(0, 100, (5, 100))
    np.testing.assert_allclose(
        correlation.kendall_tau_b_resampled(x, y, counts_of(idx, 100)), kendall_tau_b(x[idx], y[idx]), atol=1e-12
    )


def test_shape_mismatch_is_an_input_error():
    from masc_ui.errors import InputError

    with pytest.raises(InputError, match="same shape"):
        spearman(np.zeros(3), np.zeros(4))
