"""Storage exceptions. Every message says what is wrong and what to do about it.

Callers catch `StorageError` at the edges (web handlers, CLI). Errors caused by bad arguments also
derive from `ValueError`, lookups that find nothing from `LookupError`.
"""

from __future__ import annotations


class StorageError(Exception):
    """Base class of everything `storage` raises on purpose."""


class InvalidInput(StorageError, ValueError):
    """An argument has a wrong type, value or shape; nothing was written."""


class InvalidRating(InvalidInput):
    """A rating's criterion, score or status is not allowed; nothing was written."""


class NotFound(StorageError, LookupError):
    """A dataset, sample, rater, mask, rating or blob that was referred to does not exist."""


class BlobMissing(NotFound):
    """A blob is recorded in the database but its file is missing from the blob store."""


class BlobCorrupt(StorageError):
    """A blob file's content no longer matches its SHA-256 name."""


class DuplicateKey(StorageError, ValueError):
    """A unique key (e.g. a sample's external key within its dataset) is already taken by different data."""


class Conflict(StorageError, ValueError):
    """The request contradicts what is stored (e.g. a subject re-added with another category)."""


class SchemaTooNew(StorageError):
    """The database was written by a newer (or unknown) version of this program; refusing to touch it."""


class NotAMascDatabase(StorageError):
    """The database has tables but no MaSC schema version; refusing to touch it."""


class StorageBusy(StorageError):
    """The database stayed locked by other writers longer than the retry budget."""


class RestoreError(StorageError):
    """A JSON dump cannot be restored (wrong format, target not empty, blobs missing)."""


class OutOfSpace(StorageError, OSError):
    """The disk holding the data directory (blob store, SQLite file) is full; the write was rolled back.
    `directory` is the folder whose disk is full."""

    def __init__(self, directory: str, detail: str = "") -> None:
        self.directory = directory
        super().__init__(
            f"no space left on the disk holding {directory}"
            + (f" ({detail})" if detail else "")
            + "; free space there and try again (the write that failed stored nothing)"
        )


class DatabaseCorrupt(StorageError):
    """The SQLite database file is damaged (not a wrong permission or a missing folder). `path` is the file;
    `masc-ui db salvage` recovers what is readable into a new file."""

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        super().__init__(
            f"the database file {path} is corrupt ({detail}); recover what is readable into a new file with "
            f"`masc-ui db salvage NEW_FILE`, then switch to it (the salvage says how)"
        )
