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
from ._common import check_choice, check_int, insert_ignore, require_sample
from ._gold_marks import GoldMarks, attention_values, check_author
from .samples import prepare_sample, store_sample

_MARKS = GoldMarks(
    t.GoldAnswer, GoldRecord, sample=t.GoldAnswer.sample_id, order=(t.GoldAnswer.sample_id, t.GoldAnswer.criterion)
)


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
        check_choice(criterion, "criterion", t.CRITERIA)
        check_choice(kind, "kind", t.GOLD_KINDS)
        high = low if high is None else high
        for name, value in (("low", low), ("high", high)):
            check_int(value, name)
            if not t.SCORE_MIN <= value <= t.SCORE_MAX:
                raise InvalidInput(
                    f"the accepted {name} score must be within {t.SCORE_MIN}..{t.SCORE_MAX}, got {value}"
                )
        if low > high:
            raise InvalidInput(f"the accepted range {low}..{high} is empty: give the lower score first (e.g. 3..4)")
        check_author(note, created_by)

        def work(s: Session) -> GoldRecord:
            require_sample(s, sample_id)
            key = {"sample_id": sample_id, "criterion": criterion}
            values = {"low": low, "high": high, "kind": kind, "note": note, "created_by": created_by}
            return _MARKS.replace(s, key, values)

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
        check_choice(criterion, "criterion", t.CRITERIA)

        def work(s: Session) -> int:
            sample_id = store_sample(s, sample)
            values = {"sample_id": sample_id, "criterion": criterion, "low": low, "high": high}
            insert_ignore(s, t.GoldAnswer, {**values, **attention_values(note)})
            return sample_id

        return self._tx.write(work)

    def unmark(self, sample_id: int, criterion: str | None = None) -> int:
        """Remove the gold mark of `sample_id` (of one criterion, or every one); returns how many were removed. A
        sample left without any mark leaves its dataset's practice round (`storage.repo.guides`)."""
        check_int(sample_id, "sample_id", minimum=1)

        def work(s: Session) -> int:
            removed = _MARKS.remove(s, {"sample_id": sample_id}, criterion)
            if s.scalar(sa.select(t.GoldAnswer.id).where(t.GoldAnswer.sample_id == sample_id).limit(1)) is None:
                # a practice task gives feedback from its accepted answers: without any, it leaves the practice round
                s.execute(sa.delete(t.PracticeSample).where(t.PracticeSample.sample_id == sample_id))
            return removed

        return self._tx.write(work)

    def answers(self, dataset: str | None = None, *, kind: str | None = None) -> list[GoldRecord]:
        """Every accepted answer (of `dataset`, of `kind`), by sample id and criterion."""
        return _MARKS.answers(self._tx, dataset, kind)

    def sample_ids(self, dataset: str | None = None) -> frozenset[int]:
        """The ids of the gold samples (any kind) of `dataset` (None = every dataset)."""
        return frozenset(a.sample_id for a in self.answers(dataset))


GOLD_SAMPLES = sa.select(t.GoldAnswer.sample_id).distinct()
"""Ids of every gold sample (any kind, any criterion): the task assignment's exclusion from the overlap rule."""
