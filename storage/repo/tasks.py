"""Task assignment for raters.

For a rater, the samples in scope (one dataset, or all) are put in a random order that is fixed per
(seed, rater): sorted by SHA-256 of `"<seed>:<username>:<sample id>"`. The next task is
1. a sample the rater has started but not finished (some criteria rated), else
2. the first sample in that order the rater has not seen and that has fewer than K complete ratings
   (a complete rating = one non-external rater with status `rated` on every criterion).
Several raters working at once each walk their own order, so they rarely collide; K bounds overlap.
Only samples with an output image are in scope: a ratings-only sample (imported ratings, no images) has
nothing to show, so it is never handed out and does not count in `progress`. Only the task criteria
(`storage.CRITERIA`: cp, pf) count; imported criteria (ImagenHub's sc, pq) play no part here.
With `for_rating_only=True` (what the web app asks), a scope of "all" covers only the datasets marked for
rating (`SampleRepository.set_for_rating`); a dataset named explicitly is used as it is.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..records import Progress, Task
from ..transactions import Transactions
from ._common import check_int, dataset_id, load_samples, rater_row, rating_record


class TaskRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    def next_task(self, rater: str, dataset: str | None = None, *, overlap_k: int = 2,
                  seed: int = 0, for_rating_only: bool = False) -> Task | None:
        """The sample `rater` should rate next (see the module docstring), or None when nothing is left."""
        check_int(overlap_k, "overlap_k", minimum=1)
        check_int(seed, "seed")

        return self._tx.read(lambda s: _State.load(s, rater, dataset, for_rating_only).next(s, rater, overlap_k, seed))

    def next_task_and_progress(self, rater: str, dataset: str | None = None, *, overlap_k: int = 2,
                               seed: int = 0, for_rating_only: bool = False) -> tuple[Task | None, Progress]:
        """`next_task` and `progress` from one snapshot, read once (what a rater's screen shows after a submit)."""
        check_int(overlap_k, "overlap_k", minimum=1)
        check_int(seed, "seed")

        def work(s: Session) -> tuple[Task | None, Progress]:
            state = _State.load(s, rater, dataset, for_rating_only)
            return state.next(s, rater, overlap_k, seed), state.progress(overlap_k)
        return self._tx.read(work)

    def previous_task(self, rater: str, *, before_sample_id: int | None = None,
                      dataset: str | None = None, for_rating_only: bool = False) -> Task | None:
        """The sample `rater` rated just before `before_sample_id` (by when each was first rated), or
        the most recent one when `before_sample_id` is None or not rated yet; None at the beginning."""
        def work(s: Session) -> Task | None:
            state = _State.load(s, rater, dataset, for_rating_only)
            seen = sorted(state.first_seen, key=lambda sid: (state.first_seen[sid], sid))
            if before_sample_id in state.first_seen:
                index = seen.index(before_sample_id)
                return state.task(s, seen[index - 1]) if index > 0 else None
            return state.task(s, seen[-1]) if seen else None
        return self._tx.read(work)

    def progress(self, rater: str, dataset: str | None = None, *, overlap_k: int = 2,
                 for_rating_only: bool = False) -> Progress:
        """Counts for the rater's progress bar (see `storage.records.Progress`)."""
        check_int(overlap_k, "overlap_k", minimum=1)

        return self._tx.read(lambda s: _State.load(s, rater, dataset, for_rating_only).progress(overlap_k))

    def statuses(self, rater: str, dataset: str | None = None, *, for_rating_only: bool = False) -> dict[int, str]:
        """sample id -> `rater`'s answer on each sample of the scope they finished (every task criterion has a
        current rating): `rated` when every criterion is rated, else `flagged` when one is flagged, else
        `skipped`."""
        return self._tx.read(lambda s: _State.load(s, rater, dataset, for_rating_only).statuses())

    def rater_screen(self, rater: str, dataset: str | None = None, *, overlap_k: int = 2, seed: int = 0,
                     for_rating_only: bool = False) -> tuple[Task | None, Progress, dict[int, str]]:
        """`next_task`, `progress` and `statuses` from one snapshot, read once: everything a rater's screen shows
        after an answer (one read of the rater's state per submit, not one per part)."""
        check_int(overlap_k, "overlap_k", minimum=1)
        check_int(seed, "seed")

        def work(s: Session) -> tuple[Task | None, Progress, dict[int, str]]:
            state = _State.load(s, rater, dataset, for_rating_only)
            return state.next(s, rater, overlap_k, seed), state.progress(overlap_k), state.statuses()
        return self._tx.read(work)


def _order_key(seed: int, rater: str, sample_id: int) -> str:
    return hashlib.sha256(f"{seed}:{rater}:{sample_id}".encode()).hexdigest()


class _State:
    """What the assignment rules need, read in one snapshot."""

    def __init__(self, rater: t.Rater, scope: set[int], mine: dict[int, dict[str, sa.Row]],
                 first_seen: dict[int, object], complete: dict[int, int]) -> None:
        self.rater = rater
        self.scope = scope
        self.mine = mine
        self.first_seen = first_seen
        self.complete = complete
        self._waiting: dict[int, list[int]] = {}

    @classmethod
    def load(cls, s: Session, username: str, dataset: str | None, for_rating_only: bool = False) -> "_State":
        who = rater_row(s, username)
        with_output = sa.select(t.SampleImage.sample_id).where(t.SampleImage.role == "output")
        scope_query = sa.select(t.Sample.id).where(t.Sample.id.in_(with_output))
        if dataset is not None:
            scope_query = scope_query.where(t.Sample.dataset_id == dataset_id(s, dataset))
        elif for_rating_only:
            marked = sa.select(t.Dataset.id).where(t.Dataset.for_rating.is_(True))
            scope_query = scope_query.where(t.Sample.dataset_id.in_(marked))
        scope = set(s.scalars(scope_query))
        in_scope = sa.and_(t.Rating.sample_id.in_(scope_query), t.Rating.criterion.in_(t.CRITERIA))
        # What the rules need of the rater's ratings, as plain rows (no ORM objects: this runs on every answer, and a
        # rater may have rated thousands of samples); the task's own ratings are read in full in `task`.
        mine: dict[int, dict[str, sa.Row]] = defaultdict(dict)
        first_seen: dict[int, object] = {}
        for row in s.execute(sa.select(t.Rating.sample_id, t.Rating.criterion, t.Rating.status, t.Rating.created_at)
                             .where(t.Rating.rater_id == who.id, in_scope)):
            mine[row.sample_id][row.criterion] = row
            first = first_seen.get(row.sample_id)
            first_seen[row.sample_id] = row.created_at if first is None else min(first, row.created_at)
        # Complete ratings per sample (a rater with status `rated` on every criterion), counted by the database.
        per_rater = (sa.select(t.Rating.sample_id).join(t.Rater, t.Rater.id == t.Rating.rater_id)
                     .where(t.Rating.status == "rated", t.Rater.is_external.is_(False), in_scope)
                     .group_by(t.Rating.sample_id, t.Rating.rater_id)
                     .having(sa.func.count() == len(t.CRITERIA)).subquery())
        complete: dict[int, int] = defaultdict(int)
        complete.update(s.execute(sa.select(per_rater.c.sample_id, sa.func.count())
                                  .group_by(per_rater.c.sample_id)).all())
        return cls(who, scope, dict(mine), first_seen, complete)

    def statuses(self) -> dict[int, str]:
        """sample id -> the rater's answer on each finished sample (`TaskRepository.statuses`)."""
        out = {}
        for sample_id, by_criterion in self.mine.items():
            if len(by_criterion) == len(t.CRITERIA):
                found = {r.status for r in by_criterion.values()}
                out[sample_id] = "rated" if found == {"rated"} else "flagged" if "flagged" in found else "skipped"
        return out

    def next(self, s: Session, rater: str, overlap_k: int, seed: int) -> Task | None:
        """The next task (see the module docstring), or None when nothing is left."""
        started = sorted((sid for sid, crit in self.mine.items() if len(crit) < len(t.CRITERIA)),
                         key=self.first_seen.__getitem__)
        if started:
            return self.task(s, started[0])
        waiting = self.waiting(overlap_k)
        if not waiting:
            return None
        return self.task(s, min(waiting, key=lambda sid: _order_key(seed, rater, sid)))

    def progress(self, overlap_k: int) -> Progress:
        rated = sum(1 for crit in self.mine.values() if len(crit) == len(t.CRITERIA))
        return Progress(rated=rated, assigned=rated + len(self.waiting(overlap_k)), total=len(self.scope))

    def waiting(self, overlap_k: int) -> list[int]:
        """Samples of the scope the rater has not seen that have fewer than `overlap_k` complete ratings (computed
        once per snapshot: the next task and the progress both need them)."""
        found = self._waiting.get(overlap_k)
        if found is None:
            found = self._waiting[overlap_k] = [sid for sid in self.scope
                                                if sid not in self.mine and self.complete.get(sid, 0) < overlap_k]
        return found

    def task(self, s: Session, sample_id: int) -> Task:
        sample = load_samples(s, [t.Sample.id == sample_id])[0]
        ratings = {r.criterion: rating_record(r, self.rater.username) for r in s.scalars(
            sa.select(t.Rating).where(t.Rating.rater_id == self.rater.id, t.Rating.sample_id == sample_id,
                                      t.Rating.criterion.in_(t.CRITERIA)))} if sample_id in self.mine else {}
        orders = [r.presentation_order for r in ratings.values() if r.presentation_order is not None]
        if orders:
            order = min(orders)
        elif sample_id in self.first_seen:
            order = sorted(self.first_seen, key=lambda sid: (self.first_seen[sid], sid)).index(sample_id) + 1
        else:
            order = len(self.mine) + 1
        return Task(sample=sample, presentation_order=order, ratings=ratings)
