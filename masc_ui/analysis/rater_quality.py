"""Rater quality statistics (pure functions over plain records): answers, skips and flags, time per task, answers
under a time floor, the longest run of identical answers, gold accuracy and attention-check pass rate, leave-one-out
agreement with the other raters and agreement with each metric; the marks of raters below a threshold.

Conventions:
- A *task* is one sample a rater finished (every task criterion answered): `rated` when every criterion is rated,
  else `flagged` when one is flagged, else `skipped`. Its time is the longest `seconds_spent` of its criteria (the
  Rate tab stores the same time on each); tasks without a time are left out of the time statistics.
- Time per task: the median and the 10th percentile (`numpy.percentile`, linear interpolation) of the rater's times.
- Identical answers: the rated tasks in the order the rater was given them (`order`), the longest run of
  consecutive tasks with the same score on every criterion.
- Leave-one-out agreement (`loo_alpha`): interval Krippendorff alpha between the rater's scores of one criterion and
  the mean of the *other* raters' scores of the same samples (the rater left out of the consensus), over the
  samples both have; 95% percentile CI from a bootstrap over those samples.
- Agreement with a metric: Spearman rho between the rater's scores and the metric's values over the samples both
  have (no CI: a per-rater screen, not a result).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .alpha import interval_alpha_pairs
from .bootstrap import Estimate, bootstrap_index_chunks, estimate
from .correlation import spearman

GOLD_MIN_ACCURACY = 0.7
"""A rater whose gold accuracy is below this (with at least `GOLD_MIN_N` graded answers) is marked."""
GOLD_MIN_N = 3
ATTENTION_MIN_PASS = 0.75
"""A rater who passes fewer than this share of attention checks (at least `ATTENTION_MIN_N` graded) is marked."""
ATTENTION_MIN_N = 2
MAX_FAST_SHARE = 0.25
"""A rater who gave more than this share of their timed tasks under the time floor (at least `FAST_MIN_N` timed
tasks) is marked."""
FAST_MIN_N = 4
MAX_IDENTICAL_RUN = 10
"""A rater with a run of this many identical answers in a row, or more, is marked."""
MIN_LOO_ALPHA = 0.2
"""A rater whose leave-one-out alpha is below this (on at least `LOO_MIN_N` shared samples) is marked."""
LOO_MIN_N = 10


@dataclass(frozen=True)
class TaskAnswer:
    """One task a rater finished: its status, the scores per criterion (rated tasks), the time, the order."""

    rater: str
    sample_id: int
    status: str
    scores: Mapping[str, int]
    """criterion -> score 0-4 (empty unless `status` is `rated`)."""
    seconds: float | None
    order: tuple[float, float]
    """Sort key of the order the rater was given the task ((presentation order, first answer time))."""


@dataclass(frozen=True)
class Graded:
    """correct of n graded answers (gold tasks or attention checks)."""

    correct: int
    n: int

    @property
    def rate(self) -> float:
        return self.correct / self.n if self.n else math.nan


@dataclass(frozen=True)
class RaterQuality:
    """One rater's row of the report (see the module docstring for each statistic)."""

    rater: str
    answers: int
    """Rated tasks."""
    skips: int
    flags: int
    median_seconds: float
    p10_seconds: float
    under_floor: int
    """Timed tasks answered in less than the time floor."""
    timed: int
    """Tasks with a time."""
    longest_identical_run: int
    gold: Graded
    attention: Graded
    loo_alpha: Estimate
    loo_n: int
    """Samples the leave-one-out alpha rests on."""
    metric_rho: Mapping[str, tuple[float, int]] = field(default_factory=dict)
    """metric -> (Spearman rho, n samples)."""
    pair_gold: Mapping[str, Graded] = field(default_factory=dict)
    """criterion -> the rater's rated judgments of gold pairs (of that criterion) that gave the accepted answer."""
    pair_attention: Graded = Graded(0, 0)
    """The rater's rated judgments of pair attention checks (every criterion) that answered the accepted tie."""
    marks: tuple[str, ...] = ()
    """Why the rater is marked (empty: not marked)."""

    @property
    def marked(self) -> bool:
        return bool(self.marks)


class RatingLike(Protocol):
    """What `task_answers` reads of a rating (`storage.RatingRecord` has it)."""

    @property
    def rater(self) -> str: ...

    @property
    def sample_id(self) -> int: ...

    @property
    def criterion(self) -> str: ...

    @property
    def score(self) -> int | None: ...

    @property
    def status(self) -> str: ...

    @property
    def seconds_spent(self) -> float | None: ...

    @property
    def presentation_order(self) -> int | None: ...

    @property
    def created_at(self) -> dt.datetime: ...


def task_answers(ratings: Iterable[RatingLike], criteria: Sequence[str]) -> list[TaskAnswer]:
    """The finished tasks of current ratings over `criteria` (other criteria are ignored)."""
    rows: dict[tuple[str, int], dict[str, RatingLike]] = {}
    for r in ratings:
        if r.criterion in criteria:
            rows.setdefault((r.rater, r.sample_id), {})[r.criterion] = r
    out = []
    for (rater, sample_id), found in rows.items():
        if len(found) < len(criteria):
            continue
        statuses = {r.status for r in found.values()}
        status = "rated" if statuses == {"rated"} else "flagged" if "flagged" in statuses else "skipped"
        times = [r.seconds_spent for r in found.values() if r.seconds_spent is not None]
        orders = [r.presentation_order for r in found.values() if r.presentation_order]
        first = min(r.created_at.timestamp() for r in found.values())
        scores = {c: int(r.score) for c, r in found.items() if status == "rated" and r.score is not None}
        out.append(
            TaskAnswer(
                rater,
                sample_id,
                status,
                scores,
                max(times) if times else None,
                (float(min(orders)) if orders else math.inf, first),
            )
        )
    return out


def time_stats(seconds: Sequence[float]) -> tuple[float, float]:
    """(median, 10th percentile) of task times in seconds; (NaN, NaN) for none."""
    if not seconds:
        return math.nan, math.nan
    values = np.asarray(seconds, dtype=np.float64)
    return float(np.median(values)), float(np.percentile(values, 10))


def longest_identical_run(answers: Sequence[TaskAnswer]) -> int:
    """The longest run of consecutive rated tasks (in `order`) with the same scores (0 for no rated task)."""
    best = run = 0
    last: object = None
    for a in sorted((a for a in answers if a.status == "rated"), key=lambda a: a.order):
        shown = tuple(sorted(a.scores.items()))
        run = run + 1 if shown == last else 1
        last = shown
        best = max(best, run)
    return best


def loo_alpha(own: np.ndarray, others: np.ndarray, n_boot: int = 1000, seed: int = 0) -> tuple[Estimate, int]:
    """(interval alpha of `own` vs the mean of `others` with its bootstrap CI, samples used).

    Args:
        own: float (N,) the rater's scores, NaN = not rated.
        others: float (R, N) the other raters' scores, NaN = not rated (R may be 0).
    """
    own = np.asarray(own, dtype=np.float64)
    others = np.asarray(others, dtype=np.float64).reshape(-1, own.size)
    with np.errstate(all="ignore"):
        rated = (~np.isnan(others)).sum(axis=0)
        consensus = np.where(rated > 0, np.nansum(others, axis=0) / np.maximum(rated, 1), np.nan)
    keep = ~np.isnan(own) & ~np.isnan(consensus)
    x, y = own[keep], consensus[keep]
    n = int(keep.sum())
    value = float(interval_alpha_pairs(x, y)) if n else math.nan
    if n < 2 or n_boot == 0:
        return Estimate(value, math.nan, math.nan), n
    parts = [interval_alpha_pairs(x[idx], y[idx]) for idx in bootstrap_index_chunks(n, n_boot, seed)]
    return estimate(value, np.concatenate(parts)), n


def metric_agreement(own: np.ndarray, values: np.ndarray) -> tuple[float, int]:
    """(Spearman rho of the rater's scores and a metric's values, complete pairs); NaN when undefined."""
    own = np.asarray(own, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    n = int((~np.isnan(own) & ~np.isnan(values)).sum())
    return float(spearman(own, values)), n


def marks_of(q: RaterQuality) -> tuple[str, ...]:
    """Why `q`'s rater falls below a threshold (the constants above), in words; () when they do not."""
    out = []
    if q.gold.n >= GOLD_MIN_N and q.gold.rate < GOLD_MIN_ACCURACY:
        out.append(f"gold accuracy {q.gold.correct}/{q.gold.n} is under {GOLD_MIN_ACCURACY:.0%}")
    if q.attention.n >= ATTENTION_MIN_N and q.attention.rate < ATTENTION_MIN_PASS:
        out.append(f"passed {q.attention.correct}/{q.attention.n} attention checks (under {ATTENTION_MIN_PASS:.0%})")
    pair_gold = Graded(sum(g.correct for g in q.pair_gold.values()), sum(g.n for g in q.pair_gold.values()))
    if pair_gold.n >= GOLD_MIN_N and pair_gold.rate < GOLD_MIN_ACCURACY:
        out.append(f"pair gold accuracy {pair_gold.correct}/{pair_gold.n} is under {GOLD_MIN_ACCURACY:.0%}")
    if q.pair_attention.n >= ATTENTION_MIN_N and q.pair_attention.rate < ATTENTION_MIN_PASS:
        out.append(
            f"passed {q.pair_attention.correct}/{q.pair_attention.n} pair attention checks "
            f"(under {ATTENTION_MIN_PASS:.0%})"
        )
    if q.timed >= FAST_MIN_N and q.under_floor / q.timed > MAX_FAST_SHARE:
        out.append(f"{q.under_floor}/{q.timed} tasks answered under the time floor (over {MAX_FAST_SHARE:.0%})")
    if q.longest_identical_run >= MAX_IDENTICAL_RUN:
        out.append(f"{q.longest_identical_run} identical answers in a row")
    if q.loo_n >= LOO_MIN_N and q.loo_alpha.value < MIN_LOO_ALPHA:
        out.append(f"agreement with the other raters alpha {q.loo_alpha.value:.2f} is under {MIN_LOO_ALPHA}")
    return tuple(out)
