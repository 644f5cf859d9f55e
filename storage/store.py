"""`open_store()`: the one entry point. A `Store` bundles the engine, the blob store and the repositories."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.exc import ArgumentError, DBAPIError

from . import migrate
from .blobs import BlobStore
from .engine import create_engine, sqlite_url
from .errors import DatabaseCorrupt, InvalidInput, StorageError
from .repo.dump import DumpRepository
from .repo.exports import ExportRepository
from .repo.gold import GoldRepository
from .repo.guides import GuideRepository
from .repo.images import ImageRepository
from .repo.masks import MaskRepository
from .repo.metrics import MetricRepository
from .repo.pair_gold import PairGoldRepository
from .repo.pairwise import PairwiseRepository
from .repo.rater_rows import RaterRows
from .repo.ratings import RatingRepository
from .repo.recording import RecordingRepository
from .repo.samples import SampleRepository
from .repo.studies import StudyRepository
from .repo.tasks import TaskRepository
from .repo.views import ViewRepository
from .transactions import Transactions, hard_failure, is_transient

if TYPE_CHECKING:
    from .repo.checks import IntegrityReport

BLOB_DIRNAME = "blobs"
"""Folder of the blob store inside the data directory."""


class Store:
    """Everything persistent. Thread-safe; share one per process. Use as a context manager or `close()`.

    Attributes (each a repository; see its module for the methods):
    `images` (bytes <-> SHA-256), `samples` (datasets, subjects, samples), `masks` (versioned masks),
    `metrics` (metric values with provenance), `recording` (a scored sample's images, sample, masks and values
    in one transaction), `ratings` (raters, ratings, history, external imports),
    `tasks` (next/previous task, progress), `pairwise` (pairwise tasks and judgments, their history, imports
    and export), `views` (browse rows), `exports` (CSV/JSONL), `dumps` (full JSON dump and restore), `gold` (gold tasks' accepted answers),
    `guides` (rating guides, their examples, practice rounds and practice answers), `studies` (crowd studies and their
    participants).
    """

    def __init__(self, engine: sa.Engine, data_dir: Path, *, max_wait_s: float = 120.0) -> None:
        self.engine = engine
        self.data_dir = Path(data_dir)
        self.url = engine.url.render_as_string(hide_password=True)
        self.blobs = BlobStore(self.data_dir / BLOB_DIRNAME)
        self.tx = Transactions(engine, max_wait_s=max_wait_s)
        self.images = ImageRepository(self.tx, self.blobs)
        self.samples = SampleRepository(self.tx)
        self.masks = MaskRepository(self.tx, self.blobs)
        self.metrics = MetricRepository(self.tx)
        raters = RaterRows()
        self.ratings = RatingRepository(self.tx, raters)
        self.recording = RecordingRepository(self.tx, self.blobs)
        self.tasks = TaskRepository(self.tx, raters)
        self.pairwise = PairwiseRepository(self.tx)
        self.views = ViewRepository(self.tx)
        self.exports = ExportRepository(self.tx)
        self.dumps = DumpRepository(self.tx, self.blobs)
        self.gold = GoldRepository(self.tx)
        self.pair_gold = PairGoldRepository(self.tx)
        self.guides = GuideRepository(self.tx)
        self.studies = StudyRepository(self.tx)

    @property
    def backend(self) -> str:
        """`sqlite` or `postgresql`."""
        return self.engine.dialect.name

    def integrity_check(self) -> str:
        """SQLite's `PRAGMA integrity_check` result (`ok` when healthy); `ok` on server databases once
        a query succeeds (the server guards its own files)."""
        if self.backend != "sqlite":
            self.tx.read(lambda s: s.execute(sa.text("SELECT 1")).scalar())
            return "ok"
        return self.tx.read(lambda s: "\n".join(str(r[0]) for r in s.execute(sa.text("PRAGMA integrity_check"))))

    def check(self, *, deep: bool = False) -> IntegrityReport:
        """The database's own check, every blob file against its row (present, recorded size; with `deep`, its
        SHA-256 too), each sample's count of complete ratings against its ratings, and samples without values
        (`storage.repo.checks`)."""
        from .repo.checks import IntegrityReport, check_blobs, complete_rating_counts, samples_without_values

        report = IntegrityReport(self.integrity_check())
        try:
            report.blobs_checked, report.problems = check_blobs(self.tx, self.blobs, deep=deep)
            report.problems += complete_rating_counts(self.tx)
            report.notes = samples_without_values(self.tx)
        except DatabaseCorrupt as exc:
            if report.database == "ok":
                raise
            report.problems.append(f"the other checks stopped: {exc}")
        return report

    def close(self) -> None:
        """Close every pooled connection (the SQLite WAL is checkpointed by the last one)."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r}, data_dir={str(self.data_dir)!r})"


def open_store(database_url: str | None, data_dir: Path, *, max_wait_s: float = 120.0) -> Store:
    """Open (creating or upgrading as needed) the database and the blob store.

    database_url: SQLAlchemy URL, e.g. `postgresql+psycopg://user:pw@host:5432/masc`; None = SQLite file
    `data_dir/masc.sqlite3`. data_dir: folder of the blob store (and of the SQLite file), created if
    absent; with PostgreSQL and several app replicas it must be shared storage.
    max_wait_s: how long a write keeps retrying while the database is locked before StorageBusy.
    Raises SchemaTooNew for a database written by a newer program, NotAMascDatabase for a foreign one,
    StorageError when the server cannot be reached, InvalidInput for a malformed URL.
    """
    data_dir = Path(data_dir).expanduser()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(
            f"cannot create the data directory {data_dir}: {exc}; pick a writable folder (MASC_DATA_DIR / --data-dir)"
        ) from exc
    url = database_url or sqlite_url(data_dir)
    try:
        engine = create_engine(url)
    except (ArgumentError, ValueError) as exc:
        raise InvalidInput(
            f"database URL {url!r} is not usable: {exc}; expected e.g. "
            f"postgresql+psycopg://user:password@host:5432/dbname or none for SQLite"
        ) from exc
    except ImportError as exc:
        raise StorageError(
            f"the database driver for {url.split(':', 1)[0]!r} is not installed ({exc}); "
            f"install psycopg[binary] for PostgreSQL"
        ) from exc
    try:
        _ensure_schema_retrying(engine, max_wait_s)
    except DBAPIError as exc:
        engine.dispose()
        where = engine.url.render_as_string(hide_password=True)
        hard = hard_failure(exc, engine)
        if hard is not None:
            raise hard from exc
        if engine.dialect.name == "sqlite":
            raise StorageError(
                f"cannot open database {where}: {exc.orig}; check that the data directory "
                f"(MASC_DATA_DIR / --data-dir) exists and is writable by this process"
            ) from exc
        raise StorageError(
            f"cannot open database {where}: {exc.orig}; check DATABASE_URL and that the server is running and reachable"
        ) from exc
    except BaseException:
        engine.dispose()
        raise
    store = Store(engine, data_dir, max_wait_s=max_wait_s)
    store.blobs.remove_stale_temp_files()
    return store


def upgrade_database(database_url: str | None, data_dir: Path) -> str:
    """Create or upgrade the database to the newest schema (what `open_store` does anyway) and return
    its revision; for a `masc-ui db upgrade` command run before rolling out a new version to a team."""
    with open_store(database_url, data_dir) as store:
        revision = migrate.current_revision(store.engine)
    assert revision is not None
    return revision


def _ensure_schema_retrying(engine: sa.Engine, max_wait_s: float) -> None:
    deadline = time.monotonic() + max_wait_s
    while True:
        try:
            migrate.ensure_schema(engine)
            return
        except DBAPIError as exc:
            if not is_transient(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
