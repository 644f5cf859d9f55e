"""Rating-assignment policies and their simulation: the running interval sums equal a direct computation, each
policy hands out what its rule says, and on recorded ratings the widest-interval policy reaches a width with
fewer answers than the overlap rule."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from masc_ui.analysis.active_assignment import (
    MIN_SAMPLES,
    Answers,
    RatedPool,
    interval_width,
    next_task,
    pool_from_cells,
    simulate,
)

IMAGENHUB = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "imagenhub" / "human_ratings"


def test_running_sums_equal_a_direct_computation():
    rng = np.random.default_rng(0)
    methods = ["a"] * 6 + ["b"] * 5
    noise = [float(v) for v in rng.random(len(methods))]
    answers = Answers(methods, noise)
    given: dict[int, list[float]] = {}
    for k in range(25):
        i = int(rng.integers(len(methods)))
        x = float(rng.choice([0.0, 0.5, 1.0]))
        answers.add(i, k, x)
        given.setdefault(i, []).append(x)
    between = {"a": 0.04, "b": 0.09}
    for m in ("a", "b"):
        mine = [i for i in given if methods[i] == m]
        means = [float(np.mean(given[i])) for i in mine]
        assert answers.means()[m] == pytest.approx(np.mean(means))
        direct = (
            2
            * 1.959963984540054
            * math.sqrt(between[m] / len(mine) + sum(noise[i] / len(given[i]) for i in mine) / len(mine) ** 2)
        )
        assert answers.true_widths(between)[m] == pytest.approx(direct)
        assert interval_width(means) == pytest.approx(
            2 * 1.959963984540054 * np.std(means, ddof=1) / math.sqrt(len(means))
        )
    assert math.isinf(interval_width([1.0] * (MIN_SAMPLES - 1)))


def test_each_policy_hands_out_what_its_rule_says():
    rng = np.random.default_rng(1)
    methods = ["a", "a", "a", "a", "b", "b", "b", "b"]
    answers = Answers(methods)
    order = [3, 1, 0, 2, 7, 6, 5, 4]
    assert next_task("overlap", answers, 0, rng, order) == 3
    answers.add(3, 0, 1.0)
    assert next_task("overlap", answers, 1, rng, order) == 3  # a started sample is completed first
    assert next_task("overlap", answers, 0, rng, order) == 1  # ... by another rater: rater 0 gets the next one
    for i, x in ((0, 1.0), (1, 0.0), (2, 0.5), (4, 1.0), (5, 1.0), (6, 1.0)):
        answers.add(i, 0, x)
    # a's answers disagree, b's agree: a's interval is the wider one. Rater 0 answered every a, so only b's 7 is
    # open to them; rater 1 gets an a, one of those with the fewest answers.
    assert next_task("widest", answers, 0, rng, order) == 7
    assert {next_task("widest", answers, 1, rng, order) for _ in range(20)} <= {0, 1, 2, 3}
    for _ in range(20):
        got = next_task("random", answers, 0, rng, order)
        assert got == 7
    with pytest.raises(ValueError, match="policy must be one of"):
        next_task("luck", answers, 0, rng, order)


def test_on_a_constructed_pool_the_widest_policy_spends_its_answers_where_the_doubt_is():
    rng = np.random.default_rng(2)
    certain = [(1.0, 1.0, 1.0)] * 200  # method "settled": every sample rated 1 by everyone
    doubtful = [tuple(float(x) for x in rng.choice([0.0, 0.5, 1.0], 3)) for _ in range(200)]
    pool = RatedPool(("settled",) * 200 + ("open",) * 200, tuple(certain + doubtful))
    for seed in range(3):
        widest = simulate(pool, "widest", 0.2, seed)
        overlap = simulate(pool, "overlap", 0.2, seed)
        assert widest.reached and overlap.reached and widest.answers < 0.6 * overlap.answers


@pytest.mark.skipif(not IMAGENHUB.is_dir(), reason="../shared/data/imagenhub is not here")
def test_on_imagenhub_the_widest_policy_needs_fewer_answers_than_the_overlap_rule():
    from masc_ui.datasets.imagenhub import read_imagenhub

    task = read_imagenhub(IMAGENHUB).tasks["Subject-Driven_IG"]
    cells = {r: {m: {u: c[0] for u, c in task.cells[r][m].items()} for m in task.models} for r in task.raters}
    pool = pool_from_cells(cells)
    assert len(pool.methods) == 750 and set(pool.truth) == set(task.models)
    widest = [simulate(pool, "widest", 0.2, seed).answers for seed in range(3)]
    overlap = [simulate(pool, "overlap", 0.2, seed).answers for seed in range(3)]
    assert np.median(widest) <= 0.6 * np.median(overlap)
