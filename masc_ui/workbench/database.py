"""The database as the use cases see it: one `storage.Store` per process, opened on first use, its errors
turned into `StoreError` (a `WorkbenchError` the UI and CLI show as they are), and database upkeep.

Only the use cases in this package (and the importers' `masc_ui.datasets.ingest`) touch `storage`.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

from ..errors import InputError, WorkbenchError
from ..settings import Settings

if TYPE_CHECKING:
    from storage import Store

T = TypeVar("T")


class StoreError(WorkbenchError):
    """The database or blob store refused or failed an operation; the message says what and what to do."""


def guard(fn: Callable[[], T]) -> T:
    """`fn()`, with storage errors turned into `StoreError`."""
    from storage import StorageError

    try:
        return fn()
    except StorageError as exc:
        raise StoreError(str(exc)) from exc


class Database:
    """The store of `settings` (`database_url`, or SQLite in `data_dir`), shared by every session and
    thread of the process (the `storage.Store` is thread-safe). Pass `store` to use one already open."""

    def __init__(self, settings: Settings, store: "Store | None" = None) -> None:
        self._settings = settings
        self._store = store
        self._lock = threading.Lock()

    @classmethod
    def of(cls, store: "Store") -> "Database":
        """The use cases' view of a `storage.Store` already open (closing it stays with its owner)."""
        return cls(Settings(), store)

    @property
    def store(self) -> "Store":
        """The `storage.Store`, opened (creating or upgrading the schema) on first use."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    from storage import open_store

                    try:
                        self._store = guard(lambda: open_store(self._settings.database_url,
                                                               self._settings.data_dir))
                    except StoreError as exc:
                        raise StoreError(f"database: {exc}") from exc
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, fn: Callable[["Store"], T]) -> T:
        """`fn(store)` with storage errors turned into `StoreError`."""
        return guard(lambda: fn(self.store))

    def datasets(self) -> list[str]:
        """Names of the stored datasets, sorted."""
        return [d.name for d in self.run(lambda store: store.samples.datasets())]

    def require_dataset(self, name: str) -> None:
        """InputError naming the known datasets when `name` is not one of them."""
        known = self.datasets()
        if name not in known:
            raise InputError(f"dataset {name!r} is not in the database; known datasets: "
                             f"{', '.join(known) or 'none yet'} (import one with `masc-ui import`)")

    # --- upkeep (`masc-ui db`) -------------------------------------------------------------------------------

    def upgrade(self, user: str | None) -> str:
        """Create or upgrade the schema to the newest revision; the revision."""
        from storage import upgrade_database

        return guard(lambda: upgrade_database(self._settings.database_url, self._settings.data_dir))

    def check(self, user: str | None) -> str:
        """The integrity check's result (`ok` when healthy)."""
        return self.run(lambda store: store.integrity_check())

    def dump(self, user: str | None, target: Path, *, include_blobs: bool = False) -> None:
        """Every row of every table as JSON into `target` (with the image/mask bytes when `include_blobs`)."""
        self.run(lambda store: store.dumps.dump(target, include_blobs=include_blobs))

    def restore(self, user: str | None, source: Path) -> None:
        """Load a dump into the (empty) database."""
        if not Path(source).is_file():
            raise InputError(f"restore: {source} does not exist or is not a file")
        try:
            self.run(lambda store: store.dumps.restore(source))
        except StoreError as exc:
            raise StoreError(f"restore of {source}: {exc}") from exc
