"""Crowd studies and their participants (`schema.Study`, `schema.StudyParticipant`).

A study names one dataset, how many tasks each participant rates, the gold rate of their queue, and what a participant
is given at the end (a completion code, a redirect URL, or both). Only the SHA-256 of the link's secret is stored.
A participant is stored once per (study, participant id), bound to one rater row of their own (the workbench names it;
`join` refuses a rater name that already belongs to someone else), so the same participant id always resumes the same
answers. A closed study takes no new participant; the ones who started keep their place.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import Conflict, InvalidInput, NotFound
from ..record_types import ParticipantRecord, StudyRecord
from ..transactions import Transactions
from ._common import check_int, check_optional_text, check_text, dataset_id, insert_ignore, utcnow

SECRET_HASH_LENGTH = 64
"""Hex digits of the SHA-256 of a study link's secret."""


class StudyRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    def create(
        self,
        dataset: str,
        name: str,
        *,
        tasks_per_participant: int,
        gold_rate: float,
        completion_code: str | None,
        redirect_url: str | None,
        secret_hash: str,
        created_by: str | None = None,
    ) -> StudyRecord:
        """A new open study of `dataset` (which must exist)."""
        check_text(dataset, "dataset", max_len=200)
        check_text(name, "name", max_len=200)
        check_int(tasks_per_participant, "tasks_per_participant", minimum=1)
        if isinstance(gold_rate, bool) or not isinstance(gold_rate, (int, float)) or not 0 <= gold_rate <= 1:
            raise InvalidInput(f"gold_rate must be a number within 0..1, got {gold_rate!r}")
        check_optional_text(completion_code, "completion_code", max_len=100)
        check_optional_text(redirect_url, "redirect_url", max_len=2000)
        if completion_code is None and redirect_url is None:
            raise InvalidInput("a study needs a completion code or a redirect URL")
        check_text(secret_hash, "secret_hash", max_len=SECRET_HASH_LENGTH)
        check_optional_text(created_by, "created_by", max_len=200)

        def work(s: Session) -> StudyRecord:
            row = t.Study(
                dataset_id=dataset_id(s, dataset),
                name=name,
                tasks_per_participant=tasks_per_participant,
                gold_rate=float(gold_rate),
                completion_code=completion_code,
                redirect_url=redirect_url,
                secret_hash=secret_hash,
                created_by=created_by,
                created_at=utcnow(),
            )
            s.add(row)
            s.flush()
            return _studies(s, [t.Study.id == row.id])[0]

        return self._tx.write(work)

    def get(self, study_id: int) -> StudyRecord:
        """The study (NotFound if absent), with its counts of participants."""
        check_int(study_id, "study_id", minimum=1)

        def work(s: Session) -> StudyRecord:
            found = _studies(s, [t.Study.id == study_id])
            if not found:
                raise NotFound(f"study {study_id} does not exist")
            return found[0]

        return self._tx.read(work)

    def secret_hash(self, study_id: int) -> str | None:
        """The stored hash of the study's link secret; None when there is no such study."""
        check_int(study_id, "study_id", minimum=1)
        return self._tx.read(lambda s: s.scalar(sa.select(t.Study.secret_hash).where(t.Study.id == study_id)))

    def studies(self) -> list[StudyRecord]:
        """Every study, newest first."""
        return self._tx.read(lambda s: _studies(s, []))

    def close(self, study_id: int) -> StudyRecord:
        """Close the study (no new participant); closing a closed study changes nothing."""
        check_int(study_id, "study_id", minimum=1)

        def work(s: Session) -> StudyRecord:
            row = s.get(t.Study, study_id)
            if row is None:
                raise NotFound(f"study {study_id} does not exist")
            if row.closed_at is None:
                row.closed_at = utcnow()
                s.flush()
            return _studies(s, [t.Study.id == study_id])[0]

        return self._tx.write(work)

    def join(
        self,
        study_id: int,
        participant: str,
        rater: str,
        *,
        platform_study: str | None = None,
        platform_session: str | None = None,
    ) -> tuple[ParticipantRecord, bool]:
        """(the participant, True when new): resumes the participant `participant` of the study (their latest
        `platform_session` kept), or starts them as the new rater `rater`. Conflict when the study is closed to a new
        participant, or when a rater named `rater` exists that is not this participant's; NotFound without the
        study."""
        check_int(study_id, "study_id", minimum=1)
        check_text(participant, "participant", max_len=64)
        check_text(rater, "rater", max_len=200)
        check_optional_text(platform_study, "platform_study", max_len=64)
        check_optional_text(platform_session, "platform_session", max_len=64)

        def resume(s: Session) -> tuple[ParticipantRecord, bool] | None:
            row = s.scalar(
                sa.select(t.StudyParticipant).where(
                    t.StudyParticipant.study_id == study_id, t.StudyParticipant.participant == participant
                )
            )
            if row is None:
                return None
            if platform_session is not None and row.platform_session != platform_session:
                row.platform_session = platform_session
                s.flush()
            return _participants(s, [t.StudyParticipant.id == row.id])[0], False

        def work(s: Session) -> tuple[ParticipantRecord, bool]:
            study = s.get(t.Study, study_id)
            if study is None:
                raise NotFound(f"study {study_id} does not exist")
            found = resume(s)
            if found is not None:
                return found
            if study.closed_at is not None:
                raise Conflict(f"study {study_id} is closed: it takes no new participant")
            now = utcnow()
            if not insert_ignore(s, t.Rater, {"username": rater, "is_external": False, "created_at": now}):
                found = resume(s)  # another request of the same participant started them meanwhile
                if found is not None:
                    return found
                raise Conflict(f"a rater named {rater!r} already exists and is not this participant")
            rater_id = s.scalar(sa.select(t.Rater.id).where(t.Rater.username == rater))
            s.add(
                t.StudyParticipant(
                    study_id=study_id,
                    participant=participant,
                    rater_id=rater_id,
                    platform_study=platform_study,
                    platform_session=platform_session,
                    started_at=now,
                )
            )
            s.flush()
            return _participants(s, [t.StudyParticipant.rater_id == rater_id])[0], True

        return self._tx.write(work)

    def participant_of(self, rater: str) -> ParticipantRecord | None:
        """The study participant whose answers are stored under the rater `rater`; None when the rater is none."""
        check_text(rater, "rater", max_len=200)
        return self._tx.read(lambda s: next(iter(_participants(s, [t.Rater.username == rater])), None))

    def participants(self, study_id: int) -> list[ParticipantRecord]:
        """The study's participants, by when they started."""
        check_int(study_id, "study_id", minimum=1)
        return self._tx.read(lambda s: _participants(s, [t.StudyParticipant.study_id == study_id]))

    def finish(self, study_id: int, participant: str) -> ParticipantRecord:
        """Mark the participant finished (the first time only: a later call keeps the first time)."""

        def work(s: Session) -> ParticipantRecord:
            row = s.scalar(
                sa.select(t.StudyParticipant).where(
                    t.StudyParticipant.study_id == study_id, t.StudyParticipant.participant == participant
                )
            )
            if row is None:
                raise NotFound(f"study {study_id} has no participant {participant!r}")
            if row.finished_at is None:
                row.finished_at = utcnow()
                s.flush()
            return _participants(s, [t.StudyParticipant.id == row.id])[0]

        return self._tx.write(work)


def _studies(s: Session, where: list[sa.ColumnElement[bool]]) -> list[StudyRecord]:
    started = sa.func.count(t.StudyParticipant.id)
    finished = sa.func.count(t.StudyParticipant.finished_at)
    query = (
        sa.select(t.Study, t.Dataset.name, started, finished)
        .join(t.Dataset, t.Dataset.id == t.Study.dataset_id)
        .outerjoin(t.StudyParticipant, t.StudyParticipant.study_id == t.Study.id)
        .where(*where)
        .group_by(t.Study.id, t.Dataset.name)
        .order_by(t.Study.id.desc())
    )
    return [
        StudyRecord(
            id=row.id,
            dataset=dataset,
            name=row.name,
            tasks_per_participant=row.tasks_per_participant,
            gold_rate=row.gold_rate,
            completion_code=row.completion_code,
            redirect_url=row.redirect_url,
            created_by=row.created_by,
            created_at=row.created_at,
            closed_at=row.closed_at,
            participants=int(n_started),
            finished=int(n_finished),
        )
        for row, dataset, n_started, n_finished in s.execute(query).all()
    ]


def _participants(s: Session, where: list[sa.ColumnElement[bool]]) -> list[ParticipantRecord]:
    query = (
        sa.select(t.StudyParticipant, t.Rater.username)
        .join(t.Rater, t.Rater.id == t.StudyParticipant.rater_id)
        .where(*where)
        .order_by(t.StudyParticipant.started_at, t.StudyParticipant.id)
    )
    return [
        ParticipantRecord(
            study_id=row.study_id,
            participant=row.participant,
            rater=username,
            platform_study=row.platform_study,
            platform_session=row.platform_session,
            started_at=row.started_at,
            finished_at=row.finished_at,
        )
        for row, username in s.execute(query).all()
    ]
