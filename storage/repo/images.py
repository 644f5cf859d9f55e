"""Images and mask files: bytes into the blob store, one `blobs` row per distinct content."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from .. import schema as t
from ..blobs import BlobStore, check_sha256, sniff_media_type
from ..errors import BlobMissing
from ..transactions import Transactions
from ._common import insert_ignore, utcnow


class ImageRepository:
    """`add(bytes) -> sha256`; the same bytes are stored once. Callers normalise images first
    (`masc_ui.imaging`); storage keeps exactly the bytes it is given."""

    def __init__(self, tx: Transactions, blobs: BlobStore) -> None:
        self._tx = tx
        self._blobs = blobs

    def add(self, data: bytes, *, media_type: str | None = None) -> str:
        """Store `data` (file written and fsynced before the row is committed); return its SHA-256."""
        digest = self._blobs.put(data)
        kind = media_type or sniff_media_type(bytes(data[:16]))
        self._tx.write(
            lambda s: insert_ignore(
                s, t.Blob, {"sha256": digest, "size_bytes": len(data), "media_type": kind, "created_at": utcnow()}
            )
        )
        return digest

    def read(self, sha256: str, *, verify: bool = False) -> bytes:
        """The stored bytes (BlobMissing if unknown or its file is gone; BlobCorrupt with `verify`)."""
        check_sha256(sha256)
        if not self.known(sha256):
            raise BlobMissing(
                f"no image or mask with SHA-256 {sha256} was ever added; add it with store.images.add(bytes)"
            )
        return self._blobs.get(sha256, verify=verify)

    def link(self, sha256: str, dest: Path) -> None:
        """Create the file `dest` (a new name) holding the bytes of blob `sha256`, hard-linked to the stored file
        where the file system allows (no copy; `BlobStore.link`). For hashes read from stored records (a sample's
        images, whose rows exist): no row is read. BlobMissing if the blob's file is gone."""
        check_sha256(sha256)
        self._blobs.link(sha256, Path(dest))

    def known(self, sha256: str) -> bool:
        """True if a blob row with this hash exists."""
        check_sha256(sha256)
        return self._tx.read(lambda s: s.get(t.Blob, sha256) is not None)

    def media_type(self, sha256: str) -> str:
        check_sha256(sha256)
        found = self._tx.read(lambda s: s.scalar(sa.select(t.Blob.media_type).where(t.Blob.sha256 == sha256)))
        if found is None:
            raise BlobMissing(f"no image or mask with SHA-256 {sha256} was ever added")
        return found
