"""Content-addressed blob store: files named by the SHA-256 of their bytes, written atomically.

Layout: `<root>/<first 2 hex digits>/<64 hex digits>`. A write goes to a temporary file in the same
folder (`.tmp-*`), is fsynced, then renamed over the final name, and the folder is fsynced: a reader (or
a process restarted after a crash) sees either no file or the complete file, never a partial one.
Concurrent writers of the same bytes both rename identical content to the same name, which is harmless.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from .errors import BlobCorrupt, BlobMissing, InvalidInput, OutOfSpace

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
TEMP_PREFIX = ".tmp-"
"""Name prefix of in-progress writes; leftovers of killed writers are removed by `remove_stale_temp_files`."""

_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"BM", 0, "image/bmp"),
    (b"II*\x00", 0, "image/tiff"),
    (b"MM\x00*", 0, "image/tiff"),
)


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def check_sha256(value: object, *, name: str = "sha256") -> str:
    """Return `value` if it is 64 lowercase hex digits, else raise InvalidInput naming `name`."""
    if not isinstance(value, str) or not _SHA256.match(value):
        raise InvalidInput(f"{name} must be a SHA-256 as 64 lowercase hex digits, got {value!r}")
    return value


def sniff_media_type(data: bytes) -> str:
    """MIME type from the leading magic bytes (PNG, JPEG, GIF, WebP, BMP, TIFF), else octet-stream."""
    for magic, offset, media_type in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return media_type
    return "application/octet-stream"


class BlobStore:
    """Files under `root` named by content hash. Thread- and process-safe; holds no open files."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, sha256: str) -> Path:
        """Where the blob with this hash lives (whether or not it exists)."""
        check_sha256(sha256)
        return self.root / sha256[:2] / sha256

    def exists(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def put(self, data: bytes) -> str:
        """Store `data` (once per distinct content) and return its SHA-256."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidInput(f"blob data must be bytes, got {type(data).__name__}")
        data = bytes(data)
        if not data:
            raise InvalidInput("blob data is empty (0 bytes); pass the file's bytes")
        digest = sha256_hex(data)
        final = self.path(digest)
        if final.is_file() and final.stat().st_size == len(data):
            return digest
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=final.parent)
        except OSError as exc:
            raise _out_of_space(exc, self.root) from exc
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, final)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise _out_of_space(exc, self.root) from exc
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(final.parent)
        return digest

    def get(self, sha256: str, *, verify: bool = False) -> bytes:
        """The blob's bytes; with `verify`, check they still hash to `sha256` (BlobCorrupt if not)."""
        path = self.path(sha256)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise BlobMissing(
                f"blob {sha256} is missing from the blob store at {self.root}; copy the data "
                f"directory's `blobs/` folder from a backup, or re-add the image"
            ) from None
        if verify and sha256_hex(data) != sha256:
            raise BlobCorrupt(
                f"blob file {path} does not hash to its name; restore it from a backup or re-add the image"
            )
        return data

    def link(self, sha256: str, dest: Path) -> None:
        """Create the file `dest` (a new name) holding the blob's bytes without copying them where it can: a hard
        link to the blob's file (creating a file is a new inode and a journal entry, slow on some disks; a link is
        a directory entry), else, on another file system or one without hard links, a copy. BlobMissing if the
        blob's file is gone. The blob's file is never written through `dest`: its writers replace whole files."""
        source = self.path(sha256)
        try:
            os.link(source, dest)
            return
        except FileNotFoundError:
            if source.is_file():
                raise  # `dest`'s folder is missing: the caller's error
            raise BlobMissing(
                f"blob {sha256} is missing from the blob store at {self.root}; copy the data "
                f"directory's `blobs/` folder from a backup, or re-add the image"
            ) from None
        except FileExistsError:
            raise  # a new name only: an existing file is never replaced or written through
        except OSError:
            pass  # another file system (EXDEV) or no hard links there: copy
        with open(source, "rb") as src, open(dest, "xb") as out:  # "x": a new name, as the link above
            shutil.copyfileobj(src, out)

    def remove_stale_temp_files(self, older_than_s: float = 3600.0) -> int:
        """Delete `.tmp-*` leftovers of writers killed more than `older_than_s` ago; return how many."""
        if not self.root.is_dir():
            return 0
        cutoff = time.time() - older_than_s
        removed = 0
        for tmp in self.root.glob(f"*/{TEMP_PREFIX}*"):
            try:
                if tmp.stat().st_mtime < cutoff:
                    tmp.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


NO_SPACE_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
"""OS errors that mean the disk (or the user's quota on it) is full."""


def _out_of_space(exc: OSError, root: Path) -> OSError:
    """`OutOfSpace` naming the blob store's folder for a full disk; `exc` itself otherwise."""
    if exc.errno in NO_SPACE_ERRNOS:
        return OutOfSpace(str(root), exc.strerror or str(exc))
    return exc
