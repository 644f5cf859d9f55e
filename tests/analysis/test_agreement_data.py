"""AgreementData from records: dicts, DataFrames, records; every bad input names what is wrong."""

import math

import numpy as np
import pandas as pd
import pytest

from masc_ui.analysis.data import AgreementData, AgreementRecord
from masc_ui.analysis.normalization import RATING_0_4
from masc_ui.errors import InputError

RECORDS = [
    {
        "sample_id": "a",
        "method": "dreambooth",
        "category": "animal",
        "metrics": {"cp": 0.8, "gpt": 3},
        "ratings": {"cp": {"group1": 3, "group2": 4}, "pf": {"group1": 2}},
    },
    {
        "sample_id": "b",
        "method": "textual_inversion",
        "category": "object",
        "metrics": {"cp": None, "clip_i": 0.7},
        "ratings": {"cp": {"group1": 1, "group2": None}},
    },
    {"sample_id": "c", "method": "dreambooth", "metrics": {"cp": 0.4}},
]


def test_from_dicts():
    data = AgreementData.from_records(RECORDS, scales={"gpt": RATING_0_4})
    assert data.metric_names == ["cp", "gpt", "clip_i"]
    assert data.criteria == ["cp", "pf"]
    assert data.raters("cp") == ["group1", "group2"]
    assert data.groups("method") == ["dreambooth", "textual_inversion"]
    assert data.groups("category") == ["animal", "object"]
    assert data.scale("gpt") == RATING_0_4 and data.scale("cp").kind == "continuous"
    np.testing.assert_array_equal(data.metric_values(list(data.records), "cp"), [0.8, np.nan, 0.4])
    raters, m = data.rating_matrix(list(data.records), "cp")
    assert raters == ["group1", "group2"]
    np.testing.assert_array_equal(m, [[3, 1, np.nan], [4, np.nan, np.nan]])
    assert [r.sample_id for r in data.select("method", "dreambooth")] == ["a", "c"]


def test_from_dataframe_and_records_are_the_same():
    from_frame = AgreementData.from_records(pd.DataFrame(RECORDS))
    from_dicts = AgreementData.from_records(RECORDS)
    records = list(from_dicts.records)
    assert [(r.sample_id, r.method) for r in from_frame.records] == [(r.sample_id, r.method) for r in records]
    for metric in from_dicts.metric_names:
        np.testing.assert_array_equal(
            from_frame.metric_values(list(from_frame.records), metric), from_dicts.metric_values(records, metric)
        )
    np.testing.assert_array_equal(
        from_frame.rating_matrix(list(from_frame.records), "cp")[1], from_dicts.rating_matrix(records, "cp")[1]
    )
    rec = AgreementRecord("x", metrics={"cp": 0.1}, ratings={"cp": {"u": 2.0}})
    assert AgreementData.from_records([rec]).records == (rec,)


def test_missing_method_in_a_dataframe_becomes_none():
    frame = pd.DataFrame(RECORDS)
    assert AgreementData.from_records(frame).records[2].category is None


@pytest.mark.parametrize(
    "records, match",
    [
        ([{"sample_id": "a"}, {"sample_id": "a"}], "occurs twice"),
        ([{"sample_id": "a", "ratings": {"cp": {"u": 5}}}], "outside the rating range"),
        ([{"sample_id": "a", "score": 1}], "unknown key"),
        ([{"method": "x"}], "no sample_id"),
        ([{"sample_id": "a", "metrics": {"cp": "high"}}], "not a number"),
        ([{"sample_id": "a", "metrics": {"cp": float("inf")}}], "infinite"),
        ([{"sample_id": "a", "metrics": [0.5]}], "metrics must be a dict"),
        ([{"sample_id": "a", "ratings": {"cp": 3}}], "ratings must be a dict"),
        (["a"], "must be a dict"),
        ({"sample_id": "a"}, "list of per-sample records"),
    ],
)
def test_bad_records(records, match):
    with pytest.raises(InputError, match=match):
        AgreementData.from_records(records)


def test_rating_range_and_grouping_errors():
    with pytest.raises(InputError, match="rating_range"):
        AgreementData.from_records(RECORDS, rating_range=(4, 0))
    with pytest.raises(InputError, match="`by`"):
        AgreementData.from_records(RECORDS).groups("seed")
    data = AgreementData.from_records([{"sample_id": "a", "ratings": {"cp": {"u": 0.5}}}], rating_range=(0, 1))
    assert data.rating_range == (0.0, 1.0)
    assert math.isnan(AgreementData.from_records(RECORDS).metric_values([data.records[0]], "cp")[0])
