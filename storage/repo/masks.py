"""Versioned masks of sample images. Adding a mask adds a version; the highest version that is not a proposal is
current. A proposal (`add_if_new(..., proposal=True)`, schema revision 0007) is a version kept for a person to check
— a doubtful text-prompted mask — that is never current and never scored with; it is offered while it is newer than
the image's current mask (`proposals_for`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..blobs import BlobStore, sha256_hex, sniff_media_type
from ..errors import InvalidInput, NotFound
from ..provenance import json_safe
from ..record_types import MaskRecord
from ..transactions import Transactions
from ._common import check_int, check_optional_text, check_timestamp, chunks, insert_ignore, require_sample, utcnow


class MaskRepository:
    def __init__(self, tx: Transactions, blobs: BlobStore) -> None:
        self._tx = tx
        self._blobs = blobs

    def add(
        self,
        sample_id: int,
        role: str,
        position: int,
        png: bytes,
        *,
        source: str,
        created_by: str | None = None,
        params: Mapping[str, Any] | None = None,
        created_at: dt.datetime | None = None,
    ) -> MaskRecord:
        """Add a new current mask for image (`role`, `position`) of a sample.

        `png`: the mask as PNG bytes (normalise with `masc_ui.imaging` first); `role`: `reference` or
        `output`; `position`: reference index (0 for the output); `source`: `drawn`, `sam`, `imported`
        or `text`; `params`: how it was made (JSON). Earlier versions stay available in `history`.
        """
        mask = prepare_mask(
            role, position, png, source=source, created_by=created_by, params=params, created_at=created_at
        )
        self._blobs.put(mask.png)
        return self._tx.write(lambda s: add_version(s, sample_id, mask, unless_current=False)[0])

    def add_if_new(
        self,
        sample_id: int,
        role: str,
        position: int,
        png: bytes,
        *,
        source: str,
        created_by: str | None = None,
        params: Mapping[str, Any] | None = None,
        proposal: bool = False,
    ) -> tuple[MaskRecord, bool]:
        """Like `add`, unless one of the image's versions already has exactly these bytes: then that version,
        and nothing is written. Returns (mask, added). The check and the insert are one transaction holding the
        image's row lock, so two imports of the same masks at once add each mask once. With `proposal`, the
        version is kept as a proposal (see the module docstring), and any version with these bytes, a mask in use
        or a proposal, means nothing is added; without, only a mask in use counts (a proposal of these bytes is
        not an answer: the mask is added and becomes current)."""
        mask = prepare_mask(role, position, png, source=source, created_by=created_by, params=params, proposal=proposal)
        self._blobs.put(mask.png)

        def work(s: Session) -> tuple[MaskRecord, bool]:
            image = _image_row(s, sample_id, role, position, lock=True)
            query = sa.select(t.MaskVersion).where(
                t.MaskVersion.sample_image_id == image.id, t.MaskVersion.blob_sha256 == mask.sha256
            )
            if not proposal:
                query = query.where(t.MaskVersion.proposal.is_(False))
            found = s.scalar(query.order_by(t.MaskVersion.version.desc()).limit(1))
            if found is not None:
                return _record(found, image), False
            return add_version(s, sample_id, mask, unless_current=False)

        return self._tx.write(work)

    def current(self, sample_id: int) -> dict[tuple[str, int], MaskRecord]:
        """(role, position) -> current mask, for every image of the sample that has one."""

        def work(s: Session) -> dict[tuple[str, int], MaskRecord]:
            require_sample(s, sample_id)
            return {(r.role, r.position): r for r in _current(s, [sample_id]).get(sample_id, [])}

        return self._tx.read(work)

    def current_for(self, sample_ids: list[int]) -> dict[int, dict[tuple[str, int], MaskRecord]]:
        """Like `current`, for many samples at once (unknown ids are simply absent)."""
        return self._tx.read(
            lambda s: {
                sid: {(r.role, r.position): r for r in recs} for sid, recs in _current(s, list(sample_ids)).items()
            }
        )

    def proposals_for(self, sample_ids: list[int]) -> dict[int, dict[tuple[str, int], MaskRecord]]:
        """sample id -> (role, position) -> the image's newest proposal, for the images whose newest proposal is
        newer than their current mask (or that have none): what is still offered for checking."""
        return self._tx.read(
            lambda s: {
                sid: {(r.role, r.position): r for r in recs} for sid, recs in _proposals(s, list(sample_ids)).items()
            }
        )

    def history(self, sample_id: int, role: str, position: int = 0) -> list[MaskRecord]:
        """Every mask version of one image, oldest first (proposals included, marked)."""
        _check_role(role)

        def work(s: Session) -> list[MaskRecord]:
            image = _image_row(s, sample_id, role, position)
            rows = s.scalars(
                sa.select(t.MaskVersion)
                .where(t.MaskVersion.sample_image_id == image.id)
                .order_by(t.MaskVersion.version)
            )
            return [_record(r, image) for r in rows]

        return self._tx.read(work)

    def get(self, mask_id: int) -> MaskRecord:
        check_int(mask_id, "mask_id", minimum=1)

        def work(s: Session) -> MaskRecord:
            row = s.get(t.MaskVersion, mask_id)
            if row is None:
                raise NotFound(f"mask version #{mask_id} does not exist")
            image = s.get(t.SampleImage, row.sample_image_id)
            assert image is not None
            return _record(row, image)

        return self._tx.read(work)


@dataclass(frozen=True)
class PreparedMask:
    """A checked mask version to add (see `MaskRepository.add`); `png` still has to reach the blob store."""

    role: str
    position: int
    png: bytes
    sha256: str
    source: str
    created_by: str | None
    params: dict[str, Any] | None
    created_at: dt.datetime
    proposal: bool = False


def prepare_mask(
    role: str,
    position: int,
    png: bytes,
    *,
    source: str,
    created_by: str | None = None,
    params: Mapping[str, Any] | None = None,
    created_at: dt.datetime | None = None,
    proposal: bool = False,
) -> PreparedMask:
    """Check the arguments of `MaskRepository.add` (InvalidInput naming the bad one)."""
    _check_role(role)
    check_int(position, "position", minimum=0)
    if source not in t.MASK_SOURCES:
        raise InvalidInput(f"mask source {source!r} is unknown; use one of {', '.join(t.MASK_SOURCES)}")
    check_optional_text(created_by, "created_by", max_len=200)
    if params is not None and not isinstance(params, Mapping):
        raise InvalidInput(f"params must be a dict or None, got {type(params).__name__}")
    params_json = None if params is None else json_safe(dict(params), name="mask params")
    when = utcnow() if created_at is None else check_timestamp(created_at, "created_at")
    if not isinstance(png, (bytes, bytearray)) or sniff_media_type(bytes(png[:16])) != "image/png":
        raise InvalidInput("mask must be PNG bytes (encode it with masc_ui.segmentation.mask_to_png)")
    png = bytes(png)
    if not isinstance(proposal, bool):
        raise InvalidInput(f"proposal must be True or False, got {proposal!r}")
    return PreparedMask(role, position, png, sha256_hex(png), source, created_by, params_json, when, proposal)


def add_version(
    s: Session, sample_id: int, mask: PreparedMask, *, unless_current: bool = True
) -> tuple[MaskRecord, bool]:
    """Add `mask` as the new version of its image (its bytes already in the blob store): the current one, or a
    proposal (`mask.proposal`); returns (the added version, or the current mask already holding these bytes;
    added). With `unless_current`, nothing is added when the current version, read while holding the image's row
    lock, already has these bytes (another writer stored the same mask meanwhile)."""
    image = _image_row(s, sample_id, mask.role, mask.position, lock=True)
    latest = (
        s.scalar(sa.select(sa.func.max(t.MaskVersion.version)).where(t.MaskVersion.sample_image_id == image.id)) or 0
    )
    if unless_current and latest:
        current = s.scalar(
            sa.select(t.MaskVersion)
            .where(t.MaskVersion.sample_image_id == image.id, t.MaskVersion.proposal.is_(False))
            .order_by(t.MaskVersion.version.desc())
            .limit(1)
        )
        if current is not None and current.blob_sha256 == mask.sha256:
            return _record(current, image), False
    insert_ignore(
        s,
        t.Blob,
        {"sha256": mask.sha256, "size_bytes": len(mask.png), "media_type": "image/png", "created_at": mask.created_at},
    )
    row = t.MaskVersion(
        sample_image_id=image.id,
        version=latest + 1,
        source=mask.source,
        created_by=mask.created_by,
        created_at=mask.created_at,
        blob_sha256=mask.sha256,
        params=mask.params,
        proposal=mask.proposal,
    )
    s.add(row)
    s.flush()
    return _record(row, image), True


def current_of(s: Session, sample_id: int) -> dict[tuple[str, int], MaskRecord]:
    """(role, position) -> current mask of one sample, inside a transaction."""
    return {(r.role, r.position): r for r in _current(s, [sample_id]).get(sample_id, [])}


def newest_with_content(s: Session, sample_id: int, role: str, position: int, sha256: str) -> int | None:
    """Id of the newest version of image (`role`, `position`) of the sample whose PNG hashes to `sha256`."""
    return s.scalar(
        sa.select(t.MaskVersion.id)
        .join(t.SampleImage, t.SampleImage.id == t.MaskVersion.sample_image_id)
        .where(
            t.SampleImage.sample_id == sample_id,
            t.SampleImage.role == role,
            t.SampleImage.position == position,
            t.MaskVersion.blob_sha256 == sha256,
            t.MaskVersion.proposal.is_(False),
        )
        .order_by(t.MaskVersion.version.desc())
        .limit(1)
    )


def current_mask_ids(s: Session, sample_ids: list[int]) -> dict[int, set[int]]:
    """sample id -> ids of its current mask versions (used by the metric queries)."""
    return {sid: {r.id for r in recs} for sid, recs in _current(s, sample_ids).items()}


def _current(s: Session, sample_ids: list[int]) -> dict[int, list[MaskRecord]]:
    """sample id -> the current mask of each of its images that has one (its newest version that is not a
    proposal)."""
    return _newest(s, sample_ids, proposal=False)


def _proposals(s: Session, sample_ids: list[int]) -> dict[int, list[MaskRecord]]:
    """sample id -> the newest proposal of each of its images whose newest proposal is newer than its current mask."""
    current = {(r.sample_id, r.role, r.position): r.version for recs in _current(s, sample_ids).values() for r in recs}
    out: dict[int, list[MaskRecord]] = {}
    for sid, recs in _newest(s, sample_ids, proposal=True).items():
        offered = [r for r in recs if r.version > current.get((r.sample_id, r.role, r.position), 0)]
        if offered:
            out[sid] = offered
    return out


def _newest(s: Session, sample_ids: list[int], *, proposal: bool) -> dict[int, list[MaskRecord]]:
    newest = (
        sa.select(t.MaskVersion.sample_image_id, sa.func.max(t.MaskVersion.version).label("v"))
        .where(t.MaskVersion.proposal.is_(proposal))
        .group_by(t.MaskVersion.sample_image_id)
        .subquery()
    )
    out: dict[int, list[MaskRecord]] = {}
    for part in chunks(sample_ids):
        query = (
            sa.select(t.MaskVersion, t.SampleImage)
            .join(t.SampleImage, t.SampleImage.id == t.MaskVersion.sample_image_id)
            .join(
                newest,
                sa.and_(newest.c.sample_image_id == t.MaskVersion.sample_image_id, newest.c.v == t.MaskVersion.version),
            )
            .where(t.SampleImage.sample_id.in_(part))
        )
        for mask, image in s.execute(query):
            out.setdefault(image.sample_id, []).append(_record(mask, image))
    return out


def _check_role(role: object) -> None:
    if role not in t.IMAGE_ROLES:
        raise InvalidInput(f"image role {role!r} is unknown; use 'reference' or 'output'")


def _image_row(s: Session, sample_id: int, role: str, position: int, *, lock: bool = False) -> t.SampleImage:
    require_sample(s, sample_id)
    query = sa.select(t.SampleImage).where(
        t.SampleImage.sample_id == sample_id, t.SampleImage.role == role, t.SampleImage.position == position
    )
    image = s.scalar(query.with_for_update() if lock else query)
    if image is None:
        raise NotFound(
            f"sample #{sample_id} has no {role} image at position {position}"
            + (" (the output is position 0)" if role == "output" else "")
        )
    return image


def _record(row: t.MaskVersion, image: t.SampleImage) -> MaskRecord:
    return MaskRecord(
        id=row.id,
        sample_id=image.sample_id,
        role=image.role,
        position=image.position,
        version=row.version,
        source=row.source,
        created_by=row.created_by,
        created_at=row.created_at,
        sha256=row.blob_sha256,
        params=row.params,
        proposal=row.proposal,
    )
