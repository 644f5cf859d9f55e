"""Gold pairs: which pairs of samples are gold pairwise tasks and what answer each accepts (`schema.PairGoldAnswer`).

A gold pair is two samples of one dataset (stored canonically, `sample_a_id < sample_b_id`) with an accepted answer
per criterion: `a`, `b` (the better sample) or `tie`. Pairwise assignment (`storage.repo.pairwise`) mixes gold pairs
into each rater's pair queue and never hands one out as a normal pair; every statistic of methods leaves their
judgments out (`keys`). Marking a pair again replaces its accepted answer; `unmark` removes the mark only (the raters'
judgments of the pair are kept). An attention check of pairs (`add_attention`) is a copy of one output stored as a
sample without a method, paired with the original and accepted `tie` on every criterion.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput
from ..pair_records import PairGoldRecord
from ..transactions import Transactions
from ._common import check_choice, check_int, insert_ignore, require_sample
from ._gold_marks import GoldMarks, attention_values, check_author
from .samples import prepare_sample, store_sample

ACCEPTED_NAMES = {"a": "the first sample", "b": "the second sample", "tie": "a tie"}
_MARKS = GoldMarks(
    t.PairGoldAnswer,
    PairGoldRecord,
    sample=t.PairGoldAnswer.sample_a_id,
    order=(t.PairGoldAnswer.sample_a_id, t.PairGoldAnswer.sample_b_id, t.PairGoldAnswer.criterion),
)


class PairGoldRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    def mark(
        self,
        first_id: int,
        second_id: int,
        criterion: str,
        accepted: str,
        *,
        kind: str = "gold",
        note: str | None = None,
        created_by: str | None = None,
    ) -> PairGoldRecord:
        """Make the pair of samples `first_id`, `second_id` (one dataset, each with an output image) a gold pair whose
        `criterion` (`cp` / `pf`) accepts `accepted`: `a` (the first sample is better), `b` (the second) or `tie`.
        Replaces an earlier accepted answer of the same pair and criterion. The record is canonical (a < b)."""
        check_int(first_id, "first_id", minimum=1)
        check_int(second_id, "second_id", minimum=1)
        if first_id == second_id:
            raise InvalidInput(f"a gold pair is two different samples; got sample #{first_id} twice")
        check_choice(criterion, "criterion", t.CRITERIA)
        if accepted not in t.PAIR_ACCEPTED:
            raise InvalidInput(
                f"the accepted answer of a pair must be one of {', '.join(t.PAIR_ACCEPTED)} (a: the first sample is "
                f"better, b: the second, tie); got {accepted!r}"
            )
        check_choice(kind, "kind", t.GOLD_KINDS)
        check_author(note, created_by)
        a, b = sorted((first_id, second_id))
        if (a, b) != (first_id, second_id) and accepted != "tie":
            accepted = "b" if accepted == "a" else "a"

        def work(s: Session) -> PairGoldRecord:
            _check_pair(s, a, b)
            key = {**_key(a, b), "criterion": criterion}
            return _MARKS.replace(s, key, {"accepted": accepted, "kind": kind, "note": note, "created_by": created_by})

        return self._tx.write(work)

    def add_attention(
        self,
        original_id: int,
        *,
        dataset: str,
        references: Sequence[str],
        output: str,
        prompt: str,
        subject: str,
        category: str | None,
        external_key: str,
        note: str | None = None,
    ) -> int:
        """Store a copy of the output of sample `original_id` (a sample of `dataset` without a method, as
        `SampleRepository.add` takes it) and mark the pair (original, copy) as a gold pair of kind `attention`
        accepting `tie` on every criterion, in one transaction (a check is never left as a normal pair); the copy's
        id. Adding the same check again changes nothing."""
        check_int(original_id, "original_id", minimum=1)
        sample = prepare_sample(
            dataset,
            references=references,
            output=output,
            prompt=prompt,
            subject=subject,
            category=category,
            external_key=external_key,
        )

        def work(s: Session) -> int:
            require_sample(s, original_id)
            copy_id = store_sample(s, sample)
            a, b = sorted((original_id, copy_id))
            _check_pair(s, a, b)
            for criterion in t.CRITERIA:
                values = {**_key(a, b), "criterion": criterion, "accepted": "tie"}
                insert_ignore(s, t.PairGoldAnswer, {**values, **attention_values(note)})
            return copy_id

        return self._tx.write(work)

    def unmark(self, first_id: int, second_id: int, criterion: str | None = None) -> int:
        """Remove the gold mark of the pair (of one criterion, or every one); returns how many were removed."""
        check_int(first_id, "first_id", minimum=1)
        check_int(second_id, "second_id", minimum=1)
        a, b = sorted((first_id, second_id))

        def work(s: Session) -> int:
            return _MARKS.remove(s, _key(a, b), criterion)

        return self._tx.write(work)

    def answers(self, dataset: str | None = None, *, kind: str | None = None) -> list[PairGoldRecord]:
        """Every accepted answer of a pair (of `dataset`, of `kind`), by pair and criterion."""
        return _MARKS.answers(self._tx, dataset, kind)

    def keys(self, dataset: str | None = None) -> frozenset[tuple[int, int]]:
        """The gold pairs (any kind) of `dataset` (None = every dataset), as canonical (a, b)."""
        return frozenset(a.key for a in self.answers(dataset))


def _key(a: int, b: int) -> dict[str, int]:
    """The columns of the canonical pair (a < b)."""
    return {"sample_a_id": a, "sample_b_id": b}


def _check_pair(s: Session, a: int, b: int) -> None:
    """InvalidInput unless samples a and b exist, are of one dataset and each has an output image."""
    for sample_id in (a, b):
        require_sample(s, sample_id)
    rows = dict(s.execute(sa.select(t.Sample.id, t.Sample.dataset_id).where(t.Sample.id.in_((a, b)))).all())
    if rows[a] != rows[b]:
        raise InvalidInput(f"samples #{a} and #{b} are in different datasets; a pair is two samples of one dataset")
    with_output = set(
        s.scalars(
            sa.select(t.SampleImage.sample_id).where(
                t.SampleImage.role == "output", t.SampleImage.sample_id.in_((a, b))
            )
        )
    )
    for sample_id in (a, b):
        if sample_id not in with_output:
            raise InvalidInput(
                f"sample #{sample_id} has no output image (ratings only): raters cannot be shown the pair"
            )


GOLD_PAIRS = sa.select(t.PairGoldAnswer.sample_a_id, t.PairGoldAnswer.sample_b_id).distinct()
"""(a, b) of every gold pair (any kind, any criterion): pairwise assignment's exclusion and its gold queue."""

_CHECK_SIDES = sa.union(
    sa.select(t.PairGoldAnswer.sample_a_id).where(t.PairGoldAnswer.kind == "attention"),
    sa.select(t.PairGoldAnswer.sample_b_id).where(t.PairGoldAnswer.kind == "attention"),
).subquery()
PAIR_CHECK_COPIES = sa.select(t.Sample.id).where(
    t.Sample.method.is_(None), t.Sample.id.in_(sa.select(_CHECK_SIDES.c[0]))
)
"""Ids of the copies made for pair attention checks (the method-less side of an `attention` pair): they exist for
pairwise tasks only, so the single-sample task assignment leaves them out."""
