"""The `active` assignment policy's rules on a live study's state: the rating task of the method with the widest
estimated interval, and the method pair whose Bradley-Terry outcome is most uncertain."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from masc_ui.analysis.active_assignment import (
    PRIOR_SAMPLES,
    Z95,
    Answers,
    shrunk_widths,
    widest_interval_choice,
)
from masc_ui.analysis.pair_planner import (
    PRIOR_PRECISION,
    PairCandidate,
    next_pair,
    outcome_uncertainty,
    plan_pairs,
)
from masc_ui.analysis.pairwise_data import PairJudgment
from masc_ui.errors import InputError


def test_shrunk_widths_are_the_simulations_widths():
    rng = np.random.default_rng(3)
    methods = ["a"] * 6 + ["b"] * 4 + ["c"] * 2
    answers = Answers(methods)
    per_method: dict[str, list[float]] = {}
    for i, m in enumerate(methods):
        answers.add(i, 0, float(rng.integers(0, 5)))
        per_method.setdefault(m, []).append(answers.by_sample[i][0][1])
    assert shrunk_widths(per_method) == pytest.approx(answers.widths())
    # by hand for "a": the pooled variance over a and b (c has 2 samples: no interval, but its dof count)
    ss = {m: float(np.sum((np.array(v) - np.mean(v)) ** 2)) for m, v in per_method.items()}
    pooled = sum(ss.values()) / (5 + 3 + 1)
    expected = 2 * Z95 * math.sqrt((ss["a"] + PRIOR_SAMPLES * pooled) / (5 + PRIOR_SAMPLES)) / math.sqrt(6)
    assert shrunk_widths(per_method)["a"] == pytest.approx(expected)
    assert shrunk_widths(per_method)["c"] == math.inf


def test_the_method_with_the_widest_interval_gets_the_next_answer():
    method = {i: ("spread" if i < 10 else "steady") for i in range(20)}
    # each method has 4 rated samples: "spread" disagrees with itself, "steady" does not
    means = {
        "cp": {0: 0.0, 1: 4.0, 2: 0.5, 3: 3.5, 10: 2.0, 11: 2.0, 12: 2.5, 13: 2.0},
        "pf": {0: 2.0, 1: 2.0, 2: 2.0, 3: 2.0, 10: 2.0, 11: 2.0, 12: 2.0, 13: 2.0},
    }
    complete = {i: (1 if i in means["cp"] else 0) for i in range(20)}
    waiting = (15, 2, 16, 7, 5, 11)
    # the widest method is "spread" (its CP interval); in it, an unrated sample first, the first in the order
    assert widest_interval_choice(waiting, method, complete, means) == 7
    # when "steady"'s PF disagrees, its PF interval is the widest of all
    means["pf"].update({10: 0.0, 11: 4.0, 12: 0.0, 13: 4.0})
    assert widest_interval_choice(waiting, method, complete, means) == 15
    # a method with too few rated samples has an unknown (infinite) interval: it comes first
    method[30] = "new"
    means["cp"][30] = 2.0
    assert widest_interval_choice((15, 7, 30), method, {**complete, 30: 1}, means) == 30
    # within a method: the fewest complete ratings, then the rater's order
    assert widest_interval_choice((2, 3, 1), method, {1: 1, 2: 2, 3: 1}, means) == 3
    with pytest.raises(InputError, match="no open task"):
        widest_interval_choice((), method, complete, means)


def _bt_posterior_by_optimiser(m: int, votes: list[tuple[int, int, float]]) -> tuple[np.ndarray, np.ndarray]:
    """The same posterior computed independently: its mode by BFGS, its curvature by finite differences."""

    def neg_log_post(theta: np.ndarray) -> float:
        total = 0.5 * PRIOR_PRECISION * float(theta @ theta)
        for i, j, won in votes:
            d = theta[i] - theta[j]
            total -= won * -np.logaddexp(0, -d) + (1 - won) * -np.logaddexp(0, d)
        return total

    mode = minimize(neg_log_post, np.zeros(m), method="BFGS", options={"gtol": 1e-10}).x
    h = 1e-4
    hess = np.empty((m, m))
    for a in range(m):
        for b in range(m):
            ea, eb = np.eye(m)[a] * h, np.eye(m)[b] * h
            hess[a, b] = (
                neg_log_post(mode + ea + eb)
                - neg_log_post(mode + ea - eb)
                - neg_log_post(mode - ea + eb)
                + neg_log_post(mode - ea - eb)
            ) / (4 * h * h)
    return mode, np.linalg.inv(hess)


def _plan():
    outputs = [PairCandidate(f"{r}{m}", f"ref{r}", "p", m) for r in "xyz" for m in ("A", "B", "C")]
    return plan_pairs(outputs, seed=1)


def test_outcome_uncertainty_is_the_bradley_terry_posteriors_delta_method():
    plan = _plan()
    assert plan.method_pairs == (("A", "B"), ("A", "C"), ("B", "C"))
    # no vote: every method pair equally uncertain
    assert outcome_uncertainty(plan, []) == pytest.approx([2 / 16 / PRIOR_PRECISION] * 3)
    judgments = [
        PairJudgment("xA", "xB", "cp", "left", "r1"),
        PairJudgment("yB", "yA", "cp", "right", "r1"),
        PairJudgment("zA", "zB", "cp", "left", "r2"),
        PairJudgment("xA", "xB", "cp", "tie", "r2"),
        PairJudgment("xB", "xC", "cp", "left", "r1"),
        PairJudgment("xA", "xB", "pf", "right", "r1"),
    ]
    got = outcome_uncertainty(plan, judgments)
    expected = np.zeros(3)
    for votes in (
        [(0, 1, 1.0), (1, 0, 0.0), (0, 1, 1.0), (0, 1, 0.5), (1, 2, 1.0)],  # cp
        [(0, 1, 0.0)],  # pf
    ):
        mode, cov = _bt_posterior_by_optimiser(3, votes)
        for k, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
            p = 1 / (1 + math.exp(mode[j] - mode[i]))
            expected[k] = max(expected[k], (p * (1 - p)) ** 2 * (cov[i, i] + cov[j, j] - 2 * cov[i, j]))
    assert got == pytest.approx(expected, rel=1e-4)
    # A and B are settled most, A and C (no direct vote) least
    assert int(np.argmax(got)) == 1 and int(np.argmin(got)) == 0


def test_the_active_pair_comes_from_the_most_uncertain_method_pair_and_new_pairs_first():
    plan = _plan()
    uncertainty = np.array([0.01, 0.05, 0.02])  # A-C most uncertain
    given = [("r2", ("xA", "xC"))]
    task = next_pair(plan, "r1", given, overlap=2, uncertainty=uncertainty)
    assert task.pair.method_pair == ("A", "C")
    assert task.pair.key != ("xA", "xC")  # a pair nobody was given before the started one
    # once the rater holds every A-C pair, the next most uncertain method pair
    mine = [("r1", p.key) for p in plan.pairs if p.method_pair == ("A", "C")]
    assert next_pair(plan, "r1", mine, overlap=2, uncertainty=uncertainty).pair.method_pair == ("B", "C")
