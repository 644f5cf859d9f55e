"""Shared fixtures: tiny demo checkpoints (built once per session), demo settings, the shared real data."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Gradio's file cache of this test run alone: an app that closes deletes the cached files it made (`delete_cache`),
# and Gradio names them by content, so an app of another test run on the same machine (the default is one shared
# /tmp/gradio) would delete the example images an app of this run still shows ("upload expired" in a browser test).
_GRADIO_CACHE = tempfile.TemporaryDirectory(prefix="masc-tests-gradio-")
os.environ.setdefault("GRADIO_TEMP_DIR", _GRADIO_CACHE.name)


@pytest.fixture(scope="session")
def demo_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder holding every tiny demo checkpoint, written through `masc-ui demo-weights`' code path."""
    from masc_ui.models.demo import write_demo_weights

    root = tmp_path_factory.mktemp("demo-weights")
    write_demo_weights(root)
    return root


@pytest.fixture()
def demo_settings(demo_weights: Path, tmp_path: Path):
    from masc_ui.settings import Settings

    return Settings(
        profile="demo", demo_weights_dir=demo_weights, device="cpu", dtype="float32", data_dir=tmp_path / "data"
    )


POSTGRES_ENV = "MASC_TEST_POSTGRES_URL"


class PostgresSchemas:
    """Creates a throw-away schema per test on the server named by MASC_TEST_POSTGRES_URL."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.admin = sa.create_engine(base_url, isolation_level="AUTOCOMMIT")
        self.created: list[str] = []

    def new_url(self) -> str:
        name = f"test_{uuid.uuid4().hex[:16]}"
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {name}")
        self.created.append(name)
        url = sa.engine.make_url(self.base_url).update_query_dict({"options": f"-csearch_path={name}"})
        return url.render_as_string(hide_password=False)

    def drop_all(self) -> None:
        with self.admin.connect() as conn:
            for name in self.created:
                conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        self.admin.dispose()


@pytest.fixture(scope="session")
def postgres_base_url() -> str:
    """The PostgreSQL server of the tests (MASC_TEST_POSTGRES_URL), or skip with how to start one."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(
            f"{POSTGRES_ENV} is not set; run `export {POSTGRES_ENV}=$(bash .ci/postgres.sh | tail -1)` "
            f"to run the PostgreSQL tests"
        )
    return url


@pytest.fixture()
def pg_schemas(postgres_base_url: str) -> Iterator[PostgresSchemas]:
    schemas = PostgresSchemas(postgres_base_url)
    yield schemas
    schemas.drop_all()


@pytest.fixture(
    params=[pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)]
)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture()
def database_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """None (SQLite in the test's data dir) or the URL of a fresh PostgreSQL schema (dropped afterwards)."""
    if backend == "sqlite":
        return None
    return request.getfixturevalue("pg_schemas").new_url()


@pytest.fixture()
def postgres_url(pg_schemas: PostgresSchemas) -> str:
    """The URL of a fresh PostgreSQL schema (dropped afterwards); skips when no server is configured."""
    return pg_schemas.new_url()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (../shared/data next to the project)")
    return SHARED_DATA


_REQUIRED = {
    # marker: (env var that makes it required, text of the skip that means "the service is missing")
    "postgres": ("MASC_REQUIRE_POSTGRES", "MASC_TEST_POSTGRES_URL is not set"),
    "e2e": ("MASC_REQUIRE_E2E", "Chromium not found"),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In CI (.ci/run sets MASC_REQUIRE_POSTGRES / MASC_REQUIRE_E2E) the server and browser tests must run:
    a missing server or browser is a failure there, not a silent skip. Other skips (e.g. no shared data) stay skips."""
    required = {m for m, (env, _) in _REQUIRED.items() if os.environ.get(env)}
    for item in items:
        for marker in required & {m.name for m in item.iter_markers()}:
            item.user_properties.append(("required", marker))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped:
        return
    for marker in (v for k, v in item.user_properties if k == "required"):
        if _REQUIRED[marker][1] in str(report.longrepr):
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid}: {marker} tests are required here (MASC_REQUIRE_{marker.upper()} is "
                f"set) but were skipped: {report.longrepr}"
            )
            return
