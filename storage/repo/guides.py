"""Rating guides (`schema.RatingGuide`, `GuideExample`), practice rounds (`PracticeSample`), raters' practice
answers (`PracticeAnswer`, kept apart from `ratings`) and what each rater has read (`GuideReading`).

Setting a guide adds a version (earlier ones stay). The examples and the practice list of a dataset are replaced as
a whole. A practice sample is never handed out as a real task (`storage.repo.tasks` leaves `PRACTICE_SAMPLES` out of
every rater's scope, except one a rater already rated as a real task), and its answers never reach `ratings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput, NotFound
from ..guide_records import GuideExampleRecord, GuideReadingRecord, GuideRecord, PracticeAnswerRecord
from ..transactions import Transactions
from ._common import (
    check_choice,
    check_int,
    check_optional_text,
    check_text,
    dataset_id,
    insert_ignore,
    rater_row,
    require_sample,
    utcnow,
)

MAX_GUIDE_CHARS = 50_000
"""Longest guide text accepted."""
MAX_EXAMPLES = 6
"""Most examples a guide shows."""

PRACTICE_SAMPLES = sa.select(t.PracticeSample.sample_id)
"""Ids of every practice sample: the task assignment leaves them out of the real tasks."""


class GuideRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    # --- the guide --------------------------------------------------------------------------------------------

    def set_guide(
        self,
        dataset: str,
        text: str,
        *,
        practice_tasks: int = 0,
        practice_skippable: bool = False,
        created_by: str | None = None,
        examples: Sequence[tuple[int, int | None, int | None, str | None]] | None = None,
        practice: Sequence[int] | None = None,
    ) -> GuideRecord:
        """Add a new version of `dataset`'s guide (the current one from now on) and, when given, replace its
        `examples` (as `set_examples` takes them) and its `practice` samples (as `set_practice`), all in one
        transaction; the new version. A practice round may not ask for more tasks than it has practice samples."""
        check_text(dataset, "dataset", max_len=200)
        check_text(text, "guide text", max_len=MAX_GUIDE_CHARS)
        check_int(practice_tasks, "practice_tasks", minimum=0)
        if practice_tasks > t.MAX_PRACTICE_TASKS:
            raise InvalidInput(f"practice_tasks must be at most {t.MAX_PRACTICE_TASKS}, got {practice_tasks}")
        check_optional_text(created_by, "created_by", max_len=200)
        checked = None if examples is None else _checked_examples(examples)
        ids = None if practice is None else _checked_ids(practice)

        def work(s: Session) -> GuideRecord:
            did = dataset_id(s, dataset)
            if checked is not None:
                _replace_examples(s, did, dataset, checked, created_by)
            if ids is not None:
                _replace_practice(s, did, dataset, ids, created_by)
            available = len(_practice(s, did))
            if practice_tasks > available:
                raise InvalidInput(
                    f"the practice round asks for {practice_tasks} task(s) but {available} practice sample(s) are "
                    "picked: pick at least as many gold tasks for practice, or ask for fewer (0 = no practice round)"
                )
            last = s.scalar(sa.select(sa.func.max(t.RatingGuide.version)).where(t.RatingGuide.dataset_id == did))
            row = t.RatingGuide(
                dataset_id=did,
                version=(last or 0) + 1,
                text=text,
                practice_tasks=practice_tasks,
                practice_skippable=bool(practice_skippable),
                created_by=created_by,
                created_at=utcnow(),
            )
            s.add(row)
            s.flush()
            return _guide(row, dataset)

        return self._tx.write(work)

    def guide(self, dataset: str, version: int | None = None) -> GuideRecord | None:
        """`dataset`'s current guide (or its `version`); None when it has none."""
        check_text(dataset, "dataset", max_len=200)

        def work(s: Session) -> GuideRecord | None:
            query = sa.select(t.RatingGuide).where(t.RatingGuide.dataset_id == dataset_id(s, dataset))
            if version is not None:
                query = query.where(t.RatingGuide.version == version)
            row = s.scalar(query.order_by(t.RatingGuide.version.desc()).limit(1))
            return None if row is None else _guide(row, dataset)

        return self._tx.read(work)

    def versions(self, dataset: str) -> list[GuideRecord]:
        """Every version of `dataset`'s guide, oldest first."""
        check_text(dataset, "dataset", max_len=200)

        def work(s: Session) -> list[GuideRecord]:
            rows = s.scalars(
                sa.select(t.RatingGuide)
                .where(t.RatingGuide.dataset_id == dataset_id(s, dataset))
                .order_by(t.RatingGuide.version)
            )
            return [_guide(row, dataset) for row in rows]

        return self._tx.read(work)

    # --- examples ---------------------------------------------------------------------------------------------

    def set_examples(
        self,
        dataset: str,
        examples: Sequence[tuple[int, int | None, int | None, str | None]],
        *,
        created_by: str | None = None,
    ) -> list[GuideExampleRecord]:
        """Replace `dataset`'s guide examples by `examples`: (sample id, expected cp, expected pf, note), in the
        order shown. Each sample must belong to `dataset` and appear once; each example gives at least one score."""
        check_text(dataset, "dataset", max_len=200)
        checked = _checked_examples(examples)

        def work(s: Session) -> list[GuideExampleRecord]:
            did = dataset_id(s, dataset)
            _replace_examples(s, did, dataset, checked, created_by)
            return _examples(s, did, dataset)

        return self._tx.write(work)

    def examples(self, dataset: str) -> list[GuideExampleRecord]:
        """`dataset`'s guide examples in the order shown."""
        check_text(dataset, "dataset", max_len=200)
        return self._tx.read(lambda s: _examples(s, dataset_id(s, dataset), dataset))

    # --- practice ---------------------------------------------------------------------------------------------

    def set_practice(self, dataset: str, sample_ids: Sequence[int], *, created_by: str | None = None) -> list[int]:
        """Replace `dataset`'s practice samples by `sample_ids` (each a gold sample of `dataset`); their ids."""
        check_text(dataset, "dataset", max_len=200)
        ids = _checked_ids(sample_ids)

        def work(s: Session) -> list[int]:
            did = dataset_id(s, dataset)
            _replace_practice(s, did, dataset, ids, created_by)
            return _practice(s, did)

        return self._tx.write(work)

    def practice_samples(self, dataset: str) -> list[int]:
        """The ids of `dataset`'s practice samples, ascending."""
        check_text(dataset, "dataset", max_len=200)
        return self._tx.read(lambda s: _practice(s, dataset_id(s, dataset)))

    def answer_practice(self, rater: str, sample_id: int, scores: Mapping[str, int]) -> list[PracticeAnswerRecord]:
        """Store `rater`'s practice answer to `sample_id` (criterion -> score 0-4), all criteria at once; refused
        when the sample is not a practice sample or the rater has answered it already."""
        check_int(sample_id, "sample_id", minimum=1)
        if not scores:
            raise InvalidInput("a practice answer needs a score of at least one criterion")
        for criterion, score in scores.items():
            check_choice(criterion, "criterion", t.CRITERIA)
            if isinstance(score, bool) or not isinstance(score, int) or not t.SCORE_MIN <= score <= t.SCORE_MAX:
                raise InvalidInput(f"a practice score must be within 0..4, got {score!r}")

        def work(s: Session) -> list[PracticeAnswerRecord]:
            who = rater_row(s, rater)
            require_sample(s, sample_id)
            if s.scalar(sa.select(t.PracticeSample.id).where(t.PracticeSample.sample_id == sample_id)) is None:
                raise InvalidInput(f"sample #{sample_id} is not a practice task")
            now = utcnow()
            for criterion, score in scores.items():
                if not insert_ignore(
                    s,
                    t.PracticeAnswer,
                    {
                        "rater_id": who.id,
                        "sample_id": sample_id,
                        "criterion": criterion,
                        "score": score,
                        "created_at": now,
                    },
                ):
                    raise InvalidInput("this practice task is answered already: each is answered once")
            return _answers(s, [t.PracticeAnswer.rater_id == who.id, t.PracticeAnswer.sample_id == sample_id])

        return self._tx.write(work)

    def practice_answers(self, rater: str | None = None, dataset: str | None = None) -> list[PracticeAnswerRecord]:
        """Practice answers (of `rater`, of `dataset`'s samples), by rater, sample and criterion."""

        def work(s: Session) -> list[PracticeAnswerRecord]:
            where: list[sa.ColumnElement[bool]] = []
            if rater is not None:
                try:
                    where.append(t.PracticeAnswer.rater_id == rater_row(s, rater).id)
                except NotFound:
                    return []
            if dataset is not None:
                where.append(
                    t.PracticeAnswer.sample_id.in_(
                        sa.select(t.Sample.id).where(t.Sample.dataset_id == dataset_id(s, dataset))
                    )
                )
            return _answers(s, where)

        return self._tx.read(work)

    def pending(self, rater: str, sample_id: int) -> tuple[str, str] | None:
        """What `rater` has still to do before rating `sample_id`: (its dataset, `guide`) when they have not read the
        current version of the dataset's guide, (dataset, `practice`) when its practice round is neither done nor
        skipped; None when nothing (or the dataset has no guide). One read, made after each answer."""
        check_int(sample_id, "sample_id", minimum=1)

        def work(s: Session) -> tuple[str, str] | None:
            found = s.execute(
                sa.select(t.Dataset.id, t.Dataset.name)
                .join(t.Sample, t.Sample.dataset_id == t.Dataset.id)
                .where(t.Sample.id == sample_id)
            ).first()
            if found is None:
                return None
            did, name = found
            guide = s.execute(
                sa.select(t.RatingGuide.version, t.RatingGuide.practice_tasks)
                .where(t.RatingGuide.dataset_id == did)
                .order_by(t.RatingGuide.version.desc())
                .limit(1)
            ).first()
            if guide is None:
                return None
            reading = s.execute(
                sa.select(t.GuideReading.version_read, t.GuideReading.practice_skipped_at, t.GuideReading.rater_id)
                .join(t.Rater, t.Rater.id == t.GuideReading.rater_id)
                .where(t.Rater.username == rater, t.GuideReading.dataset_id == did)
            ).first()
            if reading is None or reading.version_read != guide.version:
                return name, "guide"
            if guide.practice_tasks <= 0 or reading.practice_skipped_at is not None:
                return None
            practice = sa.select(t.PracticeSample.sample_id).join(t.Sample, t.Sample.id == t.PracticeSample.sample_id)
            practice = practice.where(t.Sample.dataset_id == did)
            size = min(guide.practice_tasks, len(s.scalars(practice).all()))
            answered = s.scalar(
                sa.select(sa.func.count(sa.distinct(t.PracticeAnswer.sample_id))).where(
                    t.PracticeAnswer.rater_id == reading.rater_id, t.PracticeAnswer.sample_id.in_(practice)
                )
            )
            return (name, "practice") if size - (answered or 0) > 0 else None

        return self._tx.read(work)

    # --- what a rater has read --------------------------------------------------------------------------------

    def reading(self, rater: str, dataset: str) -> GuideReadingRecord | None:
        """Where `rater` stands with `dataset`'s guide (None: nothing recorded yet)."""

        def work(s: Session) -> GuideReadingRecord | None:
            try:
                who = rater_row(s, rater)
            except NotFound:
                return None
            row = s.scalar(
                sa.select(t.GuideReading).where(
                    t.GuideReading.rater_id == who.id, t.GuideReading.dataset_id == dataset_id(s, dataset)
                )
            )
            return None if row is None else _reading(row, rater, dataset)

        return self._tx.read(work)

    def mark_read(self, rater: str, dataset: str, version: int) -> GuideReadingRecord:
        """Record that `rater` has read version `version` of `dataset`'s guide."""
        check_int(version, "version", minimum=1)
        return self._update_reading(rater, dataset, version_read=version, read_at=utcnow())

    def skip_practice(self, rater: str, dataset: str) -> GuideReadingRecord:
        """Record that `rater` skipped `dataset`'s practice round."""
        return self._update_reading(rater, dataset, practice_skipped_at=utcnow())

    def _update_reading(self, rater: str, dataset: str, **values: object) -> GuideReadingRecord:
        def work(s: Session) -> GuideReadingRecord:
            who = rater_row(s, rater)
            did = dataset_id(s, dataset)
            insert_ignore(s, t.GuideReading, {"rater_id": who.id, "dataset_id": did})
            s.execute(
                sa.update(t.GuideReading)
                .where(t.GuideReading.rater_id == who.id, t.GuideReading.dataset_id == did)
                .values(**values)
            )
            row = s.scalars(
                sa.select(t.GuideReading).where(t.GuideReading.rater_id == who.id, t.GuideReading.dataset_id == did)
            ).one()
            s.refresh(row)
            return _reading(row, rater, dataset)

        return self._tx.write(work)


Example = tuple[int, int | None, int | None, str | None]


def _checked_examples(examples: Sequence[Example]) -> list[Example]:
    if len(examples) > MAX_EXAMPLES:
        raise InvalidInput(f"a guide shows at most {MAX_EXAMPLES} examples, got {len(examples)}")
    seen: set[int] = set()
    for sample_id, cp, pf, note in examples:
        check_int(sample_id, "sample_id", minimum=1)
        if sample_id in seen:
            raise InvalidInput(f"sample #{sample_id} is given twice as an example")
        seen.add(sample_id)
        if cp is None and pf is None:
            raise InvalidInput(f"the example of sample #{sample_id} gives no expected score (cp or pf)")
        for name, value in (("cp", cp), ("pf", pf)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not t.SCORE_MIN <= value <= t.SCORE_MAX
            ):
                raise InvalidInput(f"the expected {name} score must be within 0..4, got {value!r}")
        check_optional_text(note, "note", max_len=2000)
    return list(examples)


def _checked_ids(sample_ids: Sequence[int]) -> list[int]:
    return list(dict.fromkeys(check_int(sid, "sample_id", minimum=1) for sid in sample_ids))


def _replace_examples(s: Session, did: int, dataset: str, examples: list[Example], created_by: str | None) -> None:
    _require_in_dataset(s, did, dataset, [e[0] for e in examples])
    s.execute(
        sa.delete(t.GuideExample).where(
            t.GuideExample.sample_id.in_(sa.select(t.Sample.id).where(t.Sample.dataset_id == did))
        )
    )
    s.flush()
    now = utcnow()
    for position, (sample_id, cp, pf, note) in enumerate(examples, 1):
        s.add(
            t.GuideExample(
                sample_id=sample_id, position=position, cp=cp, pf=pf, note=note, created_by=created_by, created_at=now
            )
        )
    s.flush()


def _replace_practice(s: Session, did: int, dataset: str, ids: list[int], created_by: str | None) -> None:
    _require_in_dataset(s, did, dataset, ids)
    gold = set(s.scalars(sa.select(t.GoldAnswer.sample_id).where(t.GoldAnswer.sample_id.in_(ids))))
    missing = [sid for sid in ids if sid not in gold]
    if missing:
        raise InvalidInput(
            f"sample #{missing[0]} is not a gold task: a practice task needs an accepted answer to give "
            "feedback from (mark it as gold first)"
        )
    s.execute(
        sa.delete(t.PracticeSample).where(
            t.PracticeSample.sample_id.in_(sa.select(t.Sample.id).where(t.Sample.dataset_id == did))
        )
    )
    s.flush()
    now = utcnow()
    for sid in ids:
        s.add(t.PracticeSample(sample_id=sid, created_by=created_by, created_at=now))
    s.flush()


def _require_in_dataset(s: Session, did: int, dataset: str, sample_ids: list[int]) -> None:
    if not sample_ids:
        return
    found = dict(s.execute(sa.select(t.Sample.id, t.Sample.dataset_id).where(t.Sample.id.in_(sample_ids))).all())
    for sid in sample_ids:
        if sid not in found:
            raise NotFound(f"sample #{sid} does not exist; list samples with store.samples.list()")
        if found[sid] != did:
            raise InvalidInput(f"sample #{sid} is not in dataset {dataset!r}")


def _guide(row: t.RatingGuide, dataset: str) -> GuideRecord:
    return GuideRecord(
        dataset=dataset,
        version=row.version,
        text=row.text,
        practice_tasks=row.practice_tasks,
        practice_skippable=row.practice_skippable,
        created_by=row.created_by,
        created_at=row.created_at,
    )


def _examples(s: Session, did: int, dataset: str) -> list[GuideExampleRecord]:
    rows = s.scalars(
        sa.select(t.GuideExample)
        .join(t.Sample, t.Sample.id == t.GuideExample.sample_id)
        .where(t.Sample.dataset_id == did)
        .order_by(t.GuideExample.position, t.GuideExample.id)
    )
    return [GuideExampleRecord(r.sample_id, dataset, r.position, r.cp, r.pf, r.note) for r in rows]


def _practice(s: Session, did: int) -> list[int]:
    return list(
        s.scalars(
            sa.select(t.PracticeSample.sample_id)
            .join(t.Sample, t.Sample.id == t.PracticeSample.sample_id)
            .where(t.Sample.dataset_id == did)
            .order_by(t.PracticeSample.sample_id)
        )
    )


def _answers(s: Session, where: list[sa.ColumnElement[bool]]) -> list[PracticeAnswerRecord]:
    query = (
        sa.select(t.PracticeAnswer, t.Rater.username)
        .join(t.Rater, t.Rater.id == t.PracticeAnswer.rater_id)
        .where(*where)
        .order_by(t.Rater.username, t.PracticeAnswer.sample_id, t.PracticeAnswer.criterion)
    )
    return [
        PracticeAnswerRecord(name, row.sample_id, row.criterion, row.score, row.created_at)
        for row, name in s.execute(query).all()
    ]


def _reading(row: t.GuideReading, rater: str, dataset: str) -> GuideReadingRecord:
    return GuideReadingRecord(rater, dataset, row.version_read, row.read_at, row.practice_skipped_at)
