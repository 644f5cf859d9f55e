"""Rater quality statistics against independent computations: numpy's median and percentile, the krippendorff
package's interval alpha, scipy's Spearman; runs of identical answers; the marks and their thresholds."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr

from masc_ui.analysis.bootstrap import Estimate
from masc_ui.analysis.rater_quality import (
    Graded,
    RaterQuality,
    TaskAnswer,
    longest_identical_run,
    loo_alpha,
    marks_of,
    metric_agreement,
    task_answers,
    time_stats,
)

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Rating:
    rater: str
    sample_id: int
    criterion: str
    score: int | None
    status: str
    seconds_spent: float | None
    presentation_order: int | None
    created_at: dt.datetime


def test_tasks_are_read_from_ratings():
    ratings = [
        Rating("a", 1, "cp", 3, "rated", 4.0, 1, T0),
        Rating("a", 1, "pf", 2, "rated", 4.0, 1, T0),
        Rating("a", 2, "cp", None, "flagged", 9.0, 2, T0),
        Rating("a", 2, "pf", None, "flagged", 9.0, 2, T0),
        Rating("a", 3, "cp", 1, "rated", None, 3, T0),  # pf missing: not finished
        Rating("a", 4, "sc", 4, "rated", None, None, T0),  # an imported criterion: ignored
    ]
    found = {a.sample_id: a for a in task_answers(ratings, ("cp", "pf"))}
    assert set(found) == {1, 2}
    assert (found[1].status, dict(found[1].scores), found[1].seconds) == ("rated", {"cp": 3, "pf": 2}, 4.0)
    assert (found[2].status, dict(found[2].scores)) == ("flagged", {})


def test_time_stats_are_numpys():
    times = [3.0, 1.5, 8.0, 2.0, 40.0, 5.5, 0.4]
    assert time_stats(times) == (float(np.median(times)), float(np.percentile(times, 10)))
    assert all(math.isnan(x) for x in time_stats([]))


def _answer(order: int, cp: int, pf: int, status: str = "rated") -> TaskAnswer:
    return TaskAnswer("a", order, status, {"cp": cp, "pf": pf} if status == "rated" else {}, 3.0, (order, 0.0))


def test_the_longest_run_of_identical_answers_follows_the_order():
    answers = [_answer(i, *s) for i, s in enumerate([(3, 3), (3, 3), (2, 3), (2, 3), (2, 3), (4, 4)], 1)]
    assert longest_identical_run(answers) == 3
    shuffled = [answers[i] for i in (5, 0, 3, 1, 4, 2)]  # the stored order, not the list's, counts
    assert longest_identical_run(shuffled) == 3
    skipped_between = [_answer(1, 2, 2), _answer(2, 0, 0, "skipped"), _answer(3, 2, 2)]
    assert longest_identical_run(skipped_between) == 2  # a skip is no answer: the run goes on
    assert longest_identical_run([]) == 0


def test_leave_one_out_alpha_is_the_packages_against_the_others_mean():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 5, 30).astype(float)
    others = np.clip(truth + rng.integers(-1, 2, (3, 30)), 0, 4).astype(float)
    others[0, :5] = np.nan
    own = np.clip(truth + rng.integers(-2, 3, 30), 0, 4).astype(float)
    own[-3:] = np.nan
    est, n = loo_alpha(own, others, n_boot=300, seed=1)
    consensus = np.nanmean(others, axis=0)
    expected = krippendorff.alpha(reliability_data=np.vstack([own, consensus]), level_of_measurement="interval")
    assert n == 27 and est.value == pytest.approx(expected, abs=1e-12)
    assert est.ci_low < est.value < est.ci_high
    alone, n_alone = loo_alpha(own, np.empty((0, 30)))
    assert n_alone == 0 and math.isnan(alone.value)


def test_metric_agreement_is_scipys_spearman():
    rng = np.random.default_rng(0)
    own = rng.integers(0, 5, 20).astype(float)
    values = own + rng.normal(0, 1.0, 20)
    own[2] = np.nan
    rho, n = metric_agreement(own, values)
    keep = ~np.isnan(own)
    assert n == 19 and rho == pytest.approx(spearmanr(own[keep], values[keep]).statistic, abs=1e-12)


def _quality(**changes) -> RaterQuality:
    base = dict(
        rater="a",
        answers=20,
        skips=0,
        flags=0,
        median_seconds=6.0,
        p10_seconds=3.0,
        under_floor=0,
        timed=20,
        longest_identical_run=2,
        gold=Graded(3, 3),
        attention=Graded(2, 2),
        loo_alpha=Estimate(0.7, 0.5, 0.8),
        loo_n=20,
    )
    return RaterQuality(**(base | changes))


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({}, None),
        ({"gold": Graded(1, 4)}, "gold accuracy 1/4 is under 70%"),
        ({"gold": Graded(0, 2)}, None),  # too few graded answers to judge
        ({"attention": Graded(1, 2)}, "passed 1/2 attention checks (under 75%)"),
        ({"under_floor": 6}, "6/20 tasks answered under the time floor (over 25%)"),
        ({"under_floor": 5}, None),
        ({"longest_identical_run": 10}, "10 identical answers in a row"),
        ({"loo_alpha": Estimate(0.1, 0.0, 0.3)}, "agreement with the other raters alpha 0.10 is under 0.2"),
        ({"loo_alpha": Estimate(0.1, 0.0, 0.3), "loo_n": 9}, None),
    ],
)
def test_marks_name_the_threshold_crossed(changes, said):
    assert marks_of(_quality(**changes)) == (() if said is None else (said,))
