"""Task assignment for raters.

For a rater, the samples in scope (one dataset, or all) are put in a random order that is fixed per
(seed, rater): sorted by SHA-256 of `"<seed>:<username>:<sample id>"`. The next task is
1. a sample the rater has started but not finished (some criteria rated), else
2. among the samples the rater has not seen that have fewer than K complete ratings (a complete rating = one
   non-external rater with status `rated` on every criterion), those with the most complete ratings (samples
   other raters already rated come first, so samples rated by K raters accrue early and agreement has units
   from the start, as pairwise assignment does), the first of them in that order.
Raters each walk their own order among the samples of equal count, so they rarely collide; K bounds overlap (two
raters asking at the same moment may both be given a sample's last slot: one rating more than K). The count of
complete ratings is stored with each sample and kept by the rating writes (`storage.repo.completion`), and each
rater's order over a scope is cached (`TaskOrders`), so the read made after every answer does not grow with the
ratings of other raters.
Gold tasks (`storage.repo.gold`: samples with an accepted answer, attention checks included) stay out of rule 2: they
are mixed in at `gold_rate`, one in every B = round(1 / gold_rate) tasks, at a place within each block of B that is
drawn per (seed, rater, block) (so no fixed position gives them away), each rater getting every gold task once, in
their own order; once no other task is left, the rater's remaining gold tasks come next. With `gold_rate=0` gold
tasks are not handed out (and not counted in `progress`). A gold task is shown, stored and counted in progress
like any other task.
Practice tasks (`storage.repo.guides`: gold samples of a dataset's practice round) are never handed out as real tasks
and do not count in `progress` (one a rater already rated as a real task stays in their scope).
The copies made for pair attention checks (`storage.repo.pair_gold`) are pairwise tasks only: never in scope here.
Only samples with an output image are in scope: a ratings-only sample (imported ratings, no images) has
nothing to show, so it is never handed out and does not count in `progress`. Only the task criteria
(`storage.CRITERIA`: cp, pf) count; imported criteria (ImagenHub's sc, pq) play no part here.
With `for_rating_only=True` (what the web app asks), a scope of "all" covers only the datasets marked for
rating (`_common.DATASETS_FOR_RATING`, the rule of pairwise tasks too); a dataset named explicitly is used as it is.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput
from ..record_types import OpenTasks, Progress, RaterRecord, Task
from ..transactions import Transactions
from ._common import DATASETS_FOR_RATING, check_int, dataset_id, load_sample, rating_record
from .gold import GOLD_SAMPLES
from .guides import PRACTICE_SAMPLES
from .pair_gold import PAIR_CHECK_COPIES
from .rater_rows import RaterRows

Choose = Callable[[OpenTasks], int]
"""A rating-assignment rule: given the open tasks (`OpenTasks.waiting` is never empty), the sample id to hand out,
one of `waiting`. It must only compute (the read may run again)."""


class TaskRepository:
    def __init__(self, tx: Transactions, raters: RaterRows | None = None) -> None:
        self._tx = tx
        self._orders = TaskOrders()
        self._raters = raters if raters is not None else RaterRows()

    def _state(
        self, s: Session, rater: str, dataset: str | None, for_rating_only: bool, gold_rate: float = 0.0
    ) -> _State:
        return _State.load(s, self._raters.read(s, rater), dataset, for_rating_only, check_rate(gold_rate))

    def next_task(
        self,
        rater: str,
        dataset: str | None = None,
        *,
        overlap_k: int = 2,
        seed: int = 0,
        for_rating_only: bool = False,
        gold_rate: float = 0.0,
        choose: Choose | None = None,
    ) -> Task | None:
        """The sample `rater` should rate next (see the module docstring), or None when nothing is left. `choose`
        replaces rule 2 (see `Choose`)."""
        check_int(overlap_k, "overlap_k", minimum=1)
        check_int(seed, "seed")

        return self._tx.read(
            lambda s: self._state(s, rater, dataset, for_rating_only, gold_rate).next(
                self._orders, rater, overlap_k, seed, choose
            )
        )

    def next_task_and_progress(
        self,
        rater: str,
        dataset: str | None = None,
        *,
        overlap_k: int = 2,
        seed: int = 0,
        for_rating_only: bool = False,
        gold_rate: float = 0.0,
        choose: Choose | None = None,
    ) -> tuple[Task | None, Progress]:
        """`next_task` and `progress` from one snapshot, read once (what a rater's screen shows after a submit)."""
        check_int(overlap_k, "overlap_k", minimum=1)
        check_int(seed, "seed")

        def work(s: Session) -> tuple[Task | None, Progress]:
            state = self._state(s, rater, dataset, for_rating_only, gold_rate)
            return state.next(self._orders, rater, overlap_k, seed, choose), state.progress(overlap_k)

        return self._tx.read(work)

    def previous_task(
        self,
        rater: str,
        *,
        before_sample_id: int | None = None,
        dataset: str | None = None,
        for_rating_only: bool = False,
    ) -> Task | None:
        """The sample `rater` rated just before `before_sample_id` (by when each was first rated), or
        the most recent one when `before_sample_id` is None or not rated yet; None at the beginning."""

        def work(s: Session) -> Task | None:
            state = self._state(s, rater, dataset, for_rating_only)
            seen = state.seen_in_order()
            if before_sample_id in state.mine:
                index = seen.index(before_sample_id)
                return state.task(seen[index - 1]) if index > 0 else None
            return state.task(seen[-1]) if seen else None

        return self._tx.read(work)

    def progress(
        self,
        rater: str,
        dataset: str | None = None,
        *,
        overlap_k: int = 2,
        for_rating_only: bool = False,
        gold_rate: float = 0.0,
    ) -> Progress:
        """Counts for the rater's progress bar (see `storage.record_types.Progress`)."""
        check_int(overlap_k, "overlap_k", minimum=1)

        return self._tx.read(lambda s: self._state(s, rater, dataset, for_rating_only, gold_rate).progress(overlap_k))

    def statuses(self, rater: str, dataset: str | None = None, *, for_rating_only: bool = False) -> dict[int, str]:
        """sample id -> `rater`'s answer on each sample of the scope they finished (every task criterion has a
        current rating): `rated` when every criterion is rated, else `flagged` when one is flagged, else
        `skipped`."""
        return self._tx.read(lambda s: self._state(s, rater, dataset, for_rating_only).statuses())

    def rater_screen(
        self,
        rater: str,
        dataset: str | None = None,
        *,
        overlap_k: int = 2,
        seed: int = 0,
        for_rating_only: bool = False,
        gold_rate: float = 0.0,
        choose: Choose | None = None,
    ) -> tuple[Task | None, Progress, dict[int, str]]:
        """`next_task`, `progress` and `statuses` from one snapshot, read once: everything a rater's screen shows
        after an answer (one read of the rater's state per submit, not one per part)."""
        check_int(overlap_k, "overlap_k", minimum=1)
        check_int(seed, "seed")

        def work(s: Session) -> tuple[Task | None, Progress, dict[int, str]]:
            state = self._state(s, rater, dataset, for_rating_only, gold_rate)
            return state.next(self._orders, rater, overlap_k, seed, choose), state.progress(overlap_k), state.statuses()

        return self._tx.read(work)


def _order_key(seed: int, rater: str, sample_id: int) -> str:
    return hashlib.sha256(f"{seed}:{rater}:{sample_id}".encode()).hexdigest()


MAX_GOLD_RATE = 0.5
"""Highest share of gold tasks in a rater's queue (at least every other task is a real one)."""


def check_rate(gold_rate: object) -> float:
    """`gold_rate` as a float within 0..`MAX_GOLD_RATE` (InvalidInput otherwise)."""
    if isinstance(gold_rate, bool) or not isinstance(gold_rate, (int, float)) or not 0 <= gold_rate <= MAX_GOLD_RATE:
        raise InvalidInput(f"gold_rate must be a number within 0..{MAX_GOLD_RATE}, got {gold_rate!r}")
    return float(gold_rate)


def gold_block(gold_rate: float) -> int:
    """B of "one gold task in every B tasks": round(1 / gold_rate) (0 for no gold tasks)."""
    return 0 if gold_rate <= 0 else max(2, round(1 / gold_rate))


def gold_due(seed: int, rater: str, answered: int, gold_answered: int, block: int) -> bool:
    """Whether the rater's next task (the one after `answered` finished or started tasks, `gold_answered` of them
    gold) should be a gold task: the block of `block` tasks it falls in has its gold task at a place drawn from
    (seed, rater, block index), and every block before it (and this one, once that place is reached) holds one."""
    if block <= 0:
        return False
    index, place = divmod(answered, block)
    drawn = int(hashlib.sha256(f"{seed}:{rater}:gold:{index}".encode()).hexdigest()[:8], 16) % block
    return gold_answered < index + (1 if place >= drawn else 0)


class TaskOrders:
    """Cache of each rater's task order over a scope: the scope's sample ids sorted by `_order_key`, so that the
    next task is the first waiting sample in a list instead of the least of thousands of fresh SHA-256 digests on
    every answer. Owned by one `TaskRepository`; the order of a (seed, rater, scope) never changes, so an entry is
    reused while the scope is the same set of samples and rebuilt when it is not. At most `max_raters` entries
    (least recently used dropped); raters of one scope share the scope's set."""

    def __init__(self, max_raters: int = 64) -> None:
        self._max = max_raters
        self._lock = threading.Lock()
        self._orders: OrderedDict[tuple[int, str], tuple[frozenset[int], list[int]]] = OrderedDict()
        self._last_scope: frozenset[int] = frozenset()

    def order(self, seed: int, rater: str, scope: set[int]) -> list[int]:
        """The sample ids of `scope` in `rater`'s task order."""
        key = (seed, rater)
        with self._lock:
            found = self._orders.get(key)
            if found is not None and (found[0] is scope or found[0] == scope):
                self._orders.move_to_end(key)
                return found[1]
            shared = self._last_scope if self._last_scope == scope else frozenset(scope)
        order = sorted(shared, key=lambda sid: _order_key(seed, rater, sid))
        with self._lock:
            self._last_scope = shared
            self._orders[key] = (shared, order)
            self._orders.move_to_end(key)
            while len(self._orders) > self._max:
                self._orders.popitem(last=False)
        return order


_SCOPE = sa.select(t.Sample.id, t.Sample.complete_ratings).where(
    t.Sample.id.in_(sa.select(t.SampleImage.sample_id).where(t.SampleImage.role == "output"))
)
"""(sample id, count of complete ratings) of every sample with an output image."""
_SCOPE_OF_DATASET = _SCOPE.where(t.Sample.dataset_id == sa.bindparam("dataset_id"))
_SCOPE_FOR_RATING = _SCOPE.where(t.Sample.dataset_id.in_(DATASETS_FOR_RATING))


def _count_of(status: str) -> sa.ColumnElement[int]:
    return sa.func.sum(sa.case((t.Rating.status == status, 1), else_=0))


_MINE = (
    sa.select(t.Rating.sample_id, sa.func.count(), _count_of("rated"), _count_of("flagged"))
    .where(t.Rating.rater_id == sa.bindparam("rater_id"), t.Rating.criterion.in_(t.CRITERIA))
    .group_by(t.Rating.sample_id)
)
"""A rater's answers summed per sample by the database, (sample id, criteria answered, rated, flagged): a rater may
have answered thousands of samples; the task's own ratings are read in full in `_State.task`."""


_MEANS = (
    sa.select(t.Rating.sample_id, t.Rating.criterion, sa.func.avg(t.Rating.score))
    .join(t.Rater, t.Rater.id == t.Rating.rater_id)
    .join(t.Sample, t.Sample.id == t.Rating.sample_id)
    .where(t.Rating.status == "rated", t.Rating.criterion.in_(t.CRITERIA), t.Rater.is_external == sa.false())
    .group_by(t.Rating.sample_id, t.Rating.criterion)
)
"""Per (sample, criterion) the mean score of the app raters' `rated` ratings (what `OpenTasks.means` holds)."""


class _State:
    """What the assignment rules need, read in one snapshot: the scope with each sample's count of complete ratings,
    and per sample the rater has answered, (criteria answered, how many `rated`, how many `flagged`). When the rater
    first saw each sample is read only where it is needed (going back, several started samples)."""

    def __init__(
        self,
        s: Session,
        rater: RaterRecord,
        complete: dict[int, int],
        mine: dict[int, tuple[int, int, int]],
        gold: frozenset[int] = frozenset(),
        gold_rate: float = 0.0,
        scope_where: tuple[sa.ColumnElement[bool], ...] = (),
    ) -> None:
        self._session = s
        self._scope_where = scope_where
        """Conditions on `samples` that hold for the scope's datasets (the output-image rule is `complete`'s)."""
        self.rater = rater
        self.complete = complete
        self.scope = set(complete)
        self.mine = mine
        self.gold = gold
        """The gold samples of the scope (every one handed to this rater, or that they answered)."""
        self.gold_block = gold_block(gold_rate)
        self._first_seen: dict[int, dt.datetime] | None = None
        self._waiting: dict[int, list[int]] = {}

    @classmethod
    def load(
        cls, s: Session, who: RaterRecord, dataset: str | None, for_rating_only: bool = False, gold_rate: float = 0.0
    ) -> _State:
        # Both reads run on the session's connection as Core statements built once (`_SCOPE`, `_MINE`): they return
        # thousands of plain rows, which the ORM's row loading would only slow down, and this runs on every answer.
        # The count of complete ratings is kept by the rating writes (`completion`), not aggregated here.
        conn = s.connection()
        where: tuple[sa.ColumnElement[bool], ...] = ()
        if dataset is not None:
            found = dataset_id(s, dataset)
            scope = conn.execute(_SCOPE_OF_DATASET, {"dataset_id": found})
            where = (t.Sample.dataset_id == found,)
        else:
            scope = conn.execute(_SCOPE_FOR_RATING if for_rating_only else _SCOPE)
            where = (t.Sample.dataset_id.in_(DATASETS_FOR_RATING),) if for_rating_only else ()
        complete: dict[int, int] = dict(scope.all())
        for (sid,) in conn.execute(PAIR_CHECK_COPIES):  # a pair attention check's copy is no single-sample task
            complete.pop(sid, None)
        mine = {
            sid: (answered, rated, flagged)
            for sid, answered, rated, flagged in conn.execute(_MINE, {"rater_id": who.id})
            if sid in complete
        }
        for (sid,) in conn.execute(PRACTICE_SAMPLES):  # practice tasks are never real ones (`repo.guides`)
            if sid in complete and sid not in mine:
                del complete[sid]
        gold = frozenset(sid for (sid,) in conn.execute(GOLD_SAMPLES) if sid in complete)
        if gold_rate <= 0:  # gold tasks are not handed out: only those the rater answered stay in scope
            for sid in gold - set(mine):
                del complete[sid]
            gold = gold & set(mine)
        return cls(s, who, complete, mine, gold, gold_rate, where)

    def first_seen(self, sample_ids: list[int] | None = None) -> dict[int, dt.datetime]:
        """sample id -> when the rater first rated a criterion of it, for `sample_ids` (default: every sample the
        rater has answered in scope)."""
        if self._first_seen is not None:
            return self._first_seen if sample_ids is None else {sid: self._first_seen[sid] for sid in sample_ids}
        query = (
            sa.select(t.Rating.sample_id, sa.func.min(t.Rating.created_at))
            .where(t.Rating.rater_id == self.rater.id, t.Rating.criterion.in_(t.CRITERIA))
            .group_by(t.Rating.sample_id)
        )
        if sample_ids is not None:
            query = query.where(t.Rating.sample_id.in_(sample_ids))
        found = {sid: when for sid, when in self._session.execute(query).all() if sid in self.mine}
        if sample_ids is None:
            self._first_seen = found
        return found

    def seen_in_order(self) -> list[int]:
        """The samples the rater has answered in scope, by when each was first rated."""
        first = self.first_seen()
        return sorted(first, key=lambda sid: (first[sid], sid))

    def statuses(self) -> dict[int, str]:
        """sample id -> the rater's answer on each finished sample (`TaskRepository.statuses`)."""
        done = len(t.CRITERIA)
        return {
            sid: "rated" if rated == done else "flagged" if flagged else "skipped"
            for sid, (answered, rated, flagged) in self.mine.items()
            if answered == done
        }

    def next(
        self, orders: TaskOrders, rater: str, overlap_k: int, seed: int, choose: Choose | None = None
    ) -> Task | None:
        """The next task (see the module docstring; `choose` replaces rule 2), or None when nothing is left."""
        started = [sid for sid, (answered, _, _) in self.mine.items() if answered < len(t.CRITERIA)]
        if len(started) > 1:
            first = self.first_seen(started)
            started.sort(key=lambda sid: (first[sid], sid))
        if started:
            return self.task(started[0])
        waiting = self.waiting(overlap_k)
        gold_left = self.gold_left()
        if gold_left and (
            not waiting or gold_due(seed, rater, len(self.mine), len(self.gold & set(self.mine)), self.gold_block)
        ):
            return self.task(next(sid for sid in orders.order(seed, rater, self.scope) if sid in gold_left))
        if not waiting:
            return None
        if choose is not None:
            chosen = choose(self.open_tasks(orders, rater, overlap_k, seed))
            if chosen not in waiting:
                raise InvalidInput(f"the assignment rule chose sample {chosen!r}, which is not open for {rater!r}")
            return self.task(chosen)
        most = max(self.complete[sid] for sid in waiting)
        return self.task(
            next(
                sid
                for sid in orders.order(seed, rater, self.scope)
                if self.complete[sid] == most and self._is_waiting(sid, overlap_k)
            )
        )

    def open_tasks(self, orders: TaskOrders, rater: str, overlap_k: int, seed: int) -> OpenTasks:
        """What a `Choose` rule sees (`storage.OpenTasks`): the rater's open samples in their order, the scope's
        methods and complete counts, and each rated sample's mean score per criterion."""
        conn = self._session.connection()
        where = self._scope_where
        method = {
            sid: m
            for sid, m in conn.execute(sa.select(t.Sample.id, t.Sample.method).where(*where))
            if sid in self.complete and sid not in self.gold
        }
        means: dict[str, dict[int, float]] = {c: {} for c in t.CRITERIA}
        for sid, criterion, mean in conn.execute(_MEANS.where(*where)):
            if sid in method:
                means[criterion][sid] = float(mean)
        waiting = set(self.waiting(overlap_k))
        return OpenTasks(
            waiting=tuple(sid for sid in orders.order(seed, rater, self.scope) if sid in waiting),
            method=method,
            complete=dict(self.complete),
            means=means,
        )

    def progress(self, overlap_k: int) -> Progress:
        rated = sum(1 for answered, _, _ in self.mine.values() if answered == len(t.CRITERIA))
        assigned = rated + len(self.waiting(overlap_k)) + len(self.gold_left())
        return Progress(rated=rated, assigned=assigned, total=len(self.scope))

    def gold_left(self) -> set[int]:
        """The gold samples of the scope the rater has not been given yet (none when gold tasks are not handed
        out)."""
        return set() if self.gold_block <= 0 else {sid for sid in self.gold if sid not in self.mine}

    def _is_waiting(self, sample_id: int, overlap_k: int) -> bool:
        return sample_id not in self.mine and sample_id not in self.gold and self.complete[sample_id] < overlap_k

    def waiting(self, overlap_k: int) -> list[int]:
        """Samples of the scope the rater has not seen that have fewer than `overlap_k` complete ratings (computed
        once per snapshot: the next task and the progress both need them)."""
        found = self._waiting.get(overlap_k)
        if found is None:
            found = self._waiting[overlap_k] = [
                sid
                for sid, n in self.complete.items()
                if n < overlap_k and sid not in self.mine and sid not in self.gold
            ]
        return found

    def task(self, sample_id: int) -> Task:
        s = self._session
        sample = load_sample(s, sample_id)
        ratings = (
            {
                r.criterion: rating_record(r, self.rater.username)
                for r in s.scalars(
                    sa.select(t.Rating).where(
                        t.Rating.rater_id == self.rater.id,
                        t.Rating.sample_id == sample_id,
                        t.Rating.criterion.in_(t.CRITERIA),
                    )
                )
            }
            if sample_id in self.mine
            else {}
        )
        orders = [r.presentation_order for r in ratings.values() if r.presentation_order is not None]
        if orders:
            order = min(orders)
        elif sample_id in self.mine:
            order = self.seen_in_order().index(sample_id) + 1
        else:
            order = len(self.mine) + 1
        return Task(sample=sample, presentation_order=order, ratings=ratings)
