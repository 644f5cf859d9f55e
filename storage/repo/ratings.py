"""Raters and their ratings. Exactly one current rating per (rater, sample, criterion); an edit copies
the previous revision into the history table, so nothing a rater entered is ever lost."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput, InvalidRating, NotFound
from ..record_types import ExternalRating, RaterRecord, RatingRecord, RatingRevision
from ..transactions import Transactions
from . import completion
from ._common import (
    check_int,
    check_optional_text,
    check_seconds,
    check_text,
    chunks,
    dataset_id,
    insert_ignore,
    insert_ignore_many,
    rater_record,
    rater_row,
    rating_record,
    require_sample,
    utcnow,
)
from .rater_rows import RaterRows


class RatingRepository:
    def __init__(self, tx: Transactions, raters: RaterRows | None = None) -> None:
        self._tx = tx
        self._raters = raters if raters is not None else RaterRows()

    # --- raters ------------------------------------------------------------------------------------------

    def ensure_rater(self, username: str, *, external: bool = False) -> RaterRecord:
        """The rater `username`, created if absent (`external` marks imported groups/judges)."""
        check_text(username, "username", max_len=200)

        def work(s: Session) -> RaterRecord:
            insert_ignore(s, t.Rater, {"username": username, "is_external": bool(external), "created_at": utcnow()})
            return rater_row(s, username)

        return self._tx.write(work)

    def rater(self, username: str) -> RaterRecord:
        """The rater (NotFound if absent)."""
        return self._tx.read(lambda s: self._raters.read(s, username))

    def raters(self) -> list[RaterRecord]:
        """Every rater, by username."""
        return self._tx.read(
            lambda s: [rater_record(r) for r in s.scalars(sa.select(t.Rater).order_by(t.Rater.username))]
        )

    # --- ratings -----------------------------------------------------------------------------------------

    def rate(
        self,
        rater: str,
        sample_id: int,
        criterion: str,
        score: int | None,
        *,
        status: str = "rated",
        seconds_spent: float | None = None,
        presentation_order: int | None = None,
        note: str | None = None,
    ) -> RatingRecord:
        """Set `rater`'s current rating of one criterion of a sample; returns it once committed.

        `criterion`: `cp` or `pf` (or an imported benchmark's `sc` / `pq`, see `storage.RATING_CRITERIA`);
        `score`: int 0..4 when `status` is `rated`, None when `skipped` or
        `flagged`; `seconds_spent`: time on the task; `presentation_order`: 1-based position of the
        sample in the rater's task sequence. Saving the same score/status/note again changes nothing;
        a different one becomes a new revision and the old one goes to the history.
        """
        return self.rate_sample(
            rater,
            sample_id,
            {criterion: score},
            status=status,
            seconds_spent=seconds_spent,
            presentation_order=presentation_order,
            note=note,
        )[criterion]

    def rate_sample(
        self,
        rater: str,
        sample_id: int,
        scores: Mapping[str, int | None],
        *,
        status: str = "rated",
        seconds_spent: float | None = None,
        presentation_order: int | None = None,
        note: str | None = None,
    ) -> dict[str, RatingRecord]:
        """Like `rate`, for several criteria of one sample in one transaction (all or nothing)."""
        if not isinstance(scores, Mapping) or not scores:
            raise InvalidRating("scores must be a non-empty dict criterion -> score, e.g. {'cp': 3, 'pf': 4}")
        for criterion, score in scores.items():
            _check_rating(criterion, score, status)
        check_seconds(seconds_spent)
        if presentation_order is not None:
            check_int(presentation_order, "presentation_order", minimum=1)
        check_optional_text(note, "note", max_len=10_000)
        check_text(rater, "rater", max_len=200)
        check_int(sample_id, "sample_id", minimum=1)

        def work(s: Session) -> dict[str, RatingRecord]:
            who = self._raters.known(rater) or rater_row(s, rater)
            counts = not who.is_external
            locked = completion.lock_samples(s, [sample_id]) if counts else None
            if locked is None or sample_id not in locked:  # the lock's read found it: no second look (a round trip)
                require_sample(s, sample_id)
            done = _upsert(s, who, sample_id, scores, status, seconds_spent, presentation_order, note)
            if counts:
                completion.recount(s, [sample_id])
            return done

        return self._tx.write(work)

    def current(
        self, *, rater: str | None = None, sample_id: int | None = None, dataset: str | None = None
    ) -> list[RatingRecord]:
        """Current ratings, filtered by rater / sample / dataset, ordered by id."""

        def work(s: Session) -> list[RatingRecord]:
            query = sa.select(t.Rating, t.Rater.username).join(t.Rater, t.Rater.id == t.Rating.rater_id)
            if rater is not None:
                query = query.where(t.Rating.rater_id == rater_row(s, rater).id)
            if sample_id is not None:
                query = query.where(t.Rating.sample_id == require_sample(s, sample_id))
            if dataset is not None:
                query = query.join(t.Sample, t.Sample.id == t.Rating.sample_id).where(
                    t.Sample.dataset_id == dataset_id(s, dataset)
                )
            return [rating_record(r, u) for r, u in s.execute(query.order_by(t.Rating.id))]

        return self._tx.read(work)

    def get(self, rating_id: int) -> RatingRecord:
        check_int(rating_id, "rating_id", minimum=1)

        def work(s: Session) -> RatingRecord:
            found = s.execute(
                sa.select(t.Rating, t.Rater.username)
                .join(t.Rater, t.Rater.id == t.Rating.rater_id)
                .where(t.Rating.id == rating_id)
            ).first()
            if found is None:
                raise NotFound(f"rating #{rating_id} does not exist")
            return rating_record(*found)

        return self._tx.read(work)

    def history(self, rating_id: int) -> list[RatingRevision]:
        """Every revision of a rating, oldest first; the last one is the current rating."""
        current = self.get(rating_id)

        def work(s: Session) -> list[RatingRevision]:
            old = s.scalars(
                sa.select(t.RatingHistory)
                .where(t.RatingHistory.rating_id == rating_id)
                .order_by(t.RatingHistory.revision)
            )
            revisions = [
                RatingRevision(
                    revision=h.revision,
                    score=h.score,
                    status=h.status,
                    seconds_spent=h.seconds_spent,
                    presentation_order=h.presentation_order,
                    note=h.note,
                    rated_at=h.rated_at,
                    replaced_at=h.replaced_at,
                )
                for h in old
            ]
            return revisions + [
                RatingRevision(
                    revision=current.revision,
                    score=current.score,
                    status=current.status,
                    seconds_spent=current.seconds_spent,
                    presentation_order=current.presentation_order,
                    note=current.note,
                    rated_at=current.updated_at,
                    replaced_at=None,
                )
            ]

        return self._tx.read(work)

    def recount_complete(self) -> int:
        """Set every sample's count of complete ratings from its ratings (the repair for what `Store.check` reports
        after a hand edit of the database); how many samples were wrong."""

        def work(s: Session) -> int:
            completion.lock_samples(s, s.scalars(sa.select(t.Sample.id)))
            return completion.recount_all(s)

        return self._tx.write(work)

    def import_external(self, rater: str, ratings: Iterable[ExternalRating]) -> int:
        """Store ratings of an external rater (e.g. DreamBench++ annotator group `group1`), created as
        external if absent, in one transaction; returns how many ratings were given. Re-importing the
        same ratings changes nothing; changed ones become new revisions."""
        check_text(rater, "rater", max_len=200)
        items = list(ratings)
        for i, item in enumerate(items):
            if not isinstance(item, ExternalRating):
                raise InvalidInput(f"ratings[{i}] must be a storage.ExternalRating, got {type(item).__name__}")
            check_int(item.sample_id, f"ratings[{i}].sample_id", minimum=1)
            _check_rating(item.criterion, item.score, item.status, where=f"ratings[{i}]")
            check_optional_text(item.note, f"ratings[{i}].note", max_len=10_000)

        def work(s: Session) -> int:
            insert_ignore(s, t.Rater, {"username": rater, "is_external": True, "created_at": utcnow()})
            who = rater_row(s, rater)
            sample_ids = sorted({item.sample_id for item in items})
            # An external rater's ratings never count as complete ratings; a name that already belongs to a rater
            # of the app (who is then not external) does, so the counts of its samples are kept like `rate`'s.
            counts = not who.is_external
            if counts:
                completion.lock_samples(s, sample_ids)
            present: set[int] = set()
            current: dict[tuple[int, str], t.Rating] = {}
            for part in chunks(sample_ids):
                present.update(s.scalars(sa.select(t.Sample.id).where(t.Sample.id.in_(list(part)))))
                current.update(
                    ((r.sample_id, r.criterion), r)
                    for r in s.scalars(
                        sa.select(t.Rating).where(t.Rating.rater_id == who.id, t.Rating.sample_id.in_(list(part)))
                    )
                )
            for item in items:
                if item.sample_id not in present:
                    require_sample(s, item.sample_id)  # raises NotFound naming it
            fresh = [item for item in items if (item.sample_id, item.criterion) not in current]
            _insert_new(s, who, fresh)
            for item in items:
                if (item.sample_id, item.criterion) in current:
                    _upsert(s, who, item.sample_id, {item.criterion: item.score}, item.status, None, None, item.note)
            if counts:
                completion.recount(s, sample_ids)
            return len(items)

        return self._tx.write(work)


def _insert_new(s: Session, who: RaterRecord, items: list[ExternalRating]) -> None:
    """Insert ratings this rater does not have yet, many rows per statement. A row another writer inserted
    meanwhile is left alone by the insert, then updated (with history) like any edit."""
    if not items:
        return
    now = utcnow()
    rows = [
        {
            "rater_id": who.id,
            "sample_id": i.sample_id,
            "criterion": i.criterion,
            "score": i.score,
            "status": i.status,
            "seconds_spent": None,
            "presentation_order": None,
            "note": i.note,
            "revision": 1,
            "created_at": now,
            "updated_at": now,
        }
        for i in items
    ]
    for part in chunks(rows, 500):
        insert_ignore_many(s, t.Rating, list(part))
    stored: dict[tuple[int, str], tuple[int | None, str, str | None]] = {}
    for part in chunks(sorted({i.sample_id for i in items})):
        stored.update(
            ((r.sample_id, r.criterion), (r.score, r.status, r.note))
            for r in s.execute(
                sa.select(t.Rating.sample_id, t.Rating.criterion, t.Rating.score, t.Rating.status, t.Rating.note).where(
                    t.Rating.rater_id == who.id, t.Rating.sample_id.in_(list(part))
                )
            )
        )
    for i in items:  # in order, like one upsert after the other
        if stored.get((i.sample_id, i.criterion)) != (i.score, i.status, i.note):
            _upsert(s, who, i.sample_id, {i.criterion: i.score}, i.status, None, None, i.note)
            stored[(i.sample_id, i.criterion)] = (i.score, i.status, i.note)


def _check_rating(criterion: object, score: object, status: object, *, where: str = "rating") -> None:
    if criterion not in t.RATING_CRITERIA:
        raise InvalidRating(
            f"{where}: criterion {criterion!r} is unknown; use 'cp' (concept preservation), "
            f"'pf' (prompt following), or for imported ImagenHub ratings 'sc' (semantic "
            f"consistency) / 'pq' (perceptual quality)"
        )
    if status not in t.STATUSES:
        raise InvalidRating(f"{where}: status {status!r} is unknown; use one of {', '.join(t.STATUSES)}")
    if status == "rated":
        if isinstance(score, bool) or not isinstance(score, int) or not t.SCORE_MIN <= score <= t.SCORE_MAX:
            raise InvalidRating(
                f"{where}: {criterion} score must be an integer from {t.SCORE_MIN} to {t.SCORE_MAX}, got {score!r}"
            )
    elif score is not None:
        raise InvalidRating(
            f"{where}: a {status} {criterion} rating has no score; pass score=None (or status='rated' to give a score)"
        )


_RATINGS_OF = (
    sa.select(t.Rating)
    .where(
        t.Rating.rater_id == sa.bindparam("rater_id"),
        t.Rating.sample_id == sa.bindparam("sample_id"),
        t.Rating.criterion.in_(sa.bindparam("criteria", expanding=True)),
    )
    .with_for_update()
)
"""A rater's current ratings of the `criteria` of one sample, locked on PostgreSQL (built once: every answer reads
them)."""


def _upsert(
    s: Session,
    who: RaterRecord,
    sample_id: int,
    scores: Mapping[str, int | None],
    status: str,
    seconds: float | None,
    order: int | None,
    note: str | None,
) -> dict[str, RatingRecord]:
    """Set `who`'s current rating of each criterion of `scores` on the sample: one statement inserts the criteria
    not rated yet (a row another writer inserted meanwhile is left alone), one reads every row back (locked on
    PostgreSQL); a row holding another score, status or note goes to the history and is updated."""
    now = utcnow()
    insert_ignore_many(
        s,
        t.Rating,
        [
            {
                "rater_id": who.id,
                "sample_id": sample_id,
                "criterion": criterion,
                "score": score,
                "status": status,
                "seconds_spent": seconds,
                "presentation_order": order,
                "note": note,
                "revision": 1,
                "created_at": now,
                "updated_at": now,
            }
            for criterion, score in scores.items()
        ],
    )
    rows = {
        row.criterion: row
        for row in s.scalars(_RATINGS_OF, {"rater_id": who.id, "sample_id": sample_id, "criteria": list(scores)})
    }
    changed = False
    for criterion, score in scores.items():
        row = rows[criterion]
        if (row.score, row.status, row.note) == (score, status, note):
            continue  # just inserted, or the same answer again: nothing changes
        s.add(
            t.RatingHistory(
                rating_id=row.id,
                revision=row.revision,
                score=row.score,
                status=row.status,
                seconds_spent=row.seconds_spent,
                presentation_order=row.presentation_order,
                note=row.note,
                rated_at=row.updated_at,
                replaced_at=now,
            )
        )
        row.score, row.status, row.note = score, status, note
        row.seconds_spent = seconds if seconds is not None else row.seconds_spent
        row.presentation_order = order if order is not None else row.presentation_order
        row.revision += 1
        row.updated_at = now
        changed = True
    if changed:
        s.flush()
    return {criterion: rating_record(rows[criterion], who.username) for criterion in scores}
