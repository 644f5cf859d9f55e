"""Pairwise task assignment: which pair of outputs a rater judges next. Pure: the caller passes the state.

Pairs (`plan_pairs`): the outputs are grouped by (reference, prompt); within a group every two outputs of
*different* methods form a pair (several outputs of one method in a group, e.g. seeds, each pair with every
output of the other methods). A pair is identified by its two sample ids sorted, (a, b).

Next pair (`next_pair`) for rater r, given every assignment so far (rater, pair) — the pairs already handed
out, answered or not — and the overlap K: the candidates are the pairs r was never given that fewer than K
raters were given. Among them the chosen pair is the first in this order:
  1. its method pair's *coverage* (assignments so far of all pairs of that method pair), fewest first, so every
     method pair is covered evenly: at each step no method pair r may still take is behind the chosen one;
  2. only with `prefer_uncertain`: the pair's vote margin |votes for a - votes for b| (decisive votes of every
     criterion given so far; a tie counts for neither), smallest first — a pair without a vote or with split
     votes ("closest current votes") before a pair whose votes already lean one way;
  3. raters already given the pair, most first (< K), so overlap groups of K raters complete before new pairs
     start and inter-rater agreement has units early;
  4. a fixed random order of the pairs drawn from `seed` (no bias toward any reference or method).
Assignments of pairs the plan does not hold (e.g. of outputs since removed) are ignored.

Left/right: a pair is shown swapped (b left) for rater r when the first byte of
SHA-256("<seed>\\0<rater>\\0<a>\\0<b>") is odd: a fair coin per (seed, rater, pair), the same on every call, so
the order can be recorded and the task reproduced.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from ..errors import InputError
from .pairwise_data import PairJudgment, canonical


@dataclass(frozen=True)
class PairCandidate:
    """One generated output that may be compared."""

    sample_id: str
    reference: str
    """Identity of the reference the output was generated for (e.g. the subject, or the hash of its images)."""
    prompt: str
    method: str


@dataclass(frozen=True)
class OutputPair:
    a: str
    """The smaller sample id."""
    b: str
    method_a: str
    method_b: str
    reference: str
    prompt: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.a, self.b)

    @property
    def method_pair(self) -> tuple[str, str]:
        """The two methods, sorted."""
        return canonical(self.method_a, self.method_b)


@dataclass(frozen=True)
class PairPlan:
    """Every pair of a dataset, in a fixed random order (rule 4). Build it with `plan_pairs`."""

    pairs: tuple[OutputPair, ...]
    """In the seeded random order."""
    seed: int
    method_pairs: tuple[tuple[str, str], ...]
    """The distinct method pairs, sorted."""
    method_pair_of: np.ndarray = field(compare=False, repr=False)
    """int64 (P,): index into `method_pairs` of each pair."""
    positions: Mapping[tuple[str, str], int] = field(compare=False, repr=False)
    """Pair key (a, b) -> position in `pairs`."""

    def index(self, first: str, second: str) -> int | None:
        """Position of the pair of these two samples (either order) in `pairs`; None if not in the plan."""
        return self.positions.get(canonical(first, second))

    def coverage(self, assignments: Iterable[tuple[str, tuple[str, str]]]) -> dict[tuple[str, str], int]:
        """Method pair -> assignments so far (every method pair of the plan, 0 when none)."""
        counts = np.bincount(self.method_pair_of[self.assigned(assignments)[0]], minlength=len(self.method_pairs))
        return {mp: int(c) for mp, c in zip(self.method_pairs, counts)}

    def without(self, keys: Iterable[tuple[str, str]]) -> PairPlan:
        """This plan less the pairs of `keys` (two sample ids each, either order), the others in the same order
        (e.g. gold pairs, which are never handed out as normal pairs). The plan itself when none is in it."""
        drop = {k for k in (self.index(*key) for key in keys) if k is not None}
        if not drop:
            return self
        kept = [k for k in range(len(self.pairs)) if k not in drop]
        pairs = tuple(self.pairs[k] for k in kept)
        return PairPlan(
            pairs,
            self.seed,
            self.method_pairs,
            self.method_pair_of[np.array(kept, dtype=np.int64)],
            {p.key: k for k, p in enumerate(pairs)},
        )

    def assigned(self, assignments: Iterable[tuple[str, tuple[str, str]]]) -> tuple[np.ndarray, list[str]]:
        """(positions int64 (A,), raters) of the assignments whose pair is in the plan."""
        rows, raters = [], []
        for rater, (first, second) in assignments:
            k = self.index(first, second)
            if k is not None:
                rows.append(k)
                raters.append(rater)
        return np.array(rows, dtype=np.int64), raters


@dataclass(frozen=True)
class PairTask:
    """The next pair for a rater, and how to show it."""

    pair: OutputPair
    left: str
    right: str
    swapped: bool
    """True when b is shown on the left."""


def plan_pairs(outputs: Iterable[PairCandidate], seed: int = 0) -> PairPlan:
    """All pairs of outputs of different methods for the same (reference, prompt) (see the module docstring).

    Raises:
        InputError: a sample id given twice with different reference/prompt/method, or a bad seed.
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed must be an integer >= 0; got {seed!r}")
    seen: dict[str, PairCandidate] = {}
    groups: dict[tuple[str, str], list[PairCandidate]] = {}
    for out in outputs:
        if out.sample_id in seen:
            if seen[out.sample_id] != out:
                raise InputError(
                    f"sample {out.sample_id!r} is given twice with different reference, prompt or "
                    "method; give each output once"
                )
            continue
        seen[out.sample_id] = out
        groups.setdefault((out.reference, out.prompt), []).append(out)
    pairs = []
    for (reference, prompt), members in sorted(groups.items()):
        for x, y in combinations(sorted(members, key=lambda o: o.sample_id), 2):
            if x.method != y.method:
                pairs.append(OutputPair(x.sample_id, y.sample_id, x.method, y.method, reference, prompt))
    shuffled = tuple(pairs[k] for k in np.random.default_rng(seed).permutation(len(pairs)))
    method_pairs = tuple(sorted({p.method_pair for p in shuffled}))
    lookup = {mp: k for k, mp in enumerate(method_pairs)}
    return PairPlan(
        shuffled,
        int(seed),
        method_pairs,
        np.array([lookup[p.method_pair] for p in shuffled], dtype=np.int64),
        {p.key: k for k, p in enumerate(shuffled)},
    )


def next_pair(
    plan: PairPlan,
    rater: str,
    assignments: Iterable[tuple[str, tuple[str, str]]],
    overlap: int,
    judgments: Iterable[PairJudgment] = (),
    prefer_uncertain: bool = False,
    uncertainty: np.ndarray | None = None,
) -> PairTask | None:
    """The pair `rater` should judge next, or None when no pair is left for them.

    Args:
        plan: from `plan_pairs`.
        rater: who asks.
        assignments: (rater, (sample, sample)) of every pair handed out so far, to anyone (either order).
        overlap: K >= 1, how many raters judge each pair.
        judgments: the answers so far (only read with `prefer_uncertain`).
        prefer_uncertain: apply rule 2 of the module docstring.
        uncertainty: float (M,) per method pair of the plan (`outcome_uncertainty`): when given, the order is
            instead the method pair whose outcome is most uncertain first, then the pair given to the fewest raters
            (a new pair first), then the plan's random order (the `active` policy).
    """
    if not isinstance(overlap, (int, np.integer)) or isinstance(overlap, bool) or overlap < 1:
        raise InputError(f"overlap must be an integer >= 1 (raters per pair); got {overlap!r}")
    n = len(plan.pairs)
    if n == 0:
        return None
    rows, raters = plan.assigned(assignments)
    given = np.bincount(rows, minlength=n)
    mine = np.zeros(n, dtype=bool)
    mine[rows[np.array([r == rater for r in raters], dtype=bool)]] = True
    candidates = np.flatnonzero(~mine & (given < overlap))
    if candidates.size == 0:
        return None
    method_pair = plan.method_pair_of
    coverage = np.bincount(method_pair[rows], minlength=len(plan.method_pairs))
    # np.lexsort sorts by the last key first.
    if uncertainty is not None:
        keys = (candidates, given[candidates], -np.asarray(uncertainty, dtype=np.float64)[method_pair[candidates]])
    else:
        margin = _margins(plan, judgments) if prefer_uncertain else np.zeros(n, dtype=np.int64)
        keys = (candidates, -given[candidates], margin[candidates], coverage[method_pair[candidates]])
    chosen = plan.pairs[int(candidates[np.lexsort(keys)[0]])]
    swapped = _swapped(plan.seed, rater, chosen)
    return PairTask(chosen, chosen.b if swapped else chosen.a, chosen.a if swapped else chosen.b, swapped)


PRIOR_PRECISION = 1.0
"""Precision of the zero-mean Gaussian prior on each method's log-strength in `outcome_uncertainty` (it keeps the
fit defined before every method has won and lost)."""


def outcome_uncertainty(plan: PairPlan, judgments: Iterable[PairJudgment]) -> np.ndarray:
    """float (M,): per method pair of the plan (`plan.method_pairs`), how uncertain its outcome is: the variance of
    P(first method beats the second) under a Bradley-Terry fit, the widest over the criteria judged.

    Per criterion, the decisive and tied votes between methods (a tie counts half a win for each side) are fitted
    by Bradley-Terry with a zero-mean Gaussian prior of precision `PRIOR_PRECISION` on every log-strength (its
    maximum a posteriori by Newton's method); the covariance of the log-strengths is the inverse of the
    posterior's curvature there (Laplace), and the variance of p = sigmoid(theta_i - theta_j) follows by the delta
    method: (p (1 - p))^2 Var(theta_i - theta_j). Without a vote every method pair has the same uncertainty
    (2 / 16 / `PRIOR_PRECISION`); votes between two methods, or through others, shrink it, and a pair whose winner
    is clear has a small one. Votes on pairs outside the plan are left out.
    """
    methods = sorted({m for mp in plan.method_pairs for m in mp})
    index = {m: k for k, m in enumerate(methods)}
    by_criterion: dict[str, list[tuple[int, int, float]]] = {}
    for j in judgments:
        k = plan.index(j.left, j.right)
        if k is None:
            continue
        pair = plan.pairs[k]
        method_of = {pair.a: pair.method_a, pair.b: pair.method_b}
        won = {"left": 1.0, "right": 0.0, "tie": 0.5}.get(j.winner)
        if won is not None:
            by_criterion.setdefault(j.criterion, []).append((index[method_of[j.left]], index[method_of[j.right]], won))
    out = np.full(len(plan.method_pairs), 2 / 16 / PRIOR_PRECISION) if not by_criterion else None
    for votes in by_criterion.values():
        cov, theta = _bradley_terry_laplace(len(methods), votes)
        var = np.empty(len(plan.method_pairs))
        for k, (m1, m2) in enumerate(plan.method_pairs):
            i, j = index[m1], index[m2]
            p = 1 / (1 + np.exp(theta[j] - theta[i]))
            var[k] = (p * (1 - p)) ** 2 * (cov[i, i] + cov[j, j] - 2 * cov[i, j])
        out = var if out is None else np.maximum(out, var)
    assert out is not None
    return out


def _bradley_terry_laplace(m: int, votes: list[tuple[int, int, float]]) -> tuple[np.ndarray, np.ndarray]:
    """(covariance (m, m), log-strengths (m,)) of the Gaussian-prior Bradley-Terry posterior at its mode for votes
    (winner-side i, other side j, share of the win 1 / 0.5 / 0)."""
    first = np.array([v[0] for v in votes], dtype=np.int64)
    second = np.array([v[1] for v in votes], dtype=np.int64)
    won = np.array([v[2] for v in votes], dtype=np.float64)
    theta = np.zeros(m)
    for _ in range(50):
        p = 1 / (1 + np.exp(theta[second] - theta[first]))
        gradient = -PRIOR_PRECISION * theta
        np.add.at(gradient, first, won - p)
        np.add.at(gradient, second, p - won)
        curvature = _curvature(m, first, second, p * (1 - p))
        step = np.linalg.solve(curvature, gradient)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    p = 1 / (1 + np.exp(theta[second] - theta[first]))
    return np.linalg.inv(_curvature(m, first, second, p * (1 - p))), theta


def _curvature(m: int, first: np.ndarray, second: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(m, m) minus the Hessian of the log posterior: the prior's precision plus each vote's p (1 - p) on the
    Laplacian of its two methods."""
    h = PRIOR_PRECISION * np.eye(m)
    np.add.at(h, (first, first), weight)
    np.add.at(h, (second, second), weight)
    np.add.at(h, (first, second), -weight)
    np.add.at(h, (second, first), -weight)
    return h


def _margins(plan: PairPlan, judgments: Iterable[PairJudgment]) -> np.ndarray:
    """(P,) |decisive votes for a - decisive votes for b| per pair of the plan."""
    lead: Counter[int] = Counter()
    for j in judgments:
        k = plan.index(j.left, j.right)
        if k is None or j.winner == "tie":
            continue
        winner = j.left if j.winner == "left" else j.right
        lead[k] += 1 if winner == plan.pairs[k].a else -1
    margin = np.zeros(len(plan.pairs), dtype=np.int64)
    for k, v in lead.items():
        margin[k] = abs(v)
    return margin


def _swapped(seed: int, rater: str, pair: OutputPair) -> bool:
    digest = hashlib.sha256(f"{seed}\0{rater}\0{pair.a}\0{pair.b}".encode()).digest()
    return bool(digest[0] & 1)
