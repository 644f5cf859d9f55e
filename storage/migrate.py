"""Schema versions: bring a database to the newest Alembic revision, refuse one from a newer program.

Alembic's migration scripts live in `storage/migrations/versions`. `ensure_schema()` runs inside one
write transaction (`BEGIN IMMEDIATE` on SQLite, an advisory lock on PostgreSQL), so several processes
opening the same fresh database at once migrate it exactly once.

On SQLite, migrations that alter a table recreate it (copy, drop, rename), which foreign keys would
refuse while other tables point at it; `migration_connection()` turns foreign-key enforcement off for the
migration (SQLite's documented procedure), checks every foreign key with `PRAGMA foreign_key_check`
before committing, and turns enforcement back on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from .engine import WRITE_OPTION
from .errors import NotAMascDatabase, SchemaTooNew
from .schema import Base

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
ALEMBIC_INI = Path(__file__).resolve().parent / "alembic.ini"
_PG_MIGRATION_LOCK = 0x4D615343  # "MaSC": advisory lock id serialising migrations on PostgreSQL


def alembic_config(connection: sa.Connection | None = None) -> Config:
    """Alembic `Config` for our migrations; with `connection`, commands run on it (inside its transaction)."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@contextmanager
def migration_connection(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection inside one write transaction for running migrations (committed when the block ends).

    SQLite: foreign keys are off during the transaction and checked in full before the commit (a violation
    raises `sa.exc.IntegrityError` and rolls everything back); they are on again afterwards."""
    with engine.connect().execution_options(**{WRITE_OPTION: True}) as conn:
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:  # on the driver connection: the pragma only takes effect outside a transaction
            _driver_execute(conn, "PRAGMA foreign_keys = OFF")
        try:
            with conn.begin():
                yield conn
                if sqlite:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
                    if broken:
                        raise sa.exc.IntegrityError(
                            "PRAGMA foreign_key_check",
                            None,
                            Exception(f"migration left {len(broken)} broken foreign key(s), e.g. {broken[0]}"),
                        )
        finally:
            if sqlite:
                _driver_execute(conn, "PRAGMA foreign_keys = ON")


def _driver_execute(conn: sa.Connection, sql: str) -> None:
    """Run `sql` on the DB-API connection under `conn`, outside SQLAlchemy's transaction handling."""
    driver = conn.connection.driver_connection
    if driver is None:  # only an invalidated connection has none
        raise sa.exc.InvalidRequestError(f"cannot run {sql!r}: the connection has been invalidated")
    driver.execute(sql)


def head_revision() -> str:
    """The newest revision this program knows."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, f"no migrations found under {MIGRATIONS_DIR}"
    return head


def current_revision(engine: sa.Engine) -> str | None:
    """The database's revision, or None when it has no schema yet."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def ensure_schema(engine: sa.Engine) -> str:
    """Upgrade `engine`'s database to the head revision; return that revision.

    Raises SchemaTooNew if the database carries a revision this program does not know (written by a
    newer version), NotAMascDatabase if it has tables but no revision.
    """
    with migration_connection(engine) as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        _check_known(conn, engine)
        command.upgrade(alembic_config(conn), "head")
    return head_revision()


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    """Upgrade to `revision` (default head) in one transaction."""
    with migration_connection(engine) as conn:
        _check_known(conn, engine)
        command.upgrade(alembic_config(conn), revision)


def downgrade(engine: sa.Engine, revision: str) -> None:
    """Downgrade to `revision` (`base` removes every table) in one transaction. Destroys data."""
    with migration_connection(engine) as conn:
        _check_known(conn, engine)
        command.downgrade(alembic_config(conn), revision)


def check_models_match(engine: sa.Engine) -> None:
    """Alembic `check`: raise `alembic.util.exc.AutogenerateDiffsDetected` if models and migrations differ."""
    with engine.connect() as conn, conn.begin():
        command.check(alembic_config(conn))


def _check_known(conn: sa.Connection, engine: sa.Engine) -> None:
    current = MigrationContext.configure(conn).get_current_heads()
    script = ScriptDirectory.from_config(alembic_config())
    known = {rev.revision for rev in script.walk_revisions()}
    unknown = [rev for rev in current if rev not in known]
    where = engine.url.render_as_string(hide_password=True)
    if unknown:
        raise SchemaTooNew(
            f"database {where} has schema revision {', '.join(unknown)}, which this version of masc-ui does "
            f"not know (newest known: {script.get_current_head()}); it was written by a newer version. "
            f"Upgrade masc-ui, or point DATABASE_URL / the data directory at another database."
        )
    if not current:
        ours = set(Base.metadata.tables)
        present = set(sa.inspect(conn).get_table_names()) - {"alembic_version"}
        if present & ours:
            raise NotAMascDatabase(
                f"database {where} has tables ({', '.join(sorted(present & ours)[:5])}) but no schema "
                f"revision; it was not created by masc-ui migrations. Use an empty database."
            )
