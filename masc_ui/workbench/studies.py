"""Crowd studies: an admin opens a study of one dataset for participants of a crowd platform (Prolific and the like),
who arrive by the study's secret link, rate a fixed number of tasks without any login, and get a completion code
or are sent back to the platform at the end.

- `create` (admins): the dataset must exist and be marked for rating; tasks per participant >= 1; a gold rate
  within 0..`MAX_GOLD_RATE`; a completion code, an http(s) redirect URL, or both. The link's secret is made here and
  returned once (`StudyLink`): only its SHA-256 is stored, so a lost link is replaced by a new study.
- `open_link` (anybody holding a link): the link names its study and carries the secret, compared in constant
  time with the stored hash. A wrong or unknown link is `StudyLinkUnknown` and creates nothing. The participant id
  comes from the link's query (`PROLIFIC_PID`, else `participant`); without one, or with one that is not 1..64
  letters, digits or `_ . -`, nothing is created either. The participant's rater is named `study<N>:<participant
  id>` (`participant_rater`): the same participant id of one study always resumes the same rater, and never
  another study's (a login name cannot hold `:`, so no participant is ever a login or an admin).
- A participant rates only their study's dataset, with gold tasks at the study's rate, until they have finished
  `tasks_per_participant` tasks (or nothing is left for them); then they are finished, for good, and shown the
  completion code or sent to the redirect URL (`RatingTasks` asks `scope_of` and `finish`).
- Every answer of a participant is stored under their rater, whose name says the study (`study_of_rater`): an
  export or report tells each answer's study by its rater.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import InputError, WorkbenchError
from .database import Database, StoreError

if TYPE_CHECKING:
    from storage import ParticipantRecord, StudyRecord

MAX_GOLD_RATE = 0.5
"""Highest gold rate of a study (the task queue's own limit: at least every other task is a real one)."""
MAX_TASKS = 10_000
"""Most tasks per participant a study asks for."""
SECRET_BYTES = 24
"""Random bytes of a link's secret (32 URL-safe characters)."""
PARTICIPANT_PARAMS = ("PROLIFIC_PID", "participant")
"""Query parameters that carry the participant id, in the order they are read."""
PLATFORM_STUDY_PARAM, PLATFORM_SESSION_PARAM = "STUDY_ID", "SESSION_ID"
PARTICIPANT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A participant id (and the platform's study and session ids): 1..64 letters, digits or `_ . -`."""
RATER_NAME = re.compile(r"^study([1-9][0-9]{0,17}):([A-Za-z0-9][A-Za-z0-9_.-]{0,63})$")
"""The rater name of a study participant (`participant_rater`)."""
CODE = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
"""A completion code: 1..100 letters, digits, `_` or `-` (what crowd platforms issue)."""
LINK_TOKEN = re.compile(r"^([1-9][0-9]{0,17})\.([A-Za-z0-9_-]{1,100})$")
"""The last part of a study link's path: `<study id>.<secret>`."""
PLATFORM_PLACEHOLDERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
"""The query Prolific fills in (its URL placeholders) when it sends a participant to the link."""
LINK_UNKNOWN = "this study link is not valid: check that you copied the whole link, or ask the study's researchers"
NEEDS_PARTICIPANT = (
    "this study link needs your participant id: open it from the crowd platform (it adds PROLIFIC_PID), or add "
    "?participant=YOUR_ID to the link"
)


class StudyLinkUnknown(WorkbenchError):
    """The link names no study, or its secret is not the study's: nothing is created."""

    def __init__(self) -> None:
        super().__init__(LINK_UNKNOWN)


class StudyClosed(WorkbenchError):
    """The study is closed: it takes no new participant."""


def participant_rater(study_id: int, participant: str) -> str:
    """The rater name of participant `participant` of study `study_id`: `study<N>:<participant id>`."""
    return f"study{study_id}:{participant}"


def study_of_rater(rater: str) -> int | None:
    """The study id a rater name says (`participant_rater`); None for every other rater."""
    found = RATER_NAME.match(rater or "")
    return int(found.group(1)) if found else None


def secret_hash(secret: str) -> str:
    """SHA-256 (hex) of a link's secret: what is stored (the secret is 192 random bits: no salt or slow hash
    needed, nothing to guess)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class StudyLink:
    """A new study and its link (the secret is shown this once)."""

    study: StudyRecord
    token: str
    """`<study id>.<secret>`: the last part of the link's path."""

    @property
    def path(self) -> str:
        """The link's path and Prolific's query: `study/<token>?PROLIFIC_PID={{%PROLIFIC_PID%}}&...`."""
        return f"study/{self.token}?{PLATFORM_PLACEHOLDERS}"

    def url(self, base: str) -> str:
        """The whole link under the app's address `base` (e.g. `https://host/`)."""
        return base.rstrip("/") + "/" + self.path


@dataclass(frozen=True)
class StudyScope:
    """What a participant rates: the study's dataset, its tasks per participant and gold rate."""

    study_id: int
    participant: str
    dataset: str
    tasks: int
    gold_rate: float


@dataclass(frozen=True)
class Completion:
    """What a finished participant gets: the completion code, the redirect URL, or both."""

    code: str | None
    redirect_url: str | None


class Studies:
    """Crowd studies over one `Database` (see the module docstring)."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._scopes: dict[str, StudyScope] = {}
        """Rater name -> the participant's scope, once read (a participant's study and dataset never change)."""
        self._lock = threading.Lock()

    # --- admins ---------------------------------------------------------------------------------------------------

    def create(
        self,
        *,
        user: str | None,
        dataset: str,
        name: str,
        tasks: int,
        gold_rate: float = 0.0,
        completion_code: str | None = None,
        redirect_url: str | None = None,
    ) -> StudyLink:
        """Open a study (see the module docstring); its link is returned once."""
        self._database.accounts.require_admin(user, "creating a crowd study")
        dataset = (dataset or "").strip()
        name = " ".join((name or "").split())
        if not name:
            raise InputError("name the study (e.g. 'pilot, December'): the name is shown to admins only")
        if len(name) > 200:
            raise InputError(f"the study's name is {len(name)} characters long; keep it under 200")
        found = {d.name: d for d in self._database.samples.datasets()}.get(dataset)
        if found is None:
            raise InputError(f"dataset {dataset!r} does not exist; pick a stored dataset (Browse tab, masc-ui import)")
        if not found.for_rating:
            raise InputError(
                f"dataset {dataset!r} is not marked for rating; mark it first (Browse tab, or "
                "`masc-ui datasets for-rating`), so that its samples are rating tasks"
            )
        if isinstance(tasks, bool) or not isinstance(tasks, int) or not 1 <= tasks <= MAX_TASKS:
            raise InputError(f"tasks per participant must be a whole number within 1..{MAX_TASKS}, got {tasks!r}")
        if (
            isinstance(gold_rate, bool)
            or not isinstance(gold_rate, (int, float))
            or not 0 <= gold_rate <= MAX_GOLD_RATE
        ):
            raise InputError(f"the gold rate must be within 0..{MAX_GOLD_RATE} (0: no gold tasks), got {gold_rate!r}")
        code = (completion_code or "").strip() or None
        url = (redirect_url or "").strip() or None
        if code is None and url is None:
            raise InputError(
                "give a completion code (shown to participants at the end), a redirect URL (where they are sent), "
                "or both"
            )
        if code is not None and not CODE.match(code):
            raise InputError("the completion code has 1 to 100 letters, digits, `_` or `-` (e.g. CRWD4821)")
        if url is not None:
            check_redirect_url(url)
        secret = secrets.token_urlsafe(SECRET_BYTES)
        study = self._database.studies.create(
            dataset,
            name,
            tasks_per_participant=tasks,
            gold_rate=float(gold_rate),
            completion_code=code,
            redirect_url=url,
            secret_hash=secret_hash(secret),
            created_by=user,
        )
        return StudyLink(study, f"{study.id}.{secret}")

    def studies(self, *, user: str | None) -> list[StudyRecord]:
        """Every study, newest first (admins)."""
        self._database.accounts.require_admin(user, "crowd studies")
        return self._database.studies.studies()

    def participants(self, *, user: str | None, study_id: int) -> list[ParticipantRecord]:
        """The participants of a study, by when they started (admins)."""
        self._database.accounts.require_admin(user, "crowd studies")
        self._database.studies.get(_study_id(study_id))
        return self._database.studies.participants(study_id)

    def close(self, *, user: str | None, study_id: int) -> StudyRecord:
        """Close a study: its link takes no new participant; those who started may finish (admins)."""
        self._database.accounts.require_admin(user, "closing a crowd study")
        return self._database.studies.close(_study_id(study_id))

    def table(self, *, user: str | None) -> tuple[list[str], list[list[object]]]:
        """(headers, rows) of every study: what the Raters tab and `masc-ui study list` show."""
        headers = ["id", "name", "dataset", "tasks", "gold rate", "completion", "started", "finished", "state"]
        rows: list[list[object]] = [
            [
                s.id,
                s.name,
                s.dataset,
                s.tasks_per_participant,
                s.gold_rate,
                " + ".join(
                    part
                    for part in (
                        f"code {s.completion_code}" if s.completion_code else "",
                        f"redirect {s.redirect_url}" if s.redirect_url else "",
                    )
                    if part
                ),
                s.participants,
                s.finished,
                "open" if s.is_open else "closed",
            ]
            for s in self.studies(user=user)
        ]
        return headers, rows

    # --- participants ---------------------------------------------------------------------------------------------

    def open_link(self, token: str, query: Mapping[str, str]) -> ParticipantRecord:
        """Start or resume the participant a study link's visit names (see the module docstring). `token`: the
        link's `<study id>.<secret>`; `query`: its query parameters. StudyLinkUnknown, InputError (no or a bad
        participant id) or StudyClosed, with nothing created."""
        found = LINK_TOKEN.match(token or "")
        stored = self._database.studies.secret_hash(int(found.group(1))) if found else None
        given = secret_hash(found.group(2) if found else "")
        if not hmac.compare_digest(given, stored or "0" * len(given)) or stored is None or found is None:
            raise StudyLinkUnknown()
        study_id = int(found.group(1))
        participant = next((query[p] for p in PARTICIPANT_PARAMS if query.get(p)), None)
        if participant is None:
            raise InputError(NEEDS_PARTICIPANT)
        if not PARTICIPANT_ID.match(participant):
            raise InputError(
                "the participant id in this link is not valid: it has 1 to 64 letters, digits or `_ . -`; open the "
                "link from the crowd platform again"
            )
        platform = {}
        for key in (PLATFORM_STUDY_PARAM, PLATFORM_SESSION_PARAM):
            value = query.get(key) or None
            if value is not None and not PARTICIPANT_ID.match(value):
                raise InputError(f"{key} in this link is not valid: it has 1 to 64 letters, digits or `_ . -`")
            platform[key] = value
        from storage import Conflict

        try:
            joined, _ = self._database.studies.join(
                study_id,
                participant,
                participant_rater(study_id, participant),
                platform_study=platform[PLATFORM_STUDY_PARAM],
                platform_session=platform[PLATFORM_SESSION_PARAM],
            )
        except StoreError as exc:
            if not isinstance(exc.__cause__, Conflict):
                raise
            if "closed" in str(exc):
                raise StudyClosed(
                    "this study is closed: it takes no new participants; return to the crowd platform"
                ) from None
            raise InputError(
                "this participant id cannot take part in this study; ask the study's researchers"
            ) from None
        return joined

    def scope_of(self, rater: str | None) -> StudyScope | None:
        """The study scope of the participant whose rater is `rater`; None for every other rater (logins)."""
        if rater is None or study_of_rater(rater) is None:
            return None
        with self._lock:
            known = self._scopes.get(rater)
        if known is not None:
            return known
        found = self._database.studies.participant_of(rater)
        if found is None:
            return None
        study = self._database.studies.get(found.study_id)
        scope = StudyScope(study.id, found.participant, study.dataset, study.tasks_per_participant, study.gold_rate)
        with self._lock:
            self._scopes[rater] = scope
        return scope

    def is_participant(self, rater: str | None) -> bool:
        """Whether `rater` is a study participant's rater."""
        return self.scope_of(rater) is not None

    def finish(self, rater: str) -> Completion:
        """Mark the participant finished (once) and return what they get."""
        scope = self._require(rater)
        self._database.studies.finish(scope.study_id, scope.participant)
        return self.completion_of(scope)

    def finished(self, rater: str) -> Completion | None:
        """What the participant gets when they have finished; None while they have not (or are no participant)."""
        scope = self.scope_of(rater)
        if scope is None:
            return None
        found = self._database.studies.participant_of(rater)
        return self.completion_of(scope) if found is not None and found.finished_at is not None else None

    def completion_of(self, scope: StudyScope) -> Completion:
        study = self._database.studies.get(scope.study_id)
        return Completion(study.completion_code, study.redirect_url)

    def _require(self, rater: str) -> StudyScope:
        scope = self.scope_of(rater)
        if scope is None:
            from .users import AccessDenied

            raise AccessDenied("this is no study participant")
        return scope


def check_redirect_url(url: str) -> str:
    """`url` when it is an absolute http(s) URL with a host and no spaces (InputError otherwise)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in url) or len(url) > 2000:
        raise InputError(
            "the redirect URL must be a whole http(s) address of at most 2000 characters, e.g. "
            "https://app.prolific.com/submissions/complete?cc=CRWD4821"
        )
    return url


def _study_id(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"a study is named by its id, a whole number >= 1; got {value!r}")
    return value
