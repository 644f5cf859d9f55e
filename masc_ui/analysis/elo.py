"""Online Elo ratings of methods from pairwise votes: the arena-style view (Chatbot Arena / GenAI-Arena).

Update, for each vote between methods i and j in turn (votes between two different known methods only):
    E_i = 1 / (1 + base^((R_j - R_i) / scale)),   E_j = 1 - E_i,
    S_i = 1 (i won), 0.5 (tie), 0 (j won),        S_j = 1 - S_i,
    R_i += K (S_i - E_i),   R_j += K (S_j - E_j)        (both from the ratings before this vote).
Defaults as the arena's online Elo: K = 4, initial rating 1000, scale 400, base 10. A small study moves
ratings little at K = 4; pass a larger K (16-32) there.

Order: the votes in the order given (the caller passes them in the order they were made, e.g. by time); the
result depends on it. With `shuffles` = S > 0 the rating is instead the mean over S random orders of the
same votes (permutations from `seed`), which removes that dependence (the arena's remedy); the given order is
then not used. Bradley-Terry (`bradley_terry`) is the order-free estimate of the same scale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .pairwise_data import A_WINS, TIE, PairwiseData, method_votes
from .ranking import competition_ranks

DEFAULT_K = 4.0
DEFAULT_INITIAL = 1000.0
DEFAULT_SCALE = 400.0
DEFAULT_BASE = 10.0
MAX_SHUFFLES = 2_000
"""Most random orders averaged (each costs an (m,) rating row; all advance together, one vote per step)."""


@dataclass(frozen=True)
class EloRatings:
    criterion: str
    methods: tuple[str, ...]
    rating: Mapping[str, float]
    rank: Mapping[str, int | None]
    """1 = highest rating; ties share the best rank."""
    n_votes: int
    n_excluded: int
    """Votes left out: both samples of one method, or a method unknown."""
    k: float
    initial: float
    scale: float
    base: float
    shuffles: int
    """0 = the given order; S > 0 = the mean over S seeded random orders."""
    seed: int | None


def elo_ratings(
    data: PairwiseData,
    criterion: str,
    k: float = DEFAULT_K,
    initial: float = DEFAULT_INITIAL,
    scale: float = DEFAULT_SCALE,
    base: float = DEFAULT_BASE,
    shuffles: int = 0,
    seed: int | None = 0,
) -> EloRatings:
    """Elo ratings of the methods from the votes of `criterion` (see the module docstring).

    Raises:
        InputError: no judgments for `criterion`, no vote between two different known methods, bad parameters.
    """
    for name, value in (("k", k), ("scale", scale)):
        if not (np.isfinite(value) and value > 0):
            raise InputError(f"Elo {name} must be a finite number > 0; got {value!r}")
    if not (np.isfinite(base) and base > 1):
        raise InputError(f"Elo base must be a finite number > 1 (10 as in chess); got {base!r}")
    if not np.isfinite(initial):
        raise InputError(f"Elo initial rating must be finite; got {initial!r}")
    if not isinstance(shuffles, (int, np.integer)) or not 0 <= shuffles <= MAX_SHUFFLES:
        raise InputError(
            f"shuffles must be an integer within 0..{MAX_SHUFFLES:,} (0 = the given order); got {shuffles!r}"
        )
    votes = method_votes(data.votes(criterion))
    if votes.first.size == 0:
        raise InputError(
            f"no {criterion!r} vote compares outputs of two different known methods; Elo rates methods from such votes"
        )
    score = np.where(votes.outcome == A_WINS, 1.0, np.where(votes.outcome == TIE, 0.5, 0.0))
    m = len(votes.methods)
    if shuffles:
        rng = np.random.default_rng(seed)
        orders = np.stack([rng.permutation(score.size) for _ in range(shuffles)])
    else:
        orders = np.arange(score.size)[None]
    ratings = _run(votes.first, votes.second, score, orders, m, k, initial, scale, base).mean(axis=0)
    ranks = competition_ranks(ratings)
    return EloRatings(
        criterion,
        votes.methods,
        dict(zip(votes.methods, ratings.tolist())),
        dict(zip(votes.methods, ranks)),
        int(score.size),
        votes.n_excluded,
        float(k),
        float(initial),
        float(scale),
        float(base),
        int(shuffles),
        seed,
    )


def _run(
    first: np.ndarray,
    second: np.ndarray,
    score: np.ndarray,
    orders: np.ndarray,
    m: int,
    k: float,
    initial: float,
    scale: float,
    base: float,
) -> np.ndarray:
    """Ratings (S, m) after the votes in each of S orders (rows of `orders`, (S, V) vote indices), the S runs
    advanced side by side: vote v is first[v] scoring score[v] against second[v]."""
    runs = np.arange(orders.shape[0])
    rating = np.full((orders.shape[0], m), float(initial))
    for step in orders.T:
        i, j, s = first[step], second[step], score[step]
        expected = 1.0 / (1.0 + base ** ((rating[runs, j] - rating[runs, i]) / scale))
        rating[runs, i] += k * (s - expected)
        rating[runs, j] += k * ((1.0 - s) - (1.0 - expected))
    return rating
