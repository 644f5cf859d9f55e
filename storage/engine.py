"""SQLAlchemy engines: SQLite with durable, concurrent-safe settings, or any URL (PostgreSQL for teams).

SQLite settings, applied on every new connection:
- `journal_mode=WAL`: readers never block the writer and the writer never blocks readers;
- `synchronous=FULL`: a commit is on disk (WAL fsynced) before it returns, so an acknowledged rating
  survives a crash or power cut;
- `foreign_keys=ON`; `busy_timeout`: wait for a lock instead of failing at once.

pysqlite's own transaction handling (which begins transactions lazily, and never for SELECTs) is turned
off; SQLAlchemy's `begin` event emits `BEGIN IMMEDIATE` for write transactions (so two writers never
both read and then fail to upgrade their lock) and a plain deferred `BEGIN` for read transactions.
"""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

RECOMMENDED_SQLITE = (3, 37, 0)
"""SQLite library version the README recommends; older libraries work but get a warning."""
BUSY_TIMEOUT_MS = 10_000
"""How long one SQLite statement waits for a lock before the repository's retry loop takes over."""
SQLITE_FILENAME = "masc.sqlite3"
"""Name of the SQLite database inside the data directory."""
WRITE_OPTION = "masc_write"
"""Execution option that marks a connection's transactions as writes (`BEGIN IMMEDIATE` on SQLite)."""


POOL_SIZE = 24
"""Connections an engine keeps open once they were needed (SQLAlchemy's default is 5). On PostgreSQL every answer of
every rater runs in a worker thread of its own (Gradio runs up to 40 at once), each holding a connection while it
reads or writes; with 5 kept, a sixth concurrent user opened a new connection and closed it again at the end of its
transaction: a new server process each time, and the statements prepared on the connection
are lost with it: under rating load (16 raters, `bench/rating_load.py`) connecting and closing took about 5% of the
app's time, besides the server's. At most `POOL_SIZE + POOL_OVERFLOW` = 40 (the worker threads) are open at once."""
POOL_OVERFLOW = 16
"""Connections opened beyond `POOL_SIZE` when more are used at once (closed when returned)."""


class OldSQLiteWarning(UserWarning):
    """The SQLite library linked into Python is older than the recommended version."""


def sqlite_url(data_dir: Path) -> str:
    """URL of the embedded SQLite database under `data_dir`."""
    return f"sqlite:///{(Path(data_dir) / SQLITE_FILENAME).resolve()}"


def warn_if_old_sqlite(version: str = sqlite3.sqlite_version) -> bool:
    """Warn (`OldSQLiteWarning`) when `version` ("3.31.1") is older than `RECOMMENDED_SQLITE`; True if it is."""
    parts = tuple(int(p) for p in version.split(".")[:3])
    if parts >= RECOMMENDED_SQLITE:
        return False
    wanted = ".".join(map(str, RECOMMENDED_SQLITE))
    warnings.warn(
        f"SQLite library {version} is older than the recommended {wanted}; storage works but is less "
        f"tested there. Upgrade Python/libsqlite3, or use PostgreSQL through DATABASE_URL.",
        OldSQLiteWarning,
        stacklevel=3,
    )
    return True


def create_engine(url: str) -> sa.Engine:
    """An engine for `url` with the SQLite settings above (or a pre-pinging pool for server databases), keeping up
    to `POOL_SIZE` connections."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(parsed, pool_pre_ping=True, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW)
    if parsed.database in (None, "", ":memory:"):
        raise ValueError(f"SQLite URL {url!r} names no file; in-memory databases are not supported")
    warn_if_old_sqlite()
    engine = sa.create_engine(
        parsed,
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        pool_size=POOL_SIZE,
        max_overflow=POOL_OVERFLOW,
    )
    _install_sqlite_hooks(engine)
    return engine


def _install_sqlite_hooks(engine: sa.Engine) -> None:
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy's begin hook below owns transactions
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = FULL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(connection: sa.Connection) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
