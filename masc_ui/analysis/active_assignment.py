"""Which rating task to hand out next, and how many answers each assignment policy needs for a given certainty.

A rating study wants every method's mean human rating known to within a confidence interval of some width. The
policies here choose the next (sample, rater) task from what has been answered so far:

- `overlap`: the app's default rule: the samples in a fixed (shuffled) order, each answered by `overlap_k`
  raters before the next is started;
- `random`: a uniformly random sample that the rater has not answered;
- `widest`: the method whose interval is widest now (a method with fewer than `MIN_SAMPLES` rated samples first),
  and in it the sample with the fewest answers (an unrated sample first, since a new sample narrows a mean of
  per-sample means more than a second opinion on a rated one), never a sample the rater answered nor one that
  already has `overlap_k` answers (the app's cap K). The app's `active` policy is this rule on a live study
  (`widest_interval_choice`).

A method's interval, as a policy sees it: the normal approximation `2 * z * sd / sqrt(n)` over its rated samples'
per-sample mean ratings (z for 95%); the leaderboard's own intervals are percentile bootstraps of the same means
and come out close to it for tens of samples.

`simulate` runs a policy against recorded ratings (each simulated answer is one of the sample's real raters'
answers, drawn at random) until every method's interval is under `width`, and reports the answers spent and the
ranking recovered (Kendall tau-b with the methods' means over all recorded ratings). The stop is judged on the
*true* interval of the answers collected, which the simulation knows and a study does not: the variance of a
method's estimate is `sb2 / n + sum_i(s_i2 / k_i) / n**2` over its n rated samples (sb2: the variance of the
method's samples' mean recorded ratings; s_i2: the variance of sample i's recorded ratings; k_i: its answers).
Judging each policy by the interval it actually reached keeps a policy from winning by stopping on an
estimate that is narrow by chance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau

from ..errors import InputError

POLICIES = ("overlap", "random", "widest")
MIN_SAMPLES = 3
"""Rated samples below which a method's interval counts as unknown (infinitely wide)."""
Z95 = 1.959963984540054
PRIOR_SAMPLES = 5
"""Pseudo-samples of the pooled variance in each method's estimated variance (`Answers.widths`)."""


@dataclass(frozen=True)
class RatedPool:
    """The recorded ratings a simulation draws from: `ratings[i]` holds the answers real raters gave sample `i`
    of method `methods[i]`; `truth[m]` is method m's mean of per-sample means over all its samples."""

    methods: tuple[str, ...]
    ratings: tuple[tuple[float, ...], ...]

    def between_variance(self) -> dict[str, float]:
        """Method -> the variance (ddof 1) of its samples' mean recorded ratings."""
        out: dict[str, list[float]] = {}
        for m, r in zip(self.methods, self.ratings, strict=True):
            out.setdefault(m, []).append(float(np.mean(r)))
        return {m: float(np.var(v, ddof=1)) if len(v) > 1 else 0.0 for m, v in out.items()}

    @property
    def truth(self) -> dict[str, float]:
        out: dict[str, list[float]] = {}
        for m, r in zip(self.methods, self.ratings, strict=True):
            out.setdefault(m, []).append(float(np.mean(r)))
        return {m: float(np.mean(v)) for m, v in out.items()}


def interval_width(per_sample_means: Sequence[float]) -> float:
    """Width of the normal-approximation 95% interval of the mean of `per_sample_means` (inf below
    `MIN_SAMPLES`)."""
    n = len(per_sample_means)
    if n < MIN_SAMPLES:
        return math.inf
    return 2 * Z95 * float(np.std(per_sample_means, ddof=1)) / math.sqrt(n)


class Answers:
    """What has been answered: per sample its (rater, rating) pairs, and per method the running sums of its rated
    samples' mean ratings (so an interval costs O(1) after each answer)."""

    def __init__(self, methods: Sequence[str], noise: Sequence[float] | None = None) -> None:
        self.methods = tuple(methods)
        self.by_sample: list[list[tuple[int, float]]] = [[] for _ in methods]
        self.count = 0
        names = list(dict.fromkeys(methods))
        self._n = dict.fromkeys(names, 0)
        self._sum = dict.fromkeys(names, 0.0)
        self._sq = dict.fromkeys(names, 0.0)
        self._noise_of = list(noise) if noise is not None else [0.0] * len(methods)
        """Per sample: the variance of one answer (its recorded ratings' variance; `true_widths`)."""
        self._noise = dict.fromkeys(names, 0.0)
        """Per method: sum over its rated samples of (one answer's variance) / (answers)."""

    def add(self, sample: int, rater: int, rating: float) -> None:
        got, method = self.by_sample[sample], self.methods[sample]
        if got:
            old = sum(x for _, x in got) / len(got)
            self._sum[method] -= old
            self._sq[method] -= old * old
            self._noise[method] -= self._noise_of[sample] / len(got)
        else:
            self._n[method] += 1
        got.append((rater, rating))
        self._noise[method] += self._noise_of[sample] / len(got)
        new = sum(x for _, x in got) / len(got)
        self._sum[method] += new
        self._sq[method] += new * new
        self.count += 1

    def answered_by(self, sample: int, rater: int) -> bool:
        return any(r == rater for r, _ in self.by_sample[sample])

    def means(self) -> dict[str, float]:
        """Method -> the mean of its rated samples' mean ratings (NaN without one)."""
        return {m: self._sum[m] / n if n else math.nan for m, n in self._n.items()}

    def widths(self) -> dict[str, float]:
        """Method -> the width of its 95% interval as a policy estimates it (`shrunk_widths` of its rated samples'
        mean ratings)."""
        return _shrunk_widths(self._n, self._sum, self._sq)

    def true_widths(self, between: Mapping[str, float]) -> dict[str, float]:
        """Method -> the width of the 95% interval its estimate truly has, given `between[m]` (the variance of
        the method's samples' true means; module docstring); inf without a rated sample."""
        return {
            m: 2 * Z95 * math.sqrt(between[m] / n + self._noise[m] / n**2) if n else math.inf
            for m, n in self._n.items()
        }


def shrunk_widths(per_method: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Method -> the width of the 95% interval of the mean of its samples' mean ratings, as a policy estimates it:
    `interval_width` with the variance shrunk towards the variance pooled over every method (`PRIOR_SAMPLES`
    pseudo-samples of it), so that a method whose first samples happen to agree is not taken as settled; inf below
    `MIN_SAMPLES` rated samples."""
    n = {m: len(v) for m, v in per_method.items()}
    total = {m: float(np.sum(v)) for m, v in per_method.items()}
    squares = {m: float(np.sum(np.square(v))) for m, v in per_method.items()}
    return _shrunk_widths(n, total, squares)


def _shrunk_widths(n: Mapping[str, int], total: Mapping[str, float], squares: Mapping[str, float]) -> dict[str, float]:
    """`shrunk_widths` from each method's count, sum and sum of squares of its samples' mean ratings."""
    ss = {m: max(squares[m] - total[m] ** 2 / k, 0.0) if k else 0.0 for m, k in n.items()}
    dof = sum(max(k - 1, 0) for k in n.values())
    pooled = sum(ss.values()) / dof if dof else 0.0
    out = {}
    for m, k in n.items():
        if k < MIN_SAMPLES:
            out[m] = math.inf
            continue
        var = (ss[m] + PRIOR_SAMPLES * pooled) / (k - 1 + PRIOR_SAMPLES)
        out[m] = 2 * Z95 * math.sqrt(var) / math.sqrt(k)
    return out


def widest_interval_choice(
    waiting: Sequence[int],
    method: Mapping[int, str | None],
    complete: Mapping[int, int],
    means: Mapping[str, Mapping[int, float]],
) -> int:
    """The sample the `active` policy hands out next, from a live study's state (`storage.OpenTasks`):

    1. per criterion, each method's estimated interval width (`shrunk_widths` of its rated samples' mean scores);
       a method's width is the widest of its criteria;
    2. the target is the method with the widest interval among the methods of `waiting` (a tie: the method of the
       first such sample in `waiting`, the rater's own order);
    3. in it, the waiting sample with the fewest complete ratings (an unrated sample first), the first in `waiting`.

    Samples without a method form one group of their own. `waiting` must not be empty.
    """
    if not waiting:
        raise InputError("no open task to choose from")
    group = {sid: method.get(sid) or "" for sid in waiting}
    width: dict[str, float] = {}
    for per_sample in means.values():
        per_method: dict[str, list[float]] = {}
        for sid, value in per_sample.items():
            per_method.setdefault(method.get(sid) or "", []).append(value)
        for m, w in shrunk_widths(per_method).items():
            width[m] = max(width.get(m, 0.0), w)
    widest = max(width.get(g, math.inf) for g in group.values())
    target = next(g for g in group.values() if width.get(g, math.inf) == widest)
    mine = [sid for sid in waiting if group[sid] == target]
    fewest = min(complete.get(sid, 0) for sid in mine)
    return next(sid for sid in mine if complete.get(sid, 0) == fewest)


def next_task(
    policy: str, answers: Answers, rater: int, rng: np.random.Generator, order: Sequence[int], overlap_k: int = 2
) -> int | None:
    """The sample index `policy` hands `rater` next (None when nothing is left for them). `order` is the shuffled
    sample order of `overlap`."""
    open_ = [i for i in range(len(answers.methods)) if not answers.answered_by(i, rater)]
    if not open_:
        return None
    if policy == "overlap":
        started = [i for i in order if 0 < len(answers.by_sample[i]) < overlap_k and not answers.answered_by(i, rater)]
        if started:
            return started[0]
        fresh = [i for i in order if not answers.by_sample[i]]
        return fresh[0] if fresh else min(open_, key=lambda i: len(answers.by_sample[i]))
    if policy == "random":
        return int(rng.choice(open_))
    if policy == "widest":
        open_ = [i for i in open_ if len(answers.by_sample[i]) < overlap_k]
        if not open_:
            return None
        widths = answers.widths()
        allowed = {answers.methods[i] for i in open_}
        target = max(allowed, key=lambda m: (widths[m], rng.random()))
        mine = [i for i in open_ if answers.methods[i] == target]
        fewest = min(len(answers.by_sample[i]) for i in mine)
        return int(rng.choice([i for i in mine if len(answers.by_sample[i]) == fewest]))
    raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")


@dataclass(frozen=True)
class Outcome:
    policy: str
    answers: int
    """Answers spent until every method's interval was under the width (or the pool ran out)."""
    reached: bool
    """False when the pool ran out before every interval was under the width."""
    tau: float
    """Kendall tau-b between the methods' estimated means at the stop and their true means."""


def simulate(
    pool: RatedPool,
    policy: str,
    width: float,
    seed: int,
    *,
    raters: int = 3,
    overlap_k: int = 2,
) -> Outcome:
    """Run `policy` with `raters` simulated raters taking turns until every method's interval is under `width`;
    each answer is one of the sample's recorded ratings, drawn at random."""
    rng = np.random.default_rng(seed)
    order = [int(i) for i in rng.permutation(len(pool.methods))]
    answers = Answers(pool.methods, [float(np.var(r)) for r in pool.ratings])
    between = pool.between_variance()
    turn = stuck = 0
    while max(answers.true_widths(between).values()) > width and stuck < raters:
        rater, turn = turn % raters, turn + 1
        sample = next_task(policy, answers, rater, rng, order, overlap_k)
        if sample is None:
            stuck += 1
            continue
        stuck = 0
        answers.add(sample, rater, float(rng.choice(pool.ratings[sample])))
    estimate = answers.means()
    truth = pool.truth
    names = sorted(truth)
    tau = float(kendalltau([truth[m] for m in names], [estimate[m] for m in names]).statistic)
    return Outcome(policy, answers.count, max(answers.true_widths(between).values()) <= width, tau)


def pool_from_cells(cells: Mapping[str, Mapping[str, Mapping[str, float]]]) -> RatedPool:
    """A pool from `cells[rater][model][uid] = rating` (e.g. ImagenHub's SC column): one sample per (model, uid)
    that every rater rated."""
    raters = list(cells)
    models = list(next(iter(cells.values()))) if cells else []
    methods, ratings = [], []
    for model in models:
        uids = set.intersection(*(set(cells[r].get(model, {})) for r in raters)) if raters else set()
        for uid in sorted(uids):
            methods.append(model)
            ratings.append(tuple(float(cells[r][model][uid]) for r in raters))
    return RatedPool(tuple(methods), tuple(ratings))
