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
