"""Fixtures of the importer tests (the tree builders live in dataset_trees.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
from dataset_trees import write_dreambench


@pytest.fixture()
def dreambench_tree(tmp_path: Path) -> Path:
    return write_dreambench(tmp_path / "dreambench_plus")


@pytest.fixture(params=[pytest.param("sqlite", id="sqlite"),
                        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest):
    """None (SQLite in the test's data dir) or the URL of a fresh PostgreSQL schema (dropped afterwards);
    PostgreSQL runs when MASC_TEST_POSTGRES_URL is set (`export MASC_TEST_POSTGRES_URL=$(bash .ci/postgres.sh
    | tail -1)`), else skips with that reason."""
    if request.param == "sqlite":
        yield None
        return
    import os
    import uuid

    import sqlalchemy as sa

    base = os.environ.get("MASC_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("MASC_TEST_POSTGRES_URL is not set; run `export MASC_TEST_POSTGRES_URL=$(bash .ci/postgres.sh "
                    "| tail -1)` to run the PostgreSQL tests")
    name = f"test_{uuid.uuid4().hex[:16]}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {name}")
    try:
        yield sa.engine.make_url(base).update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(
            hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        admin.dispose()
