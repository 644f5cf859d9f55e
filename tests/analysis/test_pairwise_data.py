"""Pairwise judgments: validation and the canonical orientation."""

import numpy as np
import pandas as pd
import pytest

from masc_ui.analysis.pairwise_data import A_WINS, B_WINS, TIE, PairJudgment, PairwiseData, method_votes
from masc_ui.errors import InputError

ROWS = [
    {
        "left": "s2",
        "right": "s1",
        "criterion": "cp",
        "winner": "left",
        "rater": "u1",
        "left_method": "B",
        "right_method": "A",
    },
    {
        "left": "s1",
        "right": "s2",
        "criterion": "cp",
        "winner": "left",
        "rater": "u2",
        "left_method": "A",
        "right_method": "B",
    },
    {"left": "s1", "right": "s2", "criterion": "cp", "winner": "tie", "rater": "u3"},
    {
        "left": "s3",
        "right": "s4",
        "criterion": "pf",
        "winner": "right",
        "rater": "u1",
        "left_method": "A",
        "right_method": "A",
    },
]


def test_canonical_orientation_and_indices():
    data = PairwiseData.from_records(ROWS)
    assert data.criteria == ["cp", "pf"]
    v = data.votes("cp")
    assert v.pairs == (("s1", "s2"),) and v.raters == ("u1", "u2", "u3")
    assert v.pair_methods == (("A", "B"),)  # method known from other judgments of the same samples
    np.testing.assert_array_equal(v.outcome, [B_WINS, A_WINS, TIE])
    mv = method_votes(v)
    assert mv.methods == ("A", "B") and mv.n_excluded == 0
    np.testing.assert_array_equal(mv.first, [0, 0, 0])
    same = method_votes(data.votes("pf"))
    assert same.first.size == 0 and same.n_excluded == 1


def test_from_dataframe_and_dataclass():
    df = pd.DataFrame(ROWS)
    assert PairwiseData.from_records(df).judgments == PairwiseData.from_records(ROWS).judgments
    j = PairJudgment("a", "b", "cp", "tie", "r")
    assert PairwiseData.from_records([j]).judgments == (j,)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"winner": "a"}, "winner must be one of"),
        ({"right": "s2", "left": "s2"}, "two different samples"),
        ({"extra": 1}, "unknown key"),
        ({"rater": None}, "lacks rater"),
    ],
)
def test_bad_rows(change, match):
    row = {**ROWS[0], **change}
    with pytest.raises(InputError, match=match):
        PairwiseData.from_records([row])


def test_duplicate_and_conflicting_methods():
    with pytest.raises(InputError, match="already"):
        PairwiseData.from_records([ROWS[0], {**ROWS[0], "left": "s1", "right": "s2", "winner": "right"}])
    with pytest.raises(InputError, match="one method"):
        PairwiseData.from_records([ROWS[0], {**ROWS[1], "left_method": "C"}])
    with pytest.raises(InputError, match="list of records"):
        PairwiseData.from_records({"left": "a"})
    with pytest.raises(InputError, match="no pairwise judgments for criterion 'sc'"):
        PairwiseData.from_records(ROWS).votes("sc")
