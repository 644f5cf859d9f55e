"""Storage fixtures: a fresh store per test on SQLite and, when MASC_TEST_POSTGRES_URL is set, on
PostgreSQL (each test in its own schema, dropped afterwards)."""
from __future__ import annotations

import os
import uuid
import zlib
from pathlib import Path
from typing import Callable, Iterator

import pytest
import sqlalchemy as sa

from storage import Store, open_store

POSTGRES_ENV = "MASC_TEST_POSTGRES_URL"


def png_bytes(seed: int, size: int = 4) -> bytes:
    """A small, valid grayscale PNG whose pixels depend on `seed` (distinct seeds -> distinct bytes)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    header = size.to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0])
    rows = b"".join(b"\x00" + bytes((seed * 7 + x + y * size) % 256 for x in range(size)) for y in range(size))
    seed_chunk = chunk(b"tEXt", b"seed\x00" + str(seed).encode())
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + seed_chunk + chunk(b"IDAT", zlib.compress(rows)) \
        + chunk(b"IEND", b"")


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
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set; run `export {POSTGRES_ENV}=$(bash .ci/postgres.sh | tail -1)` "
                    f"to run the PostgreSQL tests")
    return url


@pytest.fixture()
def pg_schemas(postgres_base_url: str) -> Iterator[PostgresSchemas]:
    schemas = PostgresSchemas(postgres_base_url)
    yield schemas
    schemas.drop_all()


BACKENDS = [pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture()
def database_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """None (SQLite in the test's data dir) or a fresh PostgreSQL schema URL."""
    if backend == "sqlite":
        return None
    return request.getfixturevalue("pg_schemas").new_url()


@pytest.fixture()
def make_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Store]]:
    """Factory: each call opens a store on a NEW empty database (and data dir) of the test's backend."""
    opened: list[Store] = []

    def make(name: str = "data") -> Store:
        url = None if backend == "sqlite" else request.getfixturevalue("pg_schemas").new_url()
        store = open_store(url, tmp_path / name)
        opened.append(store)
        return store
    yield make
    for store in opened:
        store.close()


@pytest.fixture()
def store(make_store: Callable[..., Store]) -> Store:
    return make_store()


@pytest.fixture()
def png() -> Callable[..., bytes]:
    """`png(seed)` -> bytes of a small valid PNG, distinct per seed."""
    return png_bytes


@pytest.fixture()
def add_sample(store: Store) -> Callable[..., "object"]:
    """Add a sample with fresh distinct images; keyword arguments override the defaults."""
    counter = iter(range(10_000_000))

    def add(dataset: str = "ds", n_refs: int = 1, **kwargs: object):
        n = next(counter)
        refs = [store.images.add(png_bytes(1_000 + n * 10 + i)) for i in range(n_refs)]
        out = store.images.add(png_bytes(n))
        fields = dict(references=refs, output=out, prompt=f"a photo of sks dog #{n}", subject="dog")
        fields.update(kwargs)
        return store.samples.add(dataset, **fields)
    return add
