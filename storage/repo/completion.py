"""The count of complete ratings per sample (`samples.complete_ratings`), kept by the rating writes.

A *complete rating* of a sample is one rater who is not external with a current `rated` rating on every task
criterion (`storage.CRITERIA`). Task assignment needs that count for every sample in scope on every answer (the
overlap rule); aggregating every rating in scope each time grew with the campaign, so the count is stored with
the sample and kept exact by the writers instead:

- a writer of ratings of a rater who is not external calls `lock_samples` on the samples it is about to change,
  before reading or writing any of their ratings, and `recount` on them after its last write, in the same
  transaction. `recount` sets the column from the sample's current ratings (not +1/-1), so it is right whatever
  the write did (a first answer, an edit from rated to skipped, a second criterion completing the rating).
- The lock serializes the writers of one sample: on PostgreSQL (READ COMMITTED writes) a second writer waits on
  the sample's row until the first commits, and its later statements see the first one's ratings, so neither
  counts without the other's. SQLite has one writer at a time (`BEGIN IMMEDIATE`).
- Ratings of external raters (imported groups and judges) never count, so their imports touch no count.

`mismatches` compares the stored counts with the ratings (`masc-ui db check`); `recount_all` repairs them. All three
use one SQL expression of the count (`COUNTED`), evaluated by the database per sample row.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ._common import affected_rows, chunks, table_of


def lock_samples(s: Session, sample_ids: Iterable[int]) -> set[int] | None:
    """Lock the rows of these samples until the transaction ends (in id order: two writers never deadlock on
    them). A no-op on SQLite, whose write transactions already exclude each other. On PostgreSQL the lock is `FOR
    NO KEY UPDATE` (what the count's own UPDATE takes): it excludes the other writers of the count but not the rows
    being inserted that refer to the sample (a batch storing metric values, masks), whose key-share locks only a
    `FOR UPDATE` would wait for. Returns the ids of the samples locked (those that exist), None on SQLite (nothing
    was read: a caller that must know whether a sample exists asks there)."""
    if s.get_bind().dialect.name == "sqlite":
        return None
    locked: set[int] = set()
    for part in chunks(sorted(set(sample_ids))):
        locked.update(
            s.scalars(
                sa.select(t.Sample.id)
                .where(t.Sample.id.in_(list(part)))
                .order_by(t.Sample.id)
                .with_for_update(key_share=True)
            )
        )
    return locked


def _counted() -> sa.ScalarSelect[int]:
    """The complete ratings of the sample of the enclosing statement (`samples.id`), counted from its ratings."""
    per_rater = (
        sa.select(t.Rating.rater_id)
        .join(t.Rater, t.Rater.id == t.Rating.rater_id)
        .where(
            t.Rating.sample_id == t.Sample.id,
            t.Rating.status == "rated",
            t.Rater.is_external.is_(False),
            t.Rating.criterion.in_(t.CRITERIA),
        )
        .group_by(t.Rating.rater_id)
        .having(sa.func.count() == len(t.CRITERIA))
        .correlate(t.Sample)
        .subquery()
    )
    return sa.select(sa.func.count()).select_from(per_rater).scalar_subquery()


COUNTED = _counted()
"""SQL expression (immutable): the count `samples.complete_ratings` should hold, for the statement's sample row."""


_RECOUNT = (
    sa.update(table_of(t.Sample))
    .where(t.Sample.id.in_(sa.bindparam("sample_ids", expanding=True)))
    .values(complete_ratings=COUNTED)
)
"""Set `complete_ratings` of the samples `sample_ids` (a list) from their ratings (built once: every answer runs it)."""


def recount(s: Session, sample_ids: Iterable[int]) -> None:
    """Set these samples' `complete_ratings` from their current ratings (call after the transaction's writes)."""
    s.flush()
    for part in chunks(sorted(set(sample_ids))):
        s.connection().execute(_RECOUNT, {"sample_ids": list(part)})


def mismatches(s: Session) -> list[tuple[int, int, int]]:
    """(sample id, stored count, count the ratings give) for every sample whose stored count is wrong."""
    return [
        (sample_id, stored, counted)
        for sample_id, stored, counted in s.execute(
            sa.select(t.Sample.id, t.Sample.complete_ratings, COUNTED)
            .where(t.Sample.complete_ratings != COUNTED)
            .order_by(t.Sample.id)
        ).all()
    ]


def recount_all(s: Session) -> int:
    """Repair every stored count from the ratings (after a hand edit of the database); how many were wrong."""
    return affected_rows(
        s.execute(
            sa.update(t.Sample)
            .where(t.Sample.complete_ratings != COUNTED)
            .values(complete_ratings=COUNTED)
            .execution_options(synchronize_session=False)
        )
    )
