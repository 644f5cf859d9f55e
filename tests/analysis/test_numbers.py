"""One way of writing a value everywhere: significant digits, scientific notation for tiny and huge values, and as
many digits as separate the values of one column."""

from __future__ import annotations

import math

import pytest

from masc_ui.analysis.bootstrap import Estimate
from masc_ui.analysis.numbers import column_digits, format_interval, format_value
from masc_ui.analysis.report import format_estimate


@pytest.mark.parametrize(
    "value, text",
    [
        (2.49e-09, "2.490e-09"),  # VQAScore of an unrelated prompt: never 0.0000
        (0.123456, "0.1235"),
        (0.5, "0.5000"),
        (-0.00512, "-0.005120"),
        (12.3456, "12.35"),
        (1234.5, "1234"),
        (3.2e7, "3.200e+07"),
        (0.0, "0"),
        (None, "n/a"),
        (math.nan, "n/a"),
        (math.inf, "inf"),
    ],
)
def test_values_keep_their_significant_digits(value, text):
    assert format_value(value) == text


def test_a_column_shows_the_digits_that_separate_its_values():
    means = [0.000123, 0.000124, 0.0001235]
    digits = column_digits(means)
    shown = [format_value(m, digits) for m in means]
    assert len(set(shown)) == 3 and digits == 4
    close = [0.1234501, 0.1234502]
    assert len({format_value(m, column_digits(close)) for m in close}) == 2
    assert column_digits([0.5, 0.5, None, math.nan]) == 4  # equal values need nothing more


def test_estimates_and_intervals_use_the_same_rule():
    assert format_estimate(Estimate(2.49e-09, 1e-9, 4e-9), 3) == "2.49e-09 [1.00e-09, 4.00e-09]"
    assert format_estimate(Estimate(-0.005, -0.007, -0.003), 3) == "-0.00500 [-0.00700, -0.00300]"
    assert format_interval(math.nan, 1.0) == ""
