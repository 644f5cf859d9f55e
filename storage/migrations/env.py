"""Alembic environment: runs migrations on a connection handed in by `storage.migrate`, or on the URL
given as `-x url=...` / `DATABASE_URL` when Alembic is run from the command line."""

from __future__ import annotations

import os

import sqlalchemy as sa
from alembic import context

from storage.engine import create_engine
from storage.migrate import migration_connection
from storage.schema import Base

config = context.config


def _run(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get("DATABASE_URL")
    if not url:
        raise SystemExit(
            "no database URL: pass `-x url=sqlite:////path/masc.sqlite3` (or a PostgreSQL URL) or set DATABASE_URL"
        )
    return url


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=Base.metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
elif (connection := config.attributes.get("connection")) is not None:
    _run(connection)
else:
    engine = create_engine(_url())
    try:
        with migration_connection(engine) as conn:
            _run(conn)
    finally:
        engine.dispose()
