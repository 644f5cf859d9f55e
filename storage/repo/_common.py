"""Helpers shared by the repositories: argument checks, lookups by name, insert-if-absent, row -> record."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput, NotFound, StorageError
from ..record_types import RaterRecord, RatingRecord, SampleRecord

if TYPE_CHECKING:
    from typing import Unpack

IN_CHUNK = 5000
"""Largest IN (...) list sent at once (SQLite limits bound parameters)."""
INT64_MAX = 2**63 - 1
"""Largest integer any column holds (SQLite INTEGER, PostgreSQL BIGINT); ids and counts are refused above it."""
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
"""Characters no column can hold: NUL (PostgreSQL text refuses it) and lone surrogates (not encodable as UTF-8)."""


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def check_text(value: object, name: str, *, max_len: int, allow_empty: bool = False) -> str:
    """`value` if it is a str of at most `max_len` characters (non-blank unless `allow_empty`)."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    if len(value) > max_len:
        raise InvalidInput(f"{name} is {len(value)} characters long; at most {max_len} are allowed")
    check_storable(value, name)
    return value


def check_storable(value: str, name: str) -> str:
    """`value` unless it holds a character no database column can store (NUL, a lone surrogate such as a
    byte that was not valid UTF-8); InvalidInput naming `name` and the position, without echoing the text."""
    bad = _UNSTORABLE.search(value)
    if bad is not None:
        what = "a NUL character" if bad.group() == "\x00" else "a character that is not valid UTF-8 text"
        raise InvalidInput(f"{name} contains {what} at position {bad.start() + 1}; remove it and try again")
    return value


def check_optional_text(value: object, name: str, *, max_len: int) -> str | None:
    return None if value is None else check_text(value, name, max_len=max_len)


def check_choice(value: object, name: str, choices: Sequence[str]) -> None:
    """InvalidInput unless `value` is one of `choices` (a criterion, the kind of a gold mark)."""
    if value not in choices:
        raise InvalidInput(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def check_int(value: object, name: str, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise InvalidInput(f"{name} must be >= {minimum}, got {value}")
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise InvalidInput(
            f"{name} must fit in 64 bits (at most {INT64_MAX:,}), got a {len(str(abs(value)))}-digit number"
        )
    return value


def check_seconds(value: object, name: str = "seconds_spent") -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InvalidInput(f"{name} must be a finite number of seconds >= 0 (or None), got {value!r}")
    return float(value)


def check_timestamp(value: object, name: str) -> dt.datetime:
    if not isinstance(value, dt.datetime) or value.tzinfo is None:
        raise InvalidInput(f"{name} must be a timezone-aware datetime (e.g. datetime.now(timezone.utc)), got {value!r}")
    return value.astimezone(dt.timezone.utc)


def table_of(model: type[t.Base]) -> sa.Table:
    """The table `model` maps (declarative models type `__table__` as any FROM clause; ours are all tables)."""
    table = model.__table__
    if not isinstance(table, sa.Table):
        raise TypeError(f"{model.__name__} maps {type(table).__name__}, not a table")
    return table


def affected_rows(result: sa.Result[Any]) -> int:
    """How many rows the INSERT/UPDATE/DELETE that gave `result` touched (`Session.execute` is typed to return a
    plain `Result`; for these statements it is a `CursorResult`)."""
    return cast("sa.CursorResult[Any]", result).rowcount


def _dialect_insert(session: Session, target: type[t.Base] | sa.Table) -> postgresql.Insert | sqlite.Insert:
    """INSERT into `target` in the session's dialect (the one that has ON CONFLICT)."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        return postgresql.insert(target)
    if dialect == "sqlite":
        return sqlite.insert(target)
    raise StorageError(f"database dialect {dialect!r} is not supported (use SQLite or PostgreSQL)")


def insert_ignore(session: Session, model: type[t.Base], values: dict[str, Any]) -> bool:
    """INSERT ... ON CONFLICT DO NOTHING; True if a row was inserted (race-free get-or-create)."""
    stmt = _dialect_insert(session, model).values(**values).on_conflict_do_nothing()
    # psycopg reports no rowcount here; RETURNING says whether a row went in
    if session.get_bind().dialect.name == "postgresql":
        return session.execute(stmt.returning(sa.literal_column("1"))).first() is not None
    return bool(affected_rows(session.execute(stmt)))


def insert_returning_id(session: Session, model: type[t.Base], values: dict[str, Any]) -> int | None:
    """INSERT ... ON CONFLICT DO NOTHING RETURNING id: the new row's id, or None when a unique key clashed
    (another writer stored that row first)."""
    stmt = _dialect_insert(session, model).values(**values).on_conflict_do_nothing().returning(table_of(model).c.id)
    found = session.execute(stmt).first()
    return None if found is None else int(found[0])


def insert_ignore_many(session: Session, model: type[t.Base], rows: list[dict[str, Any]]) -> None:
    """INSERT ... ON CONFLICT DO NOTHING of many rows in one statement (rows that clash are left out)."""
    if not rows:
        return
    # One statement without values, run with a list of parameter sets (executemany, batched by SQLAlchemy's
    # "insertmanyvalues" on PostgreSQL): compiled once and cached, where a multi-row VALUES is compiled on every call.
    session.connection().execute(_dialect_insert(session, table_of(model)).on_conflict_do_nothing(), rows)


DATASETS_FOR_RATING = sa.select(t.Dataset.id).where(t.Dataset.for_rating.is_(True))
"""Ids of the datasets marked for rating (`SampleRepository.set_for_rating`): the scope of both kinds of rating
tasks (absolute, `tasks`, and pairwise, `pairwise`) when no dataset is named and only marked datasets count
(`for_rating_only=True`, what the web app asks); a dataset named explicitly is used as it is."""


def dataset_id(session: Session, name: str) -> int:
    found = session.scalar(sa.select(t.Dataset.id).where(t.Dataset.name == name))
    if found is None:
        raise NotFound(f"dataset {name!r} does not exist; create it with store.samples.ensure_dataset({name!r})")
    return found


_RATER_BY_NAME = sa.select(t.Rater.id, t.Rater.username, t.Rater.is_external, t.Rater.created_at).where(
    t.Rater.username == sa.bindparam("username")
)


def rater_row(session: Session, username: str) -> RaterRecord:
    """The rater `username` (NotFound if absent), read as plain columns (every rating event looks its rater up)."""
    check_text(username, "rater", max_len=200)
    row = session.connection().execute(_RATER_BY_NAME, {"username": username}).first()
    if row is None:
        raise NotFound(f"rater {username!r} does not exist; create it with store.ratings.ensure_rater({username!r})")
    return rater_record(row)


_SAMPLE_ID = sa.select(t.Sample.id).where(t.Sample.id == sa.bindparam("sample_id"))


def require_sample(session: Session, sample_id: object) -> int:
    check_int(sample_id, "sample_id", minimum=1)
    if session.connection().execute(_SAMPLE_ID, {"sample_id": sample_id}).first() is None:
        raise NotFound(f"sample #{sample_id} does not exist; list samples with store.samples.list()")
    return sample_id  # type: ignore[return-value]


def chunks(items: Sequence[Any], size: int = IN_CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def rater_record(row: t.Rater | sa.Row[int, str, bool, dt.datetime]) -> RaterRecord:
    return RaterRecord(id=row.id, username=row.username, is_external=row.is_external, created_at=row.created_at)


def rating_record(row: t.Rating, username: str) -> RatingRecord:
    return RatingRecord(
        id=row.id,
        rater=username,
        sample_id=row.sample_id,
        criterion=row.criterion,
        score=row.score,
        status=row.status,
        seconds_spent=row.seconds_spent,
        presentation_order=row.presentation_order,
        note=row.note,
        revision=row.revision,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def sample_filters(
    *,
    dataset: str | None = None,
    method: str | None = None,
    subject: str | None = None,
    sample_ids: Sequence[int] | None = None,
) -> list[sa.ColumnElement[bool]]:
    """WHERE clauses over samples joined with datasets and subjects."""
    where: list[sa.ColumnElement[bool]] = []
    if dataset is not None:
        where.append(t.Dataset.name == dataset)
    if method is not None:
        where.append(t.Sample.method == method)
    if subject is not None:
        where.append(t.Subject.name == subject)
    if sample_ids is not None:
        where.append(t.Sample.id.in_(list(sample_ids)))
    return where


_SAMPLES = (
    sa.select(
        t.Sample.id,
        t.Sample.prompt,
        t.Sample.method,
        t.Sample.seed,
        t.Sample.external_key,
        t.Sample.info,
        t.Sample.created_at,
        t.Dataset.name.label("dataset"),
        t.Subject.name.label("subject"),
        t.Subject.category,
    )
    .join(t.Dataset, t.Dataset.id == t.Sample.dataset_id)
    .join(t.Subject, t.Subject.id == t.Sample.subject_id)
)
"""Samples with their dataset and subject, as plain columns (no ORM objects: they are turned into records)."""
_SAMPLE_BY_ID = _SAMPLES.where(t.Sample.id == sa.bindparam("sample_id"))
_IMAGES_OF = sa.select(
    t.SampleImage.sample_id, t.SampleImage.role, t.SampleImage.position, t.SampleImage.blob_sha256
).where(t.SampleImage.sample_id.in_(sa.bindparam("sample_ids", expanding=True)))


def load_samples(
    session: Session, where: Sequence[sa.ColumnElement[bool]] = (), *, limit: int | None = None, offset: int = 0
) -> list[SampleRecord]:
    """Samples matching `where` (over samples/datasets/subjects), ordered by id, with their images."""
    query = _SAMPLES.where(*where).order_by(t.Sample.id).offset(offset)
    if limit is not None:
        query = query.limit(limit)
    return _sample_records(session, session.connection().execute(query).all())


def load_sample(session: Session, sample_id: int) -> SampleRecord:
    """`load_samples` of one sample by id (NotFound if absent), with statements built once (a rater's every answer
    reads the next task's sample)."""
    found = _sample_records(session, session.connection().execute(_SAMPLE_BY_ID, {"sample_id": sample_id}).all())
    if not found:
        raise NotFound(f"sample #{sample_id} does not exist; list samples with store.samples.list()")
    return found[0]


def _sample_records(session: Session, rows: Sequence[sa.Row[Unpack[tuple[Any, ...]]]]) -> list[SampleRecord]:
    images: dict[int, dict[str, list[tuple[int, str]]]] = {}
    conn = session.connection()
    for part in chunks([row.id for row in rows]):
        for sample_id, role, position, sha in conn.execute(_IMAGES_OF, {"sample_ids": list(part)}):
            images.setdefault(sample_id, {}).setdefault(role, []).append((position, sha))
    out = []
    for row in rows:
        slots = images.get(row.id, {})
        refs = tuple(sha for _, sha in sorted(slots.get("reference", [])))
        output = slots["output"][0][1] if "output" in slots else None  # None: a ratings-only sample
        out.append(
            SampleRecord(
                id=row.id,
                dataset=row.dataset,
                subject=row.subject,
                category=row.category,
                prompt=row.prompt,
                method=row.method,
                seed=row.seed,
                external_key=row.external_key,
                references=refs,
                output=output,
                info=row.info,
                created_at=row.created_at,
            )
        )
    return out
