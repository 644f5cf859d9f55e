"""Fleiss' kappa against the worked example of Fleiss (1971) as reproduced on Wikipedia."""

import numpy as np
import pytest

from masc_ui.analysis.kappa import fleiss_kappa
from masc_ui.errors import InputError

# 10 subjects, 14 raters, 5 categories: counts n_ij of raters putting subject i in category j. kappa = 0.210.
COUNTS = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def ratings_from_counts(counts):
    return np.array([np.repeat(np.arange(counts.shape[1]), row) for row in counts], dtype=float)


def test_worked_example():
    ratings = ratings_from_counts(COUNTS)
    assert ratings.shape == (10, 14)
    assert fleiss_kappa(ratings) == pytest.approx(0.20993, abs=1e-4)


def test_category_values_do_not_matter_and_rater_order_does_not_matter():
    ratings = ratings_from_counts(COUNTS)
    rng = np.random.default_rng(0)
    shuffled = np.array([rng.permutation(row) for row in ratings]) / 4.0
    assert fleiss_kappa(shuffled) == pytest.approx(fleiss_kappa(ratings), abs=1e-12)


def test_perfect_agreement_and_single_category():
    assert fleiss_kappa(np.array([[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.5]])) == pytest.approx(1.0)
    assert np.isnan(fleiss_kappa(np.ones((4, 3))))


def test_errors():
    with pytest.raises(InputError, match="missing"):
        fleiss_kappa(np.array([[0, np.nan], [1, 1]]))
    with pytest.raises(InputError, match="raters"):
        fleiss_kappa(np.zeros((5, 1)))
