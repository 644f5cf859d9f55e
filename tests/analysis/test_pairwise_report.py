"""Text renderings of the pairwise analyses carry the numbers and the conventions."""

import numpy as np
from pairwise_votes import davidson_judgments

from masc_ui.analysis import (
    PairwiseData,
    bradley_terry,
    elo_ratings,
    pairwise_accuracy,
    pairwise_rater_agreement,
    win_rate_matrix,
)
from masc_ui.analysis.pairwise_report import (
    format_bradley_terry,
    format_elo,
    format_pair_agreement,
    format_pairwise_accuracy,
    format_win_rate,
)


def data():
    return PairwiseData.from_records(davidson_judgments([-1.0, 0.0, 1.0], 0.5, 60, raters_per_pair=2, seed=1))


def test_bradley_terry_and_elo_list_methods_by_rank():
    fit = bradley_terry(data(), "cp", n_boot=100)
    text = format_bradley_terry(fit)
    lines = text.splitlines()
    assert "120 votes" in lines[0] and "over 60 output pairs, 100 resamples" in lines[0]
    assert [line.split()[1] for line in lines[2:5]] == ["m2", "m1", "m0"]
    assert f"{fit.strength['m2'].value:.3f} [{fit.strength['m2'].ci_low:.3f}" in text
    assert lines[-1].startswith("tie parameter nu: ")
    elo = format_elo(elo_ratings(data(), "cp", k=16))
    assert "in the given order; K 16" in elo and elo.splitlines()[2].split()[:2] == ["1", "m2"]


def test_undefined_fit_says_why():
    one_sided = PairwiseData.from_records(
        [
            {
                "left": "a",
                "right": "b",
                "left_method": "A",
                "right_method": "B",
                "winner": "left",
                "criterion": "cp",
                "rater": "r",
            }
        ]
    )
    assert "undefined: some methods never lost" in format_bradley_terry(bradley_terry(one_sided, "cp"))


def test_win_rate_agreement_and_accuracy():
    matrix = win_rate_matrix(data(), "cp")
    text = format_win_rate(matrix)
    assert text.splitlines()[2].split()[:2] == ["m0", "-"]
    assert f"{matrix.rate[0, 1]:.2f}" in text.splitlines()[2]
    agreement = format_pair_agreement(pairwise_rater_agreement(data(), "cp", n_boot=50))
    assert "60 pairs judged by >= 2 raters" in agreement and "alpha (nominal)" in agreement
    rng = np.random.default_rng(0)
    values = {j.left: {"cp": rng.random()} for j in data().judgments} | {
        j.right: {"cp": rng.random()} for j in data().judgments
    }
    results = pairwise_accuracy(data(), values, n_boot=50)
    text = format_pairwise_accuracy(results)
    assert "human ties left out, metric ties count 1/2" in text
    assert f"{results[0].accuracy.value:.3f}" in text and str(results[0].n_pairs) in text
    assert format_pairwise_accuracy([]).startswith("no metric")
