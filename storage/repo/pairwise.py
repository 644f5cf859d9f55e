"""Pairwise tasks and judgments: which of two outputs is better, per criterion, next to the absolute ratings.

Exactly one current judgment per (rater, pair, criterion); a change copies the previous revision into the history
table, so nothing a rater entered is ever lost. Pairs are stored canonically (`sample_a_id < sample_b_id`) with the
sample shown on the left.

Assignment (`next_task`) runs in one write transaction: the rater's earliest unfinished task in scope is handed back
first; otherwise the caller's rule (`choose`, e.g. the workbench's pair planner) sees a snapshot of the scope
(`PairAssignmentState`) and names a new pair, which is recorded in the same transaction with a fresh random token.
On PostgreSQL an advisory lock serializes assignments (SQLite's `BEGIN IMMEDIATE` already does), so two raters
asking at once never both take the last open slot of a pair.

Gold pairs (`storage.repo.pair_gold`, attention checks included) are never a normal pair: a rule that chooses one is
refused. With `gold_rate` > 0, `next_task` mixes them into each rater's queue as `storage.repo.tasks` does for
samples: one in every B = round(1 / gold_rate) tasks, at a place within each block of B drawn per (seed, rater,
block) (`tasks.gold_due`), each rater getting every gold pair of the scope once, in their own seeded order
(SHA-256 of `"<seed>:<rater>:gold-pair:<a>:<b>"`), shown swapped (b left) when the first byte of
SHA-256(`"<seed>\0<rater>\0<a>\0<b>"`) is odd (the planner's coin); once the rule has no pair left, the rater's
remaining gold pairs come next. A gold task is recorded, tokened and handed back exactly like any other task.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput, InvalidRating, NotFound
from ..pair_records import (
    ExternalPairJudgment,
    PairAnswer,
    PairAssignmentState,
    PairCandidateRecord,
    PairChoice,
    PairJudgmentRecord,
    PairJudgmentRevision,
    PairTaskRecord,
)
from ..record_types import RaterRecord
from ..transactions import Transactions
from ._common import (
    DATASETS_FOR_RATING,
    check_int,
    check_optional_text,
    check_seconds,
    check_text,
    check_timestamp,
    dataset_id,
    insert_ignore,
    rater_row,
    require_sample,
    utcnow,
)
from .pair_exports import pair_export_table, write_pair_csv, write_pair_jsonl
from .pair_gold import GOLD_PAIRS
from .tasks import check_rate, gold_block, gold_due

if TYPE_CHECKING:
    from typing import Unpack

AnySelect = TypeVar("AnySelect", bound="sa.Select[Unpack[tuple[Any, ...]]]")

TOKEN_BYTES = 16
"""Random bytes of a task token (128 bits: unguessable)."""
_PG_ASSIGNMENT_LOCK = 0x4D615350  # "MaSP": advisory lock id serializing pairwise assignments on PostgreSQL

Choose = Callable[[PairAssignmentState], "PairChoice | None"]


class PairwiseRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    # --- tasks -------------------------------------------------------------------------------------------

    def next_task(
        self,
        rater: str,
        choose: Choose,
        *,
        dataset: str | None = None,
        for_rating_only: bool = False,
        gold_rate: float = 0.0,
        seed: int = 0,
    ) -> PairTaskRecord | None:
        """The task `rater` should judge next in `dataset` (None = every dataset, or with `for_rating_only` every
        dataset marked for rating: `_common.DATASETS_FOR_RATING`), or None when nothing is left:
        1. the rater's earliest task in scope that lacks a judgment of some criterion (`storage.CRITERIA`), else
        2. a gold pair when one is due (`gold_rate`, `seed`: see the module docstring), else
        3. a new task for the pair `choose(state)` returns (recorded in this transaction), else
        4. a gold pair the rater was not given yet (with `gold_rate` > 0), else None.

        `choose` must only compute (it may run again when the transaction is retried). Its pair must be two
        different samples in scope that this rater was never given, not a gold pair; the left sample one of them.
        """
        check_text(rater, "rater", max_len=200)
        check_int(seed, "seed")
        block = gold_block(check_rate(gold_rate))

        def work(s: Session) -> PairTaskRecord | None:
            if s.get_bind().dialect.name == "postgresql":
                s.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_ASSIGNMENT_LOCK})
            who = rater_row(s, rater)
            state = _state(s, who.username, dataset, for_rating_only)
            mine = [task for task in state.tasks if task.rater == rater]
            for task in mine:
                if not task.complete(t.CRITERIA):
                    return task
            given = {(task.sample_a_id, task.sample_b_id) for task in mine}
            gold_left = [] if block <= 0 else sorted(state.gold - given, key=lambda k: _gold_order(seed, rater, k))
            if gold_left and gold_due(seed, rater, len(mine), len(state.gold & given), block):
                return _add_gold_task(s, who, gold_left[0], seed)
            choice = choose(state)
            if choice is None:
                return _add_gold_task(s, who, gold_left[0], seed) if gold_left else None
            return _add_task(s, who, state, choice)

        return self._tx.write(work)

    def state(self, rater: str, *, dataset: str | None = None, for_rating_only: bool = False) -> PairAssignmentState:
        """A read-only snapshot of what `next_task`'s rule sees for `rater` (for progress counts; the rater need
        not exist yet)."""
        check_text(rater, "rater", max_len=200)
        return self._tx.read(lambda s: _state(s, rater, dataset, for_rating_only))

    def task(self, rater: str, token: str) -> PairTaskRecord:
        """`rater`'s task with this token (NotFound when there is none: another rater's token is not found)."""
        check_text(token, "token", max_len=64)
        return self._tx.read(lambda s: _task_record(s, _task_row(s, rater_row(s, rater), token), rater))

    def previous_task(
        self,
        rater: str,
        *,
        before_token: str | None = None,
        dataset: str | None = None,
        for_rating_only: bool = False,
    ) -> PairTaskRecord | None:
        """`rater`'s task handed out just before the one with `before_token` (in scope, as for `next_task`), or
        their latest task when `before_token` is None; None at the beginning."""

        def work(s: Session) -> PairTaskRecord | None:
            who = rater_row(s, rater)
            query = _scoped(
                sa.select(t.PairTask).where(t.PairTask.rater_id == who.id), t.PairTask, s, dataset, for_rating_only
            )
            if before_token is not None:
                check_text(before_token, "token", max_len=64)
                query = query.where(t.PairTask.position < _task_row(s, who, before_token).position)
            row = s.scalars(query.order_by(t.PairTask.position.desc()).limit(1)).first()
            return None if row is None else _task_record(s, row, rater)

        return self._tx.read(work)

    def tasks(self, *, rater: str | None = None, dataset: str | None = None) -> list[PairTaskRecord]:
        """Tasks (of one rater, or everyone's) in scope, by id, with their judgments."""

        def work(s: Session) -> list[PairTaskRecord]:
            query = sa.select(t.PairTask)
            rater_id = None if rater is None else rater_row(s, rater).id
            if rater_id is not None:
                query = query.where(t.PairTask.rater_id == rater_id)
            rows = list(s.scalars(_scoped(query, t.PairTask, s, dataset).order_by(t.PairTask.id)))
            return _task_records(s, rows, _current(s, dataset, rater_id))

        return self._tx.read(work)

    # --- judgments ---------------------------------------------------------------------------------------

    def judge(
        self, rater: str, token: str, answers: Sequence[PairAnswer], *, seconds_spent: float | None = None
    ) -> dict[str, PairJudgmentRecord]:
        """Set `rater`'s answers to their task `token`, one or more criteria in one transaction (all or nothing);
        returns criterion -> current judgment once committed. Giving the same answer again changes nothing; a
        different one becomes a new revision and the old one goes to the history."""
        check_text(rater, "rater", max_len=200)
        check_text(token, "token", max_len=64)
        answers = list(answers)
        if not answers:
            raise InvalidRating("answers must hold at least one PairAnswer (criterion, winner)")
        seen: set[str] = set()
        for i, answer in enumerate(answers):
            if not isinstance(answer, PairAnswer):
                raise InvalidInput(f"answers[{i}] must be a storage.PairAnswer, got {type(answer).__name__}")
            _check_answer(
                answer.criterion, answer.winner, answer.status, answer.both_bad, answer.note, where=f"answers[{i}]"
            )
            if answer.criterion in seen:
                raise InvalidRating(f"answers[{i}]: criterion {answer.criterion!r} is answered twice; give it once")
            seen.add(answer.criterion)
        check_seconds(seconds_spent)

        def work(s: Session) -> dict[str, PairJudgmentRecord]:
            who = rater_row(s, rater)
            task = _task_row(s, who, token)
            now = utcnow()
            return {
                a.criterion: _upsert(
                    s,
                    who,
                    task.sample_a_id,
                    task.sample_b_id,
                    task.left_sample_id,
                    a.criterion,
                    a.winner,
                    a.both_bad,
                    a.status,
                    seconds_spent,
                    a.note,
                    task.id,
                    now,
                    now,
                )
                for a in answers
            }

        return self._tx.write(work)

    def current(self, *, rater: str | None = None, dataset: str | None = None) -> list[PairJudgmentRecord]:
        """Current judgments (of one rater, or everyone's) whose pair is in scope, in the order they were given
        (`judged_at`, then id)."""
        return self._tx.read(lambda s: _current(s, dataset, None if rater is None else rater_row(s, rater).id))

    def get(self, judgment_id: int) -> PairJudgmentRecord:
        check_int(judgment_id, "judgment_id", minimum=1)

        def work(s: Session) -> PairJudgmentRecord:
            found = s.execute(
                sa.select(t.PairJudgment, t.Rater.username)
                .join(t.Rater, t.Rater.id == t.PairJudgment.rater_id)
                .where(t.PairJudgment.id == judgment_id)
            ).first()
            if found is None:
                raise NotFound(f"pairwise judgment #{judgment_id} does not exist")
            return _judgment_record(*found)

        return self._tx.read(work)

    def history(self, judgment_id: int) -> list[PairJudgmentRevision]:
        """Every revision of a judgment, oldest first; the last one is the current judgment."""
        current = self.get(judgment_id)

        def work(s: Session) -> list[PairJudgmentRevision]:
            old = s.scalars(
                sa.select(t.PairJudgmentHistory)
                .where(t.PairJudgmentHistory.judgment_id == judgment_id)
                .order_by(t.PairJudgmentHistory.revision)
            )
            return [
                PairJudgmentRevision(
                    h.revision,
                    h.left_sample_id,
                    h.winner,
                    h.both_bad,
                    h.status,
                    h.seconds_spent,
                    h.note,
                    h.judged_at,
                    h.replaced_at,
                )
                for h in old
            ] + [
                PairJudgmentRevision(
                    current.revision,
                    current.left_sample_id,
                    current.winner,
                    current.both_bad,
                    current.status,
                    current.seconds_spent,
                    current.note,
                    current.judged_at,
                    None,
                )
            ]

        return self._tx.read(work)

    def import_external(self, rater: str, items: Iterable[ExternalPairJudgment]) -> int:
        """Store judgments of an external rater (created as external if absent) in one transaction; returns how
        many were written (new, or changed). A judgment whose answer is the same as the stored one — same
        preferred sample (or tie), flag, status and note, whatever the left/right order — is left alone, so
        importing the same file again writes nothing; a changed one becomes a new revision."""
        check_text(rater, "rater", max_len=200)
        items = list(items)
        for i, item in enumerate(items):
            if not isinstance(item, ExternalPairJudgment):
                raise InvalidInput(f"items[{i}] must be a storage.ExternalPairJudgment, got {type(item).__name__}")
            check_int(item.left_sample_id, f"items[{i}].left_sample_id", minimum=1)
            check_int(item.right_sample_id, f"items[{i}].right_sample_id", minimum=1)
            if item.left_sample_id == item.right_sample_id:
                raise InvalidInput(
                    f"items[{i}]: left and right are the same sample #{item.left_sample_id}; a "
                    "judgment compares two samples"
                )
            _check_answer(item.criterion, item.winner, item.status, item.both_bad, item.note, where=f"items[{i}]")
            check_seconds(item.seconds_spent, f"items[{i}].seconds_spent")
            if item.judged_at is not None:
                check_timestamp(item.judged_at, f"items[{i}].judged_at")

        def work(s: Session) -> int:
            insert_ignore(s, t.Rater, {"username": rater, "is_external": True, "created_at": utcnow()})
            who = rater_row(s, rater)
            for sample_id in sorted({x for i in items for x in (i.left_sample_id, i.right_sample_id)}):
                require_sample(s, sample_id)
            now = utcnow()
            written = 0
            for item in items:
                a, b = sorted((item.left_sample_id, item.right_sample_id))
                before = _find(s, who.id, a, b, item.criterion)
                after = _upsert(
                    s,
                    who,
                    a,
                    b,
                    item.left_sample_id,
                    item.criterion,
                    item.winner,
                    item.both_bad,
                    item.status,
                    item.seconds_spent,
                    item.note,
                    None,
                    item.judged_at or now,
                    now,
                )
                written += before is None or after.revision != before
            return written

        return self._tx.write(work)

    # --- exports -----------------------------------------------------------------------------------------

    def export_table(
        self, dataset: str | None = None, *, history: bool = False, time_on_task: bool = True
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """(columns, rows) of the judgments export: one row per current judgment, with `history` one per superseded
        revision too, with `time_on_task` the seconds spent (see `pair_exports`)."""
        return self._tx.read(lambda s: pair_export_table(s, dataset, history=history, time_on_task=time_on_task))

    def write_csv(
        self,
        target: Path | str | TextIO,
        dataset: str | None = None,
        *,
        history: bool = False,
        time_on_task: bool = True,
    ) -> int:
        """Write the judgments export (`export_table`) as CSV to a path or text stream; return the row count."""
        return write_pair_csv(target, *self.export_table(dataset, history=history, time_on_task=time_on_task))

    def write_jsonl(
        self,
        target: Path | str | TextIO,
        dataset: str | None = None,
        *,
        history: bool = False,
        time_on_task: bool = True,
    ) -> int:
        """Write the judgments export (`export_table`) as JSON lines to a path or text stream; return the row
        count."""
        return write_pair_jsonl(target, *self.export_table(dataset, history=history, time_on_task=time_on_task))


def _check_answer(
    criterion: object, winner: object, status: object, both_bad: object, note: object, *, where: str
) -> None:
    if criterion not in t.CRITERIA:
        raise InvalidRating(
            f"{where}: criterion {criterion!r} is unknown; a pairwise judgment is about 'cp' "
            "(concept preservation) or 'pf' (prompt following)"
        )
    if status not in t.STATUSES:
        raise InvalidRating(f"{where}: status {status!r} is unknown; use one of {', '.join(t.STATUSES)}")
    if status == "rated" and winner not in t.PAIR_WINNERS:
        raise InvalidRating(f"{where}: {criterion} winner must be one of {', '.join(t.PAIR_WINNERS)}, got {winner!r}")
    if status != "rated" and winner is not None:
        raise InvalidRating(
            f"{where}: a {status} {criterion} judgment has no winner; pass winner=None (or status='rated' to give one)"
        )
    if not isinstance(both_bad, bool):
        raise InvalidInput(f"{where}: both_bad must be True or False, got {both_bad!r}")
    check_optional_text(note, f"{where}.note", max_len=10_000)


def _scoped(
    query: AnySelect,
    table: type[t.PairTask] | type[t.PairJudgment],
    s: Session,
    dataset: str | None,
    for_rating_only: bool = False,
) -> AnySelect:
    """`query` restricted to pairs of `dataset` (both samples of a pair are in one dataset), or with
    `for_rating_only` and no dataset to pairs of the datasets marked for rating."""
    if dataset is None and not for_rating_only:
        return query
    joined = query.join(t.Sample, t.Sample.id == table.sample_a_id)
    if dataset is None:
        return joined.where(t.Sample.dataset_id.in_(DATASETS_FOR_RATING))
    return joined.where(t.Sample.dataset_id == dataset_id(s, dataset))


def _state(s: Session, rater: str, dataset: str | None, for_rating_only: bool = False) -> PairAssignmentState:
    return PairAssignmentState(
        rater,
        utcnow(),
        _candidates(s, dataset, for_rating_only),
        *_tasks_and_judgments(s, dataset, for_rating_only),
        gold=_gold_pairs(s, dataset, for_rating_only),
    )


def _gold_pairs(s: Session, dataset: str | None, for_rating_only: bool = False) -> frozenset[tuple[int, int]]:
    """The gold pairs in scope (`_scoped`'s rule: the dataset of the pair's samples), canonical (a, b)."""
    query = GOLD_PAIRS
    if dataset is not None or for_rating_only:
        query = query.join(t.Sample, t.Sample.id == t.PairGoldAnswer.sample_a_id)
        if dataset is None:
            query = query.where(t.Sample.dataset_id.in_(DATASETS_FOR_RATING))
        else:
            query = query.where(t.Sample.dataset_id == dataset_id(s, dataset))
    return frozenset((a, b) for a, b in s.execute(query).all())


def _gold_order(seed: int, rater: str, key: tuple[int, int]) -> str:
    """A rater's order of the gold pairs (see the module docstring)."""
    return hashlib.sha256(f"{seed}:{rater}:gold-pair:{key[0]}:{key[1]}".encode()).hexdigest()


def _add_gold_task(s: Session, who: RaterRecord, key: tuple[int, int], seed: int) -> PairTaskRecord:
    """A new task of the gold pair `key` for `who`, shown as the planner's coin says (see the module docstring)."""
    a, b = key
    swapped = hashlib.sha256(f"{seed}\0{who.username}\0{a}\0{b}".encode()).digest()[0] % 2 == 1
    return _insert_task(s, who, a, b, b if swapped else a)


def _candidates(s: Session, dataset: str | None, for_rating_only: bool = False) -> tuple[PairCandidateRecord, ...]:
    """Samples in scope (`dataset`, else with `for_rating_only` the datasets marked for rating, else all) with an
    output image, a method and a prompt, with the output's media type (columns only: this runs on every assignment,
    over every sample of the scope)."""
    with_output = sa.select(t.SampleImage.sample_id).where(t.SampleImage.role == "output")
    scope = sa.select(t.Sample.id).where(
        t.Sample.id.in_(with_output), t.Sample.method.is_not(None), t.Sample.prompt.is_not(None)
    )
    if dataset is not None:
        scope = scope.where(t.Sample.dataset_id == dataset_id(s, dataset))
    elif for_rating_only:
        scope = scope.where(t.Sample.dataset_id.in_(DATASETS_FOR_RATING))
    refs: dict[int, list[str]] = defaultdict(list)
    for sample_id, sha in s.execute(
        sa.select(t.SampleImage.sample_id, t.SampleImage.blob_sha256).where(
            t.SampleImage.role == "reference", t.SampleImage.sample_id.in_(scope)
        )
    ):
        refs[sample_id].append(sha)
    rows = s.execute(
        sa.select(t.Sample.id, t.Dataset.name, t.Sample.method, t.Sample.prompt, t.Blob.media_type)
        .join(t.Dataset, t.Dataset.id == t.Sample.dataset_id)
        .join(
            t.SampleImage,
            sa.and_(
                t.SampleImage.sample_id == t.Sample.id, t.SampleImage.role == "output", t.SampleImage.position == 0
            ),
        )
        .join(t.Blob, t.Blob.sha256 == t.SampleImage.blob_sha256)
        .where(t.Sample.id.in_(scope))
        .order_by(t.Sample.id)
    )
    return tuple(
        PairCandidateRecord(i, name, method, prompt, tuple(sorted(refs.get(i, ()))), media_type)
        # the scope has no NULL method or prompt
        for i, name, method, prompt, media_type in cast("Iterable[tuple[int, str, str, str, str]]", rows)
    )


def _tasks_and_judgments(
    s: Session, dataset: str | None, for_rating_only: bool = False
) -> tuple[tuple[PairTaskRecord, ...], tuple[PairJudgmentRecord, ...]]:
    judgments = _current(s, dataset, for_rating_only=for_rating_only)
    rows = list(
        s.scalars(_scoped(sa.select(t.PairTask), t.PairTask, s, dataset, for_rating_only).order_by(t.PairTask.id))
    )
    return tuple(_task_records(s, rows, judgments)), tuple(judgments)


def _add_task(s: Session, who: RaterRecord, state: PairAssignmentState, choice: PairChoice) -> PairTaskRecord:
    if not isinstance(choice, PairChoice):
        raise InvalidInput(f"the assignment rule must return a storage.PairChoice or None, got {type(choice).__name__}")
    a, b = sorted((choice.first_sample_id, choice.second_sample_id))
    in_scope = {x.sample_id for x in state.candidates}
    if a == b or a not in in_scope or b not in in_scope or choice.left_sample_id not in (a, b):
        raise InvalidInput(
            f"the assignment rule chose samples #{choice.first_sample_id} and "
            f"#{choice.second_sample_id} (left #{choice.left_sample_id}): a pair must be two different "
            "samples in scope, the left one of them"
        )
    if any(x.rater == who.username and (x.sample_a_id, x.sample_b_id) == (a, b) for x in state.tasks):
        raise InvalidInput(
            f"the assignment rule gave rater {who.username!r} samples #{a} and #{b} again; a rater "
            "is never given the same pair twice"
        )
    if (a, b) in state.gold:
        raise InvalidInput(
            f"the assignment rule chose samples #{a} and #{b}, a gold pair; gold pairs are handed out by their own "
            "rule (gold_rate), never as a normal pair"
        )
    return _insert_task(s, who, a, b, choice.left_sample_id)


def _insert_task(s: Session, who: RaterRecord, a: int, b: int, left: int) -> PairTaskRecord:
    last = s.scalar(sa.select(sa.func.max(t.PairTask.position)).where(t.PairTask.rater_id == who.id)) or 0
    row = t.PairTask(
        token=secrets.token_urlsafe(TOKEN_BYTES),
        rater_id=who.id,
        sample_a_id=a,
        sample_b_id=b,
        left_sample_id=left,
        position=last + 1,
        assigned_at=utcnow(),
    )
    s.add(row)
    s.flush()
    return _task_record(s, row, who.username)


def _task_row(s: Session, who: RaterRecord, token: str) -> t.PairTask:
    row = s.scalar(sa.select(t.PairTask).where(t.PairTask.token == token, t.PairTask.rater_id == who.id))
    if row is None:
        raise NotFound(f"rater {who.username!r} has no pairwise task with this token; ask for the next task")
    return row


def _task_record(s: Session, row: t.PairTask, username: str) -> PairTaskRecord:
    query = sa.select(t.PairJudgment).where(
        t.PairJudgment.rater_id == row.rater_id,
        t.PairJudgment.sample_a_id == row.sample_a_id,
        t.PairJudgment.sample_b_id == row.sample_b_id,
    )
    return _with_judgments([row], {row.rater_id: username}, [_judgment_record(j, username) for j in s.scalars(query)])[
        0
    ]


def _task_records(s: Session, rows: list[t.PairTask], judgments: Iterable[PairJudgmentRecord]) -> list[PairTaskRecord]:
    """Records of task rows, each with its rater's current judgments of its pair (found in `judgments`)."""
    ids = sorted({r.rater_id for r in rows})
    names = dict(s.execute(sa.select(t.Rater.id, t.Rater.username).where(t.Rater.id.in_(ids))).all()) if ids else {}
    return _with_judgments(rows, names, judgments)


def _with_judgments(
    rows: list[t.PairTask], names: dict[int, str], judgments: Iterable[PairJudgmentRecord]
) -> list[PairTaskRecord]:
    judged: dict[tuple[str, int, int], dict[str, PairJudgmentRecord]] = defaultdict(dict)
    for j in judgments:
        judged[(j.rater, j.sample_a_id, j.sample_b_id)][j.criterion] = j
    return [
        PairTaskRecord(
            r.id,
            r.token,
            names[r.rater_id],
            r.sample_a_id,
            r.sample_b_id,
            r.left_sample_id,
            r.position,
            r.assigned_at,
            dict(judged.get((names[r.rater_id], r.sample_a_id, r.sample_b_id), {})),
        )
        for r in rows
    ]


def _current(
    s: Session, dataset: str | None, rater_id: int | None = None, *, for_rating_only: bool = False
) -> list[PairJudgmentRecord]:
    """Current judgments in scope (of one rater, or everyone's), by judged_at then id."""
    query = sa.select(t.PairJudgment, t.Rater.username).join(t.Rater, t.Rater.id == t.PairJudgment.rater_id)
    if rater_id is not None:
        query = query.where(t.PairJudgment.rater_id == rater_id)
    query = _scoped(query, t.PairJudgment, s, dataset, for_rating_only)
    query = query.order_by(t.PairJudgment.judged_at, t.PairJudgment.id)
    return [_judgment_record(j, u) for j, u in s.execute(query)]


def _judgment_record(row: t.PairJudgment, username: str) -> PairJudgmentRecord:
    return PairJudgmentRecord(
        id=row.id,
        rater=username,
        sample_a_id=row.sample_a_id,
        sample_b_id=row.sample_b_id,
        left_sample_id=row.left_sample_id,
        criterion=row.criterion,
        winner=row.winner,
        both_bad=row.both_bad,
        status=row.status,
        seconds_spent=row.seconds_spent,
        note=row.note,
        task_id=row.task_id,
        revision=row.revision,
        judged_at=row.judged_at,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _find(s: Session, rater_id: int, a: int, b: int, criterion: str) -> int | None:
    """Revision of the current judgment of this key, or None."""
    return s.scalar(
        sa.select(t.PairJudgment.revision).where(
            t.PairJudgment.rater_id == rater_id,
            t.PairJudgment.sample_a_id == a,
            t.PairJudgment.sample_b_id == b,
            t.PairJudgment.criterion == criterion,
        )
    )


def _answer(left: int, a: int, b: int, winner: str | None) -> int | str | None:
    """What an answer says regardless of the left/right order: the preferred sample, `tie`, or None."""
    if winner in ("left", "right"):
        right = b if left == a else a
        return left if winner == "left" else right
    return winner


def _upsert(
    s: Session,
    who: RaterRecord,
    a: int,
    b: int,
    left: int,
    criterion: str,
    winner: str | None,
    both_bad: bool,
    status: str,
    seconds: float | None,
    note: str | None,
    task_id: int | None,
    judged_at: Any,
    now: Any,
) -> PairJudgmentRecord:
    key = (
        t.PairJudgment.rater_id == who.id,
        t.PairJudgment.sample_a_id == a,
        t.PairJudgment.sample_b_id == b,
        t.PairJudgment.criterion == criterion,
    )
    inserted = insert_ignore(
        s,
        t.PairJudgment,
        {
            "rater_id": who.id,
            "sample_a_id": a,
            "sample_b_id": b,
            "left_sample_id": left,
            "criterion": criterion,
            "winner": winner,
            "both_bad": both_bad,
            "status": status,
            "seconds_spent": seconds,
            "note": note,
            "task_id": task_id,
            "revision": 1,
            "judged_at": judged_at,
            "created_at": now,
            "updated_at": now,
        },
    )
    row = s.scalars(sa.select(t.PairJudgment).where(*key).with_for_update()).one()
    same = (_answer(row.left_sample_id, a, b, row.winner), row.both_bad, row.status, row.note) == (
        _answer(left, a, b, winner),
        both_bad,
        status,
        note,
    )
    if not inserted and not same:
        s.add(
            t.PairJudgmentHistory(
                judgment_id=row.id,
                revision=row.revision,
                left_sample_id=row.left_sample_id,
                winner=row.winner,
                both_bad=row.both_bad,
                status=row.status,
                seconds_spent=row.seconds_spent,
                note=row.note,
                judged_at=row.judged_at,
                replaced_at=now,
            )
        )
        row.left_sample_id, row.winner, row.both_bad, row.status, row.note = left, winner, both_bad, status, note
        row.seconds_spent = seconds if seconds is not None else row.seconds_spent
        row.task_id = task_id if task_id is not None else row.task_id
        row.revision += 1
        row.judged_at = judged_at
        row.updated_at = now
        s.flush()
    return _judgment_record(row, who.username)
