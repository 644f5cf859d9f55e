"""Competition ranks (1 = best, ties share the best rank, NaN unranked) against pandas."""

import numpy as np
import pandas as pd
import pytest

from masc_ui.analysis.ranking import competition_ranks
from masc_ui.errors import InputError


@pytest.mark.parametrize("higher", [True, False])
def test_equal_pandas_min_rank(higher):
    scores = np.array([0.3, np.nan, 0.7, 0.3, 0.9, 0.1])
    expected = pd.Series(scores).rank(method="min", ascending=not higher)
    got = competition_ranks(scores, higher)
    assert got[1] is None
    assert [g for g in got if g is not None] == [int(v) for v in expected.dropna()]
    assert competition_ranks(np.array([2.0, 2.0, 1.0])) == [1, 1, 3]


def test_empty_and_bad_shape():
    assert competition_ranks(np.array([])) == []
    assert competition_ranks(np.array([np.nan])) == [None]
    with pytest.raises(InputError, match="1-D"):
        competition_ranks(np.zeros((2, 2)))
