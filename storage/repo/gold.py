"""Gold answers: which samples are gold tasks and what answer each accepts (`schema.GoldAnswer`).

A gold task is a sample with an accepted score range per criterion; task assignment (`storage.repo.tasks`) mixes
gold tasks into each rater's queue, and every statistic of methods (agreement, leaderboard) leaves them out
(`sample_ids`). Marking a sample again replaces its accepted answer; `unmark` removes the mark only (the raters'
ratings of the sample are kept).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput
from ..record_types import GoldRecord
from ..transactions import Transactions
from ._common import (
    affected_rows,
    check_int,
    check_optional_text,
    check_text,
    dataset_id,
    insert_ignore,
    require_sample,
    utcnow,
)
from .samples import prepare_sample, store_sample


class GoldRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    def mark(
        self,
        sample_id: int,
        criterion: str,
        low: int,
        high: int | None = None,
        *,
        kind: str = "gold",
        note: str | None = None,
        created_by: str | None = None,
    ) -> GoldRecord:
        """Make `sample_id` a gold task whose `criterion` (`cp` / `pf`) accepts the scores `low..high` (inclusive,
        0-4; `high` None = `low` only). Replaces an earlier accepted answer of the same sample and criterion."""
        check_int(sample_id, "sample_id", minimum=1)
        if criterion not in t.CRITERIA:
            raise InvalidInput(f"criterion must be one of {', '.join(t.CRITERIA)}; got {criterion!r}")
        if kind not in t.GOLD_KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(t.GOLD_KINDS)}; got {kind!r}")
        high = low if high is None else high
        for name, value in (("low", low), ("high", high)):
            check_int(value, name)
            if not t.SCORE_MIN <= value <= t.SCORE_MAX:
                raise InvalidInput(
                    f"the accepted {name} score must be within {t.SCORE_MIN}..{t.SCORE_MAX}, got {value}"
                )
        if low > high:
            raise InvalidInput(f"the accepted range {low}..{high} is empty: give the lower score first (e.g. 3..4)")
        check_optional_text(note, "note", max_len=2000)
        check_optional_text(created_by, "created_by", max_len=200)

        def work(s: Session) -> GoldRecord:
            require_sample(s, sample_id)
            row = s.scalar(
                sa.select(t.GoldAnswer).where(t.GoldAnswer.sample_id == sample_id, t.GoldAnswer.criterion == criterion)
            )
            if row is None:
                row = t.GoldAnswer(sample_id=sample_id, criterion=criterion, created_at=utcnow())
                s.add(row)
            row.low, row.high, row.kind, row.note, row.created_by = low, high, kind, note, created_by
            s.flush()
            return _records(s, [t.GoldAnswer.id == row.id])[0]

        return self._tx.write(work)

    def add_check(
        self,
        dataset: str,
        *,
        references: Sequence[str],
        output: str,
        prompt: str,
        subject: str,
        category: str | None,
        external_key: str,
        criterion: str,
        low: int,
        high: int,
        note: str | None = None,
    ) -> int:
        """Store an attention check made from stored images (a sample of `dataset` without a method, as
        `SampleRepository.add` takes it) and mark it as a gold task of kind `attention` accepting `low..high` on
        `criterion`, in one transaction (a check is never left as a normal task); the sample's id. Adding the same
        check again changes nothing."""
        sample = prepare_sample(
            dataset,
            references=references,
            output=output,
            prompt=prompt,
            subject=subject,
            category=category,
            external_key=external_key,
        )
        if criterion not in t.CRITERIA:
            raise InvalidInput(f"criterion must be one of {', '.join(t.CRITERIA)}; got {criterion!r}")

        def work(s: Session) -> int:
            sample_id = store_sample(s, sample)
            insert_ignore(
                s,
                t.GoldAnswer,
                {
                    "sample_id": sample_id,
                    "criterion": criterion,
                    "low": low,
                    "high": high,
                    "kind": "attention",
                    "note": note,
                    "created_by": "attention checks",
                    "created_at": utcnow(),
                },
            )
            return sample_id

        return self._tx.write(work)

    def unmark(self, sample_id: int, criterion: str | None = None) -> int:
        """Remove the gold mark of `sample_id` (of one criterion, or every one); returns how many were removed. A
        sample left without any mark leaves its dataset's practice round (`storage.repo.guides`)."""
        check_int(sample_id, "sample_id", minimum=1)

        def work(s: Session) -> int:
            query = sa.delete(t.GoldAnswer).where(t.GoldAnswer.sample_id == sample_id)
            if criterion is not None:
                query = query.where(t.GoldAnswer.criterion == criterion)
            removed = affected_rows(s.execute(query))
            if s.scalar(sa.select(t.GoldAnswer.id).where(t.GoldAnswer.sample_id == sample_id).limit(1)) is None:
                # a practice task gives feedback from its accepted answers: without any, it leaves the practice round
                s.execute(sa.delete(t.PracticeSample).where(t.PracticeSample.sample_id == sample_id))
            return removed

        return self._tx.write(work)

    def answers(self, dataset: str | None = None, *, kind: str | None = None) -> list[GoldRecord]:
        """Every accepted answer (of `dataset`, of `kind`), by sample id and criterion."""
        if dataset is not None:
            check_text(dataset, "dataset", max_len=200)

        def work(s: Session) -> list[GoldRecord]:
            where: list[sa.ColumnElement[bool]] = []
            if dataset is not None:
                where.append(t.Sample.dataset_id == dataset_id(s, dataset))
            if kind is not None:
                where.append(t.GoldAnswer.kind == kind)
            return _records(s, where)

        return self._tx.read(work)

    def sample_ids(self, dataset: str | None = None) -> frozenset[int]:
        """The ids of the gold samples (any kind) of `dataset` (None = every dataset)."""
        return frozenset(a.sample_id for a in self.answers(dataset))


def _records(s: Session, where: list[sa.ColumnElement[bool]]) -> list[GoldRecord]:
    query = (
        sa.select(t.GoldAnswer, t.Dataset.name)
        .join(t.Sample, t.Sample.id == t.GoldAnswer.sample_id)
        .join(t.Dataset, t.Dataset.id == t.Sample.dataset_id)
        .where(*where)
        .order_by(t.GoldAnswer.sample_id, t.GoldAnswer.criterion)
    )
    return [
        GoldRecord(
            sample_id=row.sample_id,
            dataset=name,
            criterion=row.criterion,
            low=row.low,
            high=row.high,
            kind=row.kind,
            note=row.note,
            created_by=row.created_by,
            created_at=row.created_at,
        )
        for row, name in s.execute(query).all()
    ]


GOLD_SAMPLES = sa.select(t.GoldAnswer.sample_id).distinct()
"""Ids of every gold sample (any kind, any criterion): the task assignment's exclusion from the overlap rule."""
