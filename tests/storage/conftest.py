"""Storage fixtures: a fresh store per test on SQLite and, when MASC_TEST_POSTGRES_URL is set, on
PostgreSQL (each test in its own schema, dropped afterwards)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from storage import Store, open_store
from storage.repo import completion


def png_bytes(seed: int, size: int = 4) -> bytes:
    """A small, valid grayscale PNG whose pixels depend on `seed` (distinct seeds -> distinct bytes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    header = size.to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0])
    rows = b"".join(b"\x00" + bytes((seed * 7 + x + y * size) % 256 for x in range(size)) for y in range(size))
    seed_chunk = chunk(b"tEXt", b"seed\x00" + str(seed).encode())
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + seed_chunk
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture()
def make_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Store]]:
    """Factory: each call opens a store on a NEW empty database (and data dir) of the test's backend."""
    opened: list[Store] = []
    # Asked for before the first store opens, so that the schemas outlive the stores (checked when they close).
    schemas = None if backend == "sqlite" else request.getfixturevalue("pg_schemas")

    def make(name: str = "data") -> Store:
        url = None if schemas is None else schemas.new_url()
        store = open_store(url, tmp_path / name)
        opened.append(store)
        return store

    yield make
    for store in opened:
        try:
            # Every rating write a test made kept the stored counts of complete ratings (schema revision 0006): a
            # writer of ratings that forgets `storage.repo.completion` fails here, in whichever test exercises it.
            assert store.tx.read(completion.mismatches) == [], "a rating write left a wrong count of complete ratings"
        finally:
            store.close()


@pytest.fixture()
def store(make_store: Callable[..., Store]) -> Store:
    return make_store()


@pytest.fixture()
def png() -> Callable[..., bytes]:
    """`png(seed)` -> bytes of a small valid PNG, distinct per seed."""
    return png_bytes


@pytest.fixture()
def add_sample(store: Store) -> Callable[..., object]:
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
