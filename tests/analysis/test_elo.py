"""Online Elo against a hand computation."""

import numpy as np
import pytest
from pairwise_votes import davidson_judgments

from masc_ui.analysis.elo import elo_ratings
from masc_ui.analysis.pairwise_data import PairwiseData
from masc_ui.errors import InputError


def votes(*rows):
    return PairwiseData.from_records(
        [
            {
                "left": f"{k}a",
                "right": f"{k}b",
                "left_method": lm,
                "right_method": rm,
                "winner": w,
                "criterion": "cp",
                "rater": "r",
            }
            for k, (lm, rm, w) in enumerate(rows)
        ]
    )


def expected(r_self, r_other):
    return 1 / (1 + 10 ** ((r_other - r_self) / 400))


def test_hand_computation():
    # 1) A beats B (shown as B left, A right); 2) B ties C; 3) C beats A.  K = 32, start 1000.
    elo = elo_ratings(votes(("B", "A", "right"), ("B", "C", "tie"), ("C", "A", "left")), "cp", k=32)
    a, b, c = 1016.0, 984.0, 1000.0  # step 1: both expected 0.5, A +16, B -16
    e_b = expected(b, c)  # step 2: B 984 vs C 1000, tie
    b, c = b + 32 * (0.5 - e_b), c + 32 * (0.5 - (1 - e_b))
    e_c = expected(c, a)  # step 3: C beats A, from the ratings before this vote
    c, a = c + 32 * (1 - e_c), a + 32 * (0 - (1 - e_c))
    assert elo.rating == pytest.approx({"A": a, "B": b, "C": c}, abs=1e-9)
    assert b == pytest.approx(984.736307, abs=1e-6)  # 984 + 32 (0.5 - 1 / (1 + 10^0.04))
    assert sum(elo.rating.values()) == pytest.approx(3000.0)  # zero-sum updates
    assert elo.rank == {"C": 1, "A": 2, "B": 3}
    assert elo.n_votes == 3 and elo.shuffles == 0


def test_defaults_are_the_arenas():
    elo = elo_ratings(votes(("A", "B", "left")), "cp")
    assert (elo.k, elo.initial, elo.scale, elo.base) == (4.0, 1000.0, 400.0, 10.0)
    assert elo.rating == pytest.approx({"A": 1002.0, "B": 998.0})


def test_order_matters_and_shuffles_average_seeded_orders():
    rows = [("A", "B", "left")] * 5 + [("B", "A", "left")] * 5
    data = votes(*rows)
    given = elo_ratings(data, "cp", k=32)
    reverse = elo_ratings(votes(*rows[::-1]), "cp", k=32)
    assert given.rating["A"] != pytest.approx(reverse.rating["A"])
    shuffled = elo_ratings(data, "cp", k=32, shuffles=20, seed=3)
    rng = np.random.default_rng(3)
    runs = []
    for _ in range(20):
        order = rng.permutation(10)
        runs.append(elo_ratings(votes(*[rows[i] for i in order]), "cp", k=32).rating["A"])
    assert shuffled.rating["A"] == pytest.approx(np.mean(runs), abs=1e-9)
    assert shuffled.shuffles == 20


def test_ranks_follow_strengths_on_many_votes():
    data = PairwiseData.from_records(davidson_judgments([-1.0, 0.0, 1.0], 0.3, 1500, raters_per_pair=1, seed=1))
    elo = elo_ratings(data, "cp", k=8, shuffles=5)
    assert [elo.rank[m] for m in ("m0", "m1", "m2")] == [3, 2, 1]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"k": 0}, "k must be"),
        ({"scale": float("inf")}, "scale"),
        ({"base": 1.0}, "base"),
        ({"initial": float("nan")}, "initial"),
        ({"shuffles": -1}, "shuffles"),
        ({"shuffles": 2.5}, "shuffles"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InputError, match=match):
        elo_ratings(votes(("A", "B", "left")), "cp", **kwargs)


def test_same_method_votes_are_left_out():
    elo = elo_ratings(votes(("A", "A", "left"), ("A", "B", "tie")), "cp")
    assert elo.n_votes == 1 and elo.n_excluded == 1 and elo.rating == {"A": 1000.0, "B": 1000.0}
    with pytest.raises(InputError, match="two different known methods"):
        elo_ratings(votes(("A", "A", "left")), "cp")
