"""Units of work with retries: the only place sessions are opened and transient lock errors absorbed.

`write(fn)` runs `fn(session)` in a write transaction (`BEGIN IMMEDIATE` on SQLite) and commits; if the
database is locked/busy (SQLite) or the server reports a serialization failure or deadlock
(PostgreSQL), the transaction is rolled back and `fn` runs again from the start, with jittered
backoff, until `max_wait_s` has passed; then StorageBusy is raised. Errors of any other kind roll back
and propagate unchanged. `fn` must therefore only touch the database (no side effects that must not
repeat) and return plain records, never ORM objects.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from .engine import WRITE_OPTION
from .errors import DatabaseCorrupt, OutOfSpace, StorageBusy, StorageError

T = TypeVar("T")

_SQLITE_TRANSIENT = ("database is locked", "database is busy", "database table is locked")
_PG_TRANSIENT = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available


_SQLITE_FULL = ("database or disk is full",)
_PG_FULL = {"53100"}  # disk_full
_SQLITE_CORRUPT = ("database disk image is malformed", "file is not a database", "malformed database schema")


def hard_failure(exc: DBAPIError, engine: sa.Engine) -> StorageError | None:
    """The storage error a database failure really is, when it is one the user can act on: `OutOfSpace` (the disk
    holding the SQLite file, or the server's disk, is full) or `DatabaseCorrupt` (a damaged SQLite file); None
    for anything else."""
    message = str(exc.orig).lower()
    sqlite = engine.dialect.name == "sqlite"
    where = str(engine.url.database or "") if sqlite else "the database server's data"
    if getattr(exc.orig, "sqlstate", None) in _PG_FULL or (sqlite and any(t in message for t in _SQLITE_FULL)):
        directory = str(Path(where).parent) if sqlite else where
        return OutOfSpace(directory, str(exc.orig))
    if sqlite and any(t in message for t in _SQLITE_CORRUPT):
        return DatabaseCorrupt(where, str(exc.orig))
    return None


def is_transient(exc: BaseException) -> bool:
    """True for lock/serialization errors after which re-running the whole transaction is correct."""
    if not isinstance(exc, DBAPIError) or exc.connection_invalidated:
        return False
    orig = exc.orig
    if getattr(orig, "sqlstate", None) in _PG_TRANSIENT:
        return True
    message = str(orig).lower()
    return any(text in message for text in _SQLITE_TRANSIENT)


class Transactions:
    """Opens read and write sessions on one engine and retries transient failures."""

    def __init__(self, engine: sa.Engine, *, max_wait_s: float = 120.0) -> None:
        self.engine = engine
        self.max_wait_s = max_wait_s
        # Reads see one snapshot (several queries, e.g. an export or a dump, agree with each other):
        # SQLite's read transactions already do; PostgreSQL needs REPEATABLE READ for it. There a read is also
        # READ ONLY and ends with COMMIT, not ROLLBACK: the two are the same for a transaction that cannot write,
        # but psycopg forgets every prepared statement of the connection on a ROLLBACK (and sends DEALLOCATE
        # ALL), so the statements run on every rating answer were prepared anew each time and never reused.
        postgresql = engine.dialect.name == "postgresql"
        read_engine = (
            engine.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            if postgresql
            else engine
        )
        self._commit_reads = postgresql
        self._read = sessionmaker(read_engine, expire_on_commit=False, autoflush=True)
        self._write = sessionmaker(
            engine.execution_options(**{WRITE_OPTION: True}), expire_on_commit=False, autoflush=True
        )
        # SQLite has one writer at a time anyway: queueing this process's writers on a lock avoids
        # them polling SQLite's busy handler (which sleeps in coarse steps) against each other.
        self._write_lock = threading.Lock() if engine.dialect.name == "sqlite" else contextlib.nullcontext()
        self.retries = 0
        """How many transactions were re-run after a transient error (for tests and benchmarks)."""

    def write(self, fn: Callable[[Session], T]) -> T:
        """Run `fn` in a write transaction, commit, return its result."""
        with self._write_lock:
            return self._run(self._write, fn)

    def read(self, fn: Callable[[Session], T]) -> T:
        """Run `fn` in a read-only snapshot (rolled back at the end on SQLite; on PostgreSQL a READ ONLY
        transaction, committed)."""
        return self._run(self._read, fn, commit=self._commit_reads)

    def _run(self, factory: sessionmaker[Session], fn: Callable[[Session], T], *, commit: bool = True) -> T:
        deadline = time.monotonic() + self.max_wait_s
        delay = 0.002
        while True:
            try:
                with factory() as session:  # closing the session rolls back whatever was not committed
                    result = fn(session)
                    if commit:
                        session.commit()
                    return result
            except DBAPIError as exc:
                if not is_transient(exc):
                    hard = hard_failure(exc, self.engine)
                    if hard is not None:
                        raise hard from exc
                    raise
                if time.monotonic() + delay > deadline:
                    raise StorageBusy(
                        f"the database stayed locked by other writers for more than {self.max_wait_s:.0f} s "
                        f"({type(exc.orig).__name__}); another process may hold a long transaction. "
                        f"Retry later, or move to PostgreSQL (DATABASE_URL) for many concurrent writers."
                    ) from exc
                self.retries += 1
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.25)
