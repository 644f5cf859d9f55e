"""The input of pairwise analysis: human judgments "which of two outputs is better" per criterion, storage-free.

A judgment names the two samples as they were shown (left, right), the criterion, the answer (`left`, `right`
or `tie`), the rater, and the methods of both samples. Raters see the two outputs in different random orders,
so every analysis first puts a judgment in the pair's *canonical orientation*: (a, b) = the two sample ids
sorted, and the outcome coded `A_WINS` (0), `TIE` (1) or `B_WINS` (2) — an ordinal code: a better < tie < b better.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError

WINNERS = ("left", "right", "tie")
A_WINS, TIE, B_WINS = 0, 1, 2
"""Outcome codes in canonical orientation."""


@dataclass(frozen=True)
class PairJudgment:
    """One rater's answer on one pair of outputs for one criterion."""

    left: str
    """Sample id shown on the left."""
    right: str
    """Sample id shown on the right."""
    criterion: str
    """`cp`, `pf`, ..."""
    winner: str
    """`left`, `right` or `tie`."""
    rater: str
    left_method: str | None = None
    """Method that generated the left sample (None = unknown: the judgment counts for agreement and metric
    accuracy, not for method rankings)."""
    right_method: str | None = None


@dataclass(frozen=True)
class Votes:
    """The judgments of one criterion in canonical orientation, in the order given (arrays of length V)."""

    criterion: str
    pairs: tuple[tuple[str, str], ...]
    """Canonical pairs (a, b), a < b, in first-seen order."""
    pair_methods: tuple[tuple[str | None, str | None], ...]
    """(method of a, method of b) per pair."""
    raters: tuple[str, ...]
    pair: np.ndarray
    """int64 (V,): index into `pairs`."""
    rater: np.ndarray
    """int64 (V,): index into `raters`."""
    outcome: np.ndarray
    """int64 (V,): `A_WINS`, `TIE` or `B_WINS`."""


@dataclass(frozen=True)
class PairwiseData:
    """Validated judgments: each (rater, pair, criterion) at most once; each sample has one method."""

    judgments: tuple[PairJudgment, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "judgments", tuple(self.judgments))
        seen: dict[tuple[str, tuple[str, str], str], int] = {}
        methods: dict[str, str] = {}
        for index, j in enumerate(self.judgments):
            where = f"pairwise judgment #{index} ({j.rater!r} on {j.left!r} vs {j.right!r}, {j.criterion!r})"
            if j.winner not in WINNERS:
                raise InputError(f"{where}: winner must be one of {', '.join(WINNERS)}; got {j.winner!r}")
            if j.left == j.right:
                raise InputError(f"{where}: a pair needs two different samples")
            key = (j.rater, canonical(j.left, j.right), j.criterion)
            if key in seen:
                raise InputError(
                    f"{where}: the same rater judged this pair for this criterion already (judgment "
                    f"#{seen[key]}); keep one current judgment per rater, pair and criterion"
                )
            seen[key] = index
            for sample, method in ((j.left, j.left_method), (j.right, j.right_method)):
                if method is not None and methods.setdefault(sample, method) != method:
                    raise InputError(
                        f"{where}: sample {sample!r} is given method {method!r} here and "
                        f"{methods[sample]!r} elsewhere; a sample has one method"
                    )

    @classmethod
    def from_records(cls, records: Iterable[Any]) -> PairwiseData:
        """From `PairJudgment`s or dicts with keys left, right, criterion, winner, rater (and optionally
        left_method, right_method), or a pandas DataFrame with those columns."""
        if hasattr(records, "to_dict") and hasattr(records, "columns"):
            records = records.to_dict("records")
        if isinstance(records, (str, bytes, Mapping)) or not hasattr(records, "__iter__"):
            raise InputError(
                "pairwise judgments must be a list of records (left, right, criterion, winner, rater, "
                f"left_method, right_method); got {type(records).__name__}"
            )
        return cls(tuple(_as_judgment(r, i) for i, r in enumerate(records)))

    @property
    def criteria(self) -> list[str]:
        return list(dict.fromkeys(j.criterion for j in self.judgments))

    def sample_methods(self) -> dict[str, str]:
        """Sample id -> method, for the samples whose method is known."""
        out: dict[str, str] = {}
        for j in self.judgments:
            for sample, method in ((j.left, j.left_method), (j.right, j.right_method)):
                if method is not None:
                    out[sample] = method
        return out

    def votes(self, criterion: str) -> Votes:
        """The judgments of `criterion` in canonical orientation. InputError when there are none."""
        chosen = [j for j in self.judgments if j.criterion == criterion]
        if not chosen:
            raise InputError(f"no pairwise judgments for criterion {criterion!r}; judged: {self.criteria or 'none'}")
        methods = self.sample_methods()
        pairs: dict[tuple[str, str], int] = {}
        raters: dict[str, int] = {}
        pair_idx, rater_idx, outcome = [], [], []
        for j in chosen:
            a, b = canonical(j.left, j.right)
            pair_idx.append(pairs.setdefault((a, b), len(pairs)))
            rater_idx.append(raters.setdefault(j.rater, len(raters)))
            outcome.append(
                TIE if j.winner == "tie" else A_WINS if (j.left if j.winner == "left" else j.right) == a else B_WINS
            )
        return Votes(
            criterion,
            tuple(pairs),
            tuple((methods.get(a), methods.get(b)) for a, b in pairs),
            tuple(raters),
            np.array(pair_idx, dtype=np.int64),
            np.array(rater_idx, dtype=np.int64),
            np.array(outcome, dtype=np.int64),
        )


def canonical(first: str, second: str) -> tuple[str, str]:
    """The pair's canonical orientation: its two sample ids sorted."""
    return (first, second) if first < second else (second, first)


def _as_judgment(raw: Any, index: int) -> PairJudgment:
    if isinstance(raw, PairJudgment):
        return raw
    if not isinstance(raw, Mapping):
        raise InputError(f"pairwise judgment #{index} must be a dict or PairJudgment; got {type(raw).__name__}")
    fields = ("left", "right", "criterion", "winner", "rater", "left_method", "right_method")
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise InputError(f"pairwise judgment #{index} has unknown key(s) {unknown}; expected {', '.join(fields)}")
    missing = [f for f in fields[:5] if _text(raw.get(f)) is None]
    if missing:
        raise InputError(f"pairwise judgment #{index} lacks {', '.join(missing)}")
    return PairJudgment(**{f: _text(raw.get(f)) for f in fields})  # type: ignore[arg-type]


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return str(value)


@dataclass(frozen=True)
class MethodVotes:
    """The votes of one criterion between two *different, known* methods, in the order given (arrays (V,)).

    Votes on a pair whose samples share a method, or whose method is unknown, are left out of method rankings
    (counted in `n_excluded`); they still count for rater agreement and metric accuracy."""

    criterion: str
    methods: tuple[str, ...]
    """Sorted names of the methods with at least one kept vote."""
    first: np.ndarray
    """int64 (V,): method index of the pair's sample a."""
    second: np.ndarray
    """int64 (V,): method index of sample b."""
    outcome: np.ndarray
    """int64 (V,): `A_WINS`, `TIE`, `B_WINS` (a = `first`)."""
    pair: np.ndarray
    """int64 (V,): index into `pairs` (the output pairs that have kept votes)."""
    pairs: tuple[tuple[str, str], ...]
    n_excluded: int


def method_votes(votes: Votes) -> MethodVotes:
    """Keep the votes between different known methods and index their methods."""
    pair_methods = votes.pair_methods
    keep = np.array(
        [
            pair_methods[p][0] is not None
            and pair_methods[p][1] is not None
            and pair_methods[p][0] != pair_methods[p][1]
            for p in votes.pair
        ],
        dtype=bool,
    )
    kept_pairs = sorted(set(votes.pair[keep].tolist()))
    methods = tuple(sorted({m for p in kept_pairs for m in pair_methods[p]}))  # type: ignore[misc]
    index = {m: i for i, m in enumerate(methods)}
    renumber = {p: k for k, p in enumerate(kept_pairs)}
    pair = votes.pair[keep]
    return MethodVotes(
        votes.criterion,
        methods,
        np.array([index[pair_methods[p][0]] for p in pair], dtype=np.int64),
        np.array([index[pair_methods[p][1]] for p in pair], dtype=np.int64),
        votes.outcome[keep].copy(),
        np.array([renumber[p] for p in pair], dtype=np.int64),
        tuple(votes.pairs[p] for p in kept_pairs),
        int((~keep).sum()),
    )
