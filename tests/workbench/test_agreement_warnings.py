"""Agreement without caution is never shown (issue 11): the warnings of a table on few samples, of a single rater and
without CIs (`view_warnings`), and the reason of each row whose numbers are missing (`row_note`)."""

from __future__ import annotations

import numpy as np

from masc_ui.analysis import agreement_table
from masc_ui.analysis.data import AgreementData
from masc_ui.workbench.agreement import SMALL_N, row_note, view_warnings


def _data(records: list[dict]) -> AgreementData:
    return AgreementData.from_records(records)


def test_one_rater_on_two_samples_is_warned_about():
    data = _data(
        [
            {"sample_id": "1", "metrics": {"clip_i": 0.2}, "ratings": {"cp": {"alice": 1}}},
            {"sample_id": "2", "metrics": {"clip_i": 0.8}, "ratings": {"cp": {"alice": 3}}},
        ]
    )
    table = agreement_table(data, None, criterion="cp", n_boot=0)
    warnings = view_warnings(table, data)
    assert len(warnings) == 3
    assert warnings[0].startswith(
        f"only 2 sample(s) have both a metric value and a human rating (fewer than {SMALL_N})"
    )
    assert warnings[1].startswith("a single rater (alice): there is no human-vs-human agreement")
    assert warnings[2] == "0 bootstrap resamples: no confidence intervals"
    assert row_note(table.row("humans"), table, data) == "one rater only: needs 2+ raters on the same samples"


def test_each_row_without_numbers_says_why():
    data = _data(
        [
            {
                "sample_id": "1",
                "metrics": {"clip_i": 0.2, "dino_i": 0.5, "pf_judge": 0.4},
                "ratings": {"cp": {"alice": 1, "bob": 2}},
            },
            {"sample_id": "2", "metrics": {"clip_i": 0.8, "dino_i": 0.5}, "ratings": {"cp": {"alice": 3, "bob": 3}}},
            {"sample_id": "3", "metrics": {"clip_i": 0.5, "dino_i": 0.5, "pickscore": 20.0}},
            {"sample_id": "4", "metrics": {"clip_i": 0.4, "dino_i": 0.5}, "ratings": {"cp": {"alice": 0}}},
        ]
    )
    table = agreement_table(data, None, criterion="cp", n_boot=0)
    notes = {m: row_note(table.row(m), table, data) for m in ("clip_i", "dino_i", "pf_judge", "pickscore", "humans")}
    assert notes["clip_i"] == ""  # three samples with a value and ratings that vary: numbers, no note
    assert notes["dino_i"] == "values or ratings do not vary: undefined"
    assert notes["pf_judge"] == "1 sample only: needs 2 or more"
    assert notes["pickscore"] == "no sample has a value and a rating"
    assert notes["humans"] == ""  # alice and bob share samples 1 and 2
    assert not any("single rater" in w for w in view_warnings(table, data))


def test_two_raters_who_share_no_sample_and_a_large_table():
    apart = _data(
        [
            {"sample_id": "1", "metrics": {"clip_i": 0.2}, "ratings": {"cp": {"alice": 1}}},
            {"sample_id": "2", "metrics": {"clip_i": 0.8}, "ratings": {"cp": {"bob": 3}}},
            {"sample_id": "3", "metrics": {"clip_i": 0.5}, "ratings": {"cp": {"bob": 2}}},
        ]
    )
    table = agreement_table(apart, None, criterion="cp", n_boot=0)
    assert row_note(table.row("humans"), table, apart) == "2 raters, but no sample rated by two of them"
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 5, SMALL_N + 5)
    records = [
        {
            "sample_id": str(i),
            "metrics": {"clip_i": float(t) / 4 + rng.normal(0, 0.1)},
            "ratings": {"cp": {"alice": int(t), "bob": int(min(4, t + rng.integers(0, 2)))}},
        }
        for i, t in enumerate(truth)
    ]
    large = _data(records)
    table = agreement_table(large, None, criterion="cp", n_boot=50)
    assert view_warnings(table, large) == []  # enough samples, two raters, CIs: nothing to warn about
    assert {m: row_note(table.row(m), table, large) for m in ("clip_i", "humans")} == {"clip_i": "", "humans": ""}


def test_the_humans_row_counts_the_samples_two_raters_rated():
    """20 samples rated by alice, 6 of them by bob too: the humans row (and the ceiling line) rest on those 6."""
    rng = np.random.default_rng(3)
    records = []
    for i in range(20):
        t = int(rng.integers(0, 5))
        ratings = {"alice": t} if i >= 6 else {"alice": t, "bob": int(min(4, t + rng.integers(0, 2)))}
        records.append(
            {"sample_id": str(i), "metrics": {"clip_i": t / 4 + rng.normal(0, 0.1)}, "ratings": {"cp": ratings}}
        )
    data = _data(records)
    table = agreement_table(data, None, criterion="cp", n_boot=50)
    humans = table.row("humans")
    assert humans.n == 6 and humans.n_raters == 2
    doubly = _data([r for r in records if len(r["ratings"]["cp"]) == 2])
    alone = agreement_table(doubly, None, criterion="cp", n_boot=50).row("humans")
    assert humans.alpha.value == alone.alpha.value and humans.alpha.ci_low == alone.alpha.ci_low
    warnings = view_warnings(table, data)
    assert any(w.startswith("only 6 sample(s) were rated by two or more raters") for w in warnings), warnings


def test_the_summary_counts_the_samples_the_humans_row_rests_on():
    """Ratings by two raters and no metric value: the tab's "computed on up to N sample(s)" is the humans row's n."""
    from masc_ui.workbench.agreement import AgreementView

    data = _data(
        [
            {"sample_id": str(i), "metrics": {}, "ratings": {"cp": {"alice": i % 5, "bob": (i + 1) % 5}}}
            for i in range(9)
        ]
    )
    table = agreement_table(data, None, criterion="cp", n_boot=0)
    assert AgreementView(table, "", data).samples_used == 9 == table.row("humans").n
