"""Recording scored samples: images, the sample, its masks and its metric values in one write transaction.

This is the storage side of the workbench's record use case (the app's Save, batch scoring, imported judge
values). A crash at any moment leaves either everything of a `record` call or nothing of it: never a sample
without its values, never a value without the masks it names. Image and mask bytes go into the blob store
(fsynced) before the transaction; a crash in between leaves at most an unreferenced blob file.

Idempotent by content:
- images by their SHA-256, the sample by its external key or content (`SampleRepository.add`);
- a `MaskInput` adds a version only when the image's current mask has other bytes;
- a `ValueInput` is not added when the sample already holds a value of the same metric, provenance key and
  exactly the same mask versions that is the same (value and reason), or when both are numbers and the value
  was computed here (`code_version` other than `external`): the same computation on the same content is the
  same measurement, whatever float rounding the batch it ran in gave it. Imported values (`external`) are
  added when their number changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from .. import schema as t
from ..blobs import BlobStore, check_sha256, sha256_hex, sniff_media_type
from ..errors import InvalidInput
from ..record_types import ImageInput, MaskInput, MaskRecord, Recorded, RecordInput, SampleInput, ValueInput
from ..transactions import Transactions
from ._common import check_int, insert_ignore, load_samples, require_sample, utcnow
from .masks import PreparedMask, add_version, current_of, newest_with_content, prepare_mask
from .metrics import EXTERNAL_CODE_VERSION, insert_values, most_recent_with, value_columns
from .samples import PreparedSample, prepare_sample, store_sample


@dataclass(frozen=True)
class _Checked:
    """One `RecordInput`, checked outside the transaction."""

    sample: PreparedSample | int
    images: list[tuple[str, int, str]]
    """(sha256, size in bytes, media type) of each image."""
    masks: list[PreparedMask]
    values: list[tuple[dict[str, Any], tuple[tuple[str, int, str], ...]]]
    """(value columns without sample_id, (role, position, sha256) of each mask used)."""


class RecordingRepository:
    def __init__(self, tx: Transactions, blobs: BlobStore) -> None:
        self._tx = tx
        self._blobs = blobs

    def record(self, items: Sequence[RecordInput]) -> list[Recorded]:
        """Store every item (images, sample, masks, values) in one write transaction, all or nothing; one
        `Recorded` per item, in order. See the module docstring for what is added and what is recognised as
        already stored. InvalidInput / NotFound / DuplicateKey name the item and what is wrong."""
        if isinstance(items, RecordInput) or not isinstance(items, Sequence):
            raise InvalidInput("items must be a list of storage.RecordInput")
        checked = [_check(i, item) for i, item in enumerate(items)]
        for item in items:
            for image in item.images:
                self._blobs.put(image.data)
            for mask in item.masks:
                self._blobs.put(mask.png)
        return self._tx.write(lambda s: [_record_one(s, c) for c in checked])


def _check(index: int, item: RecordInput) -> _Checked:
    where = f"record item {index}"
    if not isinstance(item, RecordInput):
        raise InvalidInput(f"{where} must be a storage.RecordInput, got {type(item).__name__}")
    images = []
    for image in item.images:
        if not isinstance(image, ImageInput) or not isinstance(image.data, (bytes, bytearray)) or not image.data:
            raise InvalidInput(f"{where}: images must be storage.ImageInput with non-empty bytes")
        images.append(
            (
                sha256_hex(bytes(image.data)),
                len(image.data),
                image.media_type or sniff_media_type(bytes(image.data[:16])),
            )
        )
    if isinstance(item.sample, SampleInput):
        p = item.sample
        try:
            sample: PreparedSample | int = prepare_sample(
                p.dataset,
                references=tuple(p.references),
                output=p.output,
                prompt=p.prompt,
                subject=p.subject,
                category=p.category,
                method=p.method,
                seed=p.seed,
                external_key=p.external_key,
                info=p.info,
            )
        except InvalidInput as exc:
            raise InvalidInput(f"{where}: {exc}") from None
    else:
        sample = check_int(item.sample, f"{where}: sample", minimum=1)
    masks = []
    for mask in item.masks:
        if not isinstance(mask, MaskInput):
            raise InvalidInput(f"{where}: masks must be storage.MaskInput, got {type(mask).__name__}")
        masks.append(
            prepare_mask(
                mask.role, mask.position, mask.png, source=mask.source, created_by=mask.created_by, params=mask.params
            )
        )
    values = []
    for k, value in enumerate(item.values):
        if not isinstance(value, ValueInput):
            raise InvalidInput(f"{where}: values must be storage.ValueInput, got {type(value).__name__}")
        columns = value_columns(
            f"{where}, value {k}",
            metric=value.metric,
            value=value.value,
            provenance=value.provenance,
            reason=value.reason,
            extras=value.extras,
            computed_at=value.computed_at,
        )
        refs = tuple(
            (
                r.role,
                check_int(r.position, f"{where}, value {k}: mask position", minimum=0),
                check_sha256(r.sha256, name=f"{where}, value {k}: mask sha256"),
            )
            for r in value.masks
        )
        values.append((columns, refs))
    return _Checked(sample, images, masks, values)


def _record_one(s: Session, item: _Checked) -> Recorded:
    now = utcnow()
    for sha, size, media_type in item.images:
        insert_ignore(s, t.Blob, {"sha256": sha, "size_bytes": size, "media_type": media_type, "created_at": now})
    sample_id = require_sample(s, item.sample) if isinstance(item.sample, int) else store_sample(s, item.sample)
    current: dict[tuple[str, int], MaskRecord] = current_of(s, sample_id)
    new_masks = 0
    for mask in item.masks:
        have = current.get((mask.role, mask.position))
        if have is None or have.sha256 != mask.sha256:
            record, added = add_version(s, sample_id, mask)
            current[(mask.role, mask.position)] = record
            new_masks += added
    rows = []
    for columns, refs in item.values:
        ids = []
        for role, position, sha in refs:
            found = newest_with_content(s, sample_id, role, position, sha)
            if found is None:
                raise InvalidInput(
                    f"the {columns['metric']!r} value of sample #{sample_id} names a {role} "
                    f"{position} mask {sha[:12]}... that is not stored; pass that mask in the "
                    f"same record call"
                )
            ids.append(found)
        masks = tuple(sorted(set(ids)))
        recorded, sequence = _already_recorded(s, sample_id, columns, masks)
        if not recorded:
            rows.append(({"sample_id": sample_id, **columns, "sequence": sequence}, masks))
    values = [record for record, inserted in insert_values(s, rows) if inserted]
    sample = load_samples(s, [t.Sample.id == sample_id])[0]
    return Recorded(sample=sample, new_masks=new_masks, new_values=tuple(values), masks=current)


def _already_recorded(s: Session, sample_id: int, columns: dict[str, Any], masks: tuple[int, ...]) -> tuple[bool, int]:
    """(whether the value is already stored, the `sequence` it takes when appended)."""
    old, count = most_recent_with(s, sample_id, columns["metric"], columns["provenance_key"], masks)
    if old is None:
        return False, count
    if (old.value, old.reason) == (columns["value"], columns["reason"]):
        return True, count
    computed = columns["code_version"] != EXTERNAL_CODE_VERSION
    return computed and old.value is not None and columns["value"] is not None, count
