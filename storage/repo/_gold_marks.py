"""What gold tasks (`gold`, `schema.GoldAnswer`) and gold pairs (`pair_gold`, `schema.PairGoldAnswer`) share: one
accepted answer per marked thing (a sample, a pair) and criterion, of kind `gold` or `attention`, with a note and its
author; marking again replaces the answer, unmarking removes it, the answers list by dataset and kind. Each
repository keeps only what differs: what is marked (its key columns) and what an accepted answer is."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

import sqlalchemy as sa
from sqlalchemy.orm import InstrumentedAttribute, Session

from .. import schema as t
from ..pair_records import PairGoldRecord
from ..record_types import GoldRecord
from ..transactions import Transactions
from ._common import affected_rows, check_optional_text, check_text, dataset_id, utcnow

Record = TypeVar("Record", GoldRecord, PairGoldRecord)
Answer = TypeVar("Answer", t.GoldAnswer, t.PairGoldAnswer)

ATTENTION_AUTHOR = "attention checks"
"""`created_by` of the marks that the attention checks make."""


def check_author(note: object, created_by: object) -> None:
    """InvalidInput unless the mark's note (at most 2000 characters) and author (200) are None or storable text."""
    check_optional_text(note, "note", max_len=2000)
    check_optional_text(created_by, "created_by", max_len=200)


def attention_values(note: str | None) -> dict[str, Any]:
    """The columns of a mark made by the attention checks, besides its key and accepted answer."""
    return {"kind": "attention", "note": note, "created_by": ATTENTION_AUTHOR, "created_at": utcnow()}


@dataclasses.dataclass(frozen=True)
class GoldMarks(Generic[Answer, Record]):
    """The table of one kind of accepted answers (`model`), the record a row becomes (`record`: the row's columns of
    the same names, and `dataset`), the column of the sample whose dataset is the mark's (`sample`) and the columns
    the answers are listed by (`order`)."""

    model: type[Answer]
    record: type[Record]
    sample: InstrumentedAttribute[int]
    order: tuple[InstrumentedAttribute[Any], ...]

    def replace(self, s: Session, key: Mapping[str, Any], values: Mapping[str, Any]) -> Record:
        """Set `values` on the mark of `key` (its columns, criterion included), made now when there is none; the
        mark as it is stored."""
        row = s.scalar(sa.select(self.model).filter_by(**key))
        if row is None:
            row = self.model(**key, created_at=utcnow())
            s.add(row)
        for column, value in values.items():
            setattr(row, column, value)
        s.flush()
        return self.records(s, [self.model.id == row.id])[0]

    def remove(self, s: Session, key: Mapping[str, Any], criterion: str | None) -> int:
        """Delete the marks of `key` (of one criterion, or every one); how many there were."""
        query = sa.delete(self.model).filter_by(**key)
        if criterion is not None:
            query = query.where(self.model.criterion == criterion)
        return affected_rows(s.execute(query))

    def answers(self, tx: Transactions, dataset: str | None, kind: str | None) -> list[Record]:
        """Every mark (of `dataset`, of `kind`), in `order`."""
        if dataset is not None:
            check_text(dataset, "dataset", max_len=200)

        def work(s: Session) -> list[Record]:
            where: list[sa.ColumnElement[bool]] = []
            if dataset is not None:
                where.append(t.Sample.dataset_id == dataset_id(s, dataset))
            if kind is not None:
                where.append(self.model.kind == kind)
            return self.records(s, where)

        return tx.read(work)

    def records(self, s: Session, where: list[sa.ColumnElement[bool]]) -> list[Record]:
        """The marks that match `where` (on the mark and its sample), in `order`, as records."""
        query = (
            sa.select(self.model, t.Dataset.name)
            .join(t.Sample, t.Sample.id == self.sample)
            .join(t.Dataset, t.Dataset.id == t.Sample.dataset_id)
            .where(*where)
            .order_by(*self.order)
        )
        columns = [f.name for f in dataclasses.fields(self.record) if f.name != "dataset"]
        return [
            self.record(dataset=name, **{column: getattr(row, column) for column in columns})
            for row, name in s.execute(query).all()
        ]
