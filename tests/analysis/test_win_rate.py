"""The win-rate matrix against a direct count."""

import numpy as np
from pairwise_votes import davidson_judgments, method_outcomes

from masc_ui.analysis.pairwise_data import PairwiseData
from masc_ui.analysis.win_rate import win_rate_matrix


def test_equals_a_direct_count():
    judgments = davidson_judgments([-0.5, 0.0, 0.7], 0.5, 200, seed=2)
    judgments.append(
        {
            "left": "z1",
            "right": "z2",
            "left_method": "m0",
            "right_method": "m0",
            "winner": "left",
            "criterion": "cp",
            "rater": "r0",
        }
    )
    matrix = win_rate_matrix(PairwiseData.from_records(judgments), "cp")
    assert matrix.methods == ("m0", "m1", "m2") and matrix.n_excluded == 1
    names = list(matrix.methods)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                assert np.isnan(matrix.rate[i, j])
                continue
            between = [w for w, left, right in method_outcomes(judgments[:-1]) if {left, right} == {a, b}]
            wins, ties = sum(w == a for w in between), sum(w is None for w in between)
            assert matrix.wins[i, j] == wins and matrix.ties[i, j] == ties
            assert matrix.rate[i, j] == (wins + ties / 2) / len(between)
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose((matrix.rate + matrix.rate.T)[off], 1.0)


def test_never_compared_is_nan():
    data = PairwiseData.from_records(
        [
            {
                "left": "1",
                "right": "2",
                "left_method": "A",
                "right_method": "B",
                "winner": "tie",
                "criterion": "pf",
                "rater": "r",
            },
            {
                "left": "3",
                "right": "4",
                "left_method": "B",
                "right_method": "C",
                "winner": "right",
                "criterion": "pf",
                "rater": "r",
            },
        ]
    )
    matrix = win_rate_matrix(data, "pf")
    assert matrix.rate[0, 1] == 0.5 and matrix.rate[2, 1] == 1.0 and np.isnan(matrix.rate[0, 2])
