"""The database as the use cases see it: one `storage.Store` per process, opened on first use, its errors
turned into `StoreError` (a `WorkbenchError` the UI and CLI show as they are), and database upkeep.

Typed access: each repository of the store is a property (`database.samples`, `database.metrics`, ...) typed as
the repository class itself, so `database.samples.get(7)` is a `storage.SampleRecord` to the type checker; every
method call on it runs inside `guard` (storage errors become `StoreError`). A read that must be one transaction is
one repository method. `run(fn)` hands the whole `storage.Store` to a function that works across repositories
(the importers' `ingest_all`, the image-folder export, the agreement data).

Only the use cases in this package touch `storage`.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..errors import InputError, WorkbenchError
from ..settings import Settings
from .users import Accounts

if TYPE_CHECKING:
    from storage import SampleRecord, Store
    from storage.repo.checks import IntegrityReport
    from storage.repo.dump import DumpRepository
    from storage.repo.exports import ExportRepository
    from storage.repo.gold import GoldRepository
    from storage.repo.guides import GuideRepository
    from storage.repo.images import ImageRepository
    from storage.repo.masks import MaskRepository
    from storage.repo.metrics import MetricRepository
    from storage.repo.pair_gold import PairGoldRepository
    from storage.repo.pairwise import PairwiseRepository
    from storage.repo.ratings import RatingRepository
    from storage.repo.recording import RecordingRepository
    from storage.repo.samples import SampleRepository
    from storage.repo.studies import StudyRepository
    from storage.repo.tasks import TaskRepository
    from storage.repo.views import ViewRepository
    from storage.salvage import SalvageResult

T = TypeVar("T")
Repository = TypeVar("Repository")


log = logging.getLogger(__name__)

_SERVER_PATH = re.compile(r"[a-z]+(?:\+[a-z]+)?://[^\s'\",;()]+|(?:[A-Za-z]:)?(?:/[^\s'\",;:()]+){2,}")
"""Database URLs and absolute file paths inside a message (hidden from users of the web app)."""


class StoreError(WorkbenchError):
    """The database or blob store refused or failed an operation. `str()` is the message for users (no SQL, no
    server path); `detail` the full one for the server's log and the local command line."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail or message


def public_message(text: str) -> str:
    """`text` with database URLs and server paths replaced by `<server path>`."""
    return _SERVER_PATH.sub("<server path>", text)


def guard(fn: Callable[[], T]) -> T:
    """`fn()`, with storage errors turned into `StoreError` (paths hidden from the message users see), and any
    other database failure (SQL the server refused, a read-only file) into a StoreError that shows no SQL: the
    details go to the server's log."""
    from sqlalchemy.exc import SQLAlchemyError

    from storage import StorageError

    try:
        return fn()
    except StorageError as exc:
        raise StoreError(public_message(str(exc)), str(exc)) from exc
    except SQLAlchemyError as exc:
        log.exception("database failure")
        text = str(getattr(exc, "orig", exc)).lower()
        if "readonly" in text or "read-only" in text or "permission denied" in text:
            message = (
                "the database is read-only for the server (its data directory or database user may not "
                "write); nothing was stored. Tell the administrator."
            )
        else:
            message = (
                f"the database refused or failed the operation ({type(exc).__name__}); nothing was stored. "
                "The server's log has the details."
            )
        raise StoreError(message, f"{message} [{exc}]") from exc


class _ErrorTranslating:
    """A repository seen through `guard`: attributes as they are, every method call with storage errors turned
    into `StoreError`."""

    __slots__ = ("_repository",)

    def __init__(self, repository: object) -> None:
        self._repository = repository

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._repository, name)
        if not callable(found):
            return found

        @functools.wraps(found)
        def call(*args: Any, **kwargs: Any) -> Any:
            return guard(lambda: found(*args, **kwargs))

        return call


def translating_errors(repository: Repository) -> Repository:
    """`repository` with each method call inside `guard`, typed as the repository itself."""
    return cast("Repository", _ErrorTranslating(repository))


class Database:
    """The store of `settings` (`database_url`, or SQLite in `data_dir`), shared by every session and
    thread of the process (the `storage.Store` is thread-safe). Pass `store` to use one already open."""

    def __init__(self, settings: Settings, store: Store | None = None, *, accounts: Accounts | None = None) -> None:
        self._settings = settings
        self._store = store
        self._lock = threading.Lock()
        self.accounts = accounts if accounts is not None else Accounts()
        """The logins and role rules every use case over this database applies (none: local, acting as admin)."""

    @classmethod
    def of(cls, store: Store) -> Database:
        """The use cases' view of a `storage.Store` already open (closing it stays with its owner)."""
        return cls(Settings(), store)

    @property
    def store(self) -> Store:
        """The `storage.Store`, opened (creating or upgrading the schema) on first use."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    from storage import open_store

                    try:
                        self._store = guard(lambda: open_store(self._settings.database_url, self._settings.data_dir))
                    except StoreError as exc:
                        raise StoreError(f"database: {exc}", f"database: {exc.detail}") from exc
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)` with storage errors turned into `StoreError`: for work across several repositories."""
        return guard(lambda: fn(self.store))

    # --- the repositories, typed, their errors translated ------------------------------------------------------

    @property
    def images(self) -> ImageRepository:
        return translating_errors(self.store.images)

    @property
    def samples(self) -> SampleRepository:
        return translating_errors(self.store.samples)

    @property
    def masks(self) -> MaskRepository:
        return translating_errors(self.store.masks)

    @property
    def metrics(self) -> MetricRepository:
        return translating_errors(self.store.metrics)

    @property
    def recording(self) -> RecordingRepository:
        return translating_errors(self.store.recording)

    @property
    def ratings(self) -> RatingRepository:
        return translating_errors(self.store.ratings)

    @property
    def tasks(self) -> TaskRepository:
        return translating_errors(self.store.tasks)

    @property
    def pairwise(self) -> PairwiseRepository:
        return translating_errors(self.store.pairwise)

    @property
    def views(self) -> ViewRepository:
        return translating_errors(self.store.views)

    @property
    def exports(self) -> ExportRepository:
        return translating_errors(self.store.exports)

    @property
    def dumps(self) -> DumpRepository:
        return translating_errors(self.store.dumps)

    @property
    def gold(self) -> GoldRepository:
        return translating_errors(self.store.gold)

    @property
    def pair_gold(self) -> PairGoldRepository:
        return translating_errors(self.store.pair_gold)

    @property
    def studies(self) -> StudyRepository:
        return translating_errors(self.store.studies)

    @property
    def guides(self) -> GuideRepository:
        return translating_errors(self.store.guides)

    # --- reads shared by several use cases ---------------------------------------------------------------------

    def datasets(self) -> list[str]:
        """Names of the stored datasets, sorted."""
        return [d.name for d in self.samples.datasets()]

    def sample(self, sample_id: int, *, missing: str) -> SampleRecord:
        """The stored sample record `sample_id`; InputError "sample #N <missing>" when there is none (`missing` says
        what the user can do, e.g. "is not in the database: type the id of a row of the table")."""
        from storage import NotFound

        try:
            return self.samples.get(sample_id)
        except StoreError as exc:
            if isinstance(exc.__cause__, NotFound):
                raise InputError(f"sample #{sample_id} {missing}") from None
            raise

    def require_dataset(self, name: str) -> None:
        """InputError naming the known datasets when `name` is not one of them."""
        known = self.datasets()
        if name not in known:
            raise InputError(
                f"dataset {name!r} is not in the database; known datasets: "
                f"{', '.join(known) or 'none yet'} (import one with `masc-ui import`)"
            )

    # --- upkeep (`masc-ui db`) -------------------------------------------------------------------------------

    def upgrade(self, user: str | None) -> str:
        """Create or upgrade the schema to the newest revision; the revision."""
        from storage import upgrade_database

        self.accounts.require_admin(user, "upgrading the database")

        return guard(lambda: upgrade_database(self._settings.database_url, self._settings.data_dir))

    def check(self, user: str | None, *, deep: bool = False) -> IntegrityReport:
        """The integrity check (`storage.repo.checks.IntegrityReport`: `.ok`, `.lines()`): the database's own
        check, every blob file present with its recorded size (and, `deep`, its SHA-256), samples without values."""
        self.accounts.require_admin(user, "checking the database")
        return guard(lambda: self.store.check(deep=deep))

    def recount(self, user: str | None) -> int:
        """Repair each sample's stored count of complete ratings from its ratings (what `check` reports after a hand
        edit of the database); how many samples were wrong."""
        self.accounts.require_admin(user, "repairing the counts of complete ratings")
        return self.ratings.recount_complete()

    def dump(self, user: str | None, target: Path, *, include_blobs: bool = False) -> None:
        """Every row of every table as JSON into `target` (with the image/mask bytes when `include_blobs`)."""
        self.accounts.require_admin(user, "dumping the database")
        self.dumps.dump(target, include_blobs=include_blobs)

    def salvage(self, user: str | None, target: Path) -> SalvageResult:
        """Recover what is readable of this process's SQLite database file into the new file `target`
        (`storage.salvage`: the sqlite3 command-line tool's `.recover` when on PATH, else Python's copy table by
        table); the damaged file is only read, and never opened as a store (it may not open)."""
        from storage.salvage import salvage_sqlite, sqlite_file

        self.accounts.require_admin(user, "salvaging the database")
        return guard(
            lambda: salvage_sqlite(sqlite_file(self._settings.database_url, self._settings.data_dir), Path(target))
        )

    def restore(self, user: str | None, source: Path) -> None:
        """Load a dump into the (empty) database."""
        self.accounts.require_admin(user, "restoring the database")
        if not Path(source).is_file():
            raise InputError(f"restore: {source} does not exist or is not a file")
        try:
            self.dumps.restore(source)
        except StoreError as exc:
            raise StoreError(f"restore of {source}: {exc}", f"restore of {source}: {exc.detail}") from exc
