"""Datasets, subjects and samples. Adding a sample is idempotent: by external key within its dataset,
or (without a key) by content. A ratings-only sample (no images; see `SampleRepository.add`) is completed
in place when its images are added under the same key."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..blobs import check_sha256
from ..errors import Conflict, DuplicateKey, InvalidInput, NotFound
from ..provenance import canonical_json, json_safe
from ..record_types import DatasetRecord, SampleRecord, SubjectRecord
from ..transactions import Transactions
from ._common import (
    check_int,
    check_optional_text,
    check_text,
    chunks,
    dataset_id,
    insert_ignore,
    load_samples,
    sample_filters,
    utcnow,
)


class SampleRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    # --- datasets and subjects ---------------------------------------------------------------------------

    def ensure_dataset(self, name: str) -> DatasetRecord:
        """The dataset called `name`, created if absent."""
        check_text(name, "dataset", max_len=200)
        return self._tx.write(lambda s: _dataset_record(s, _ensure_dataset(s, name)))

    def create_dataset(self, name: str, *, for_rating: bool = False) -> tuple[DatasetRecord, bool]:
        """(the dataset called `name`, whether this call created it). A new dataset gets `for_rating` in the same
        INSERT, so among writers creating it at once the creator's mark is the one kept (on SQLite and
        PostgreSQL alike); an existing dataset is returned as it is, its mark untouched."""
        check_text(name, "dataset", max_len=200)
        if not isinstance(for_rating, bool):
            raise InvalidInput(f"for_rating must be True or False, got {for_rating!r}")

        def work(s: Session) -> tuple[DatasetRecord, bool]:
            created = insert_ignore(s, t.Dataset, {"name": name, "created_at": utcnow(), "for_rating": for_rating})
            row = s.get(t.Dataset, dataset_id(s, name))
            assert row is not None
            return _record_of(row), created

        return self._tx.write(work)

    def datasets(self) -> list[DatasetRecord]:
        """Every dataset, by name."""
        return self._tx.read(
            lambda s: [_record_of(d) for d in s.scalars(sa.select(t.Dataset).order_by(t.Dataset.name))]
        )

    def set_for_rating(self, name: str, for_rating: bool) -> DatasetRecord:
        """Mark (True) or unmark (False) dataset `name` for rating: raters' tasks come from the marked datasets
        (`TaskRepository`, `for_rating_only`). NotFound for an unknown dataset; setting the same again changes
        nothing."""
        check_text(name, "dataset", max_len=200)
        if not isinstance(for_rating, bool):
            raise InvalidInput(f"for_rating must be True or False, got {for_rating!r}")

        def work(s: Session) -> DatasetRecord:
            row = s.get(t.Dataset, dataset_id(s, name))
            assert row is not None
            if row.for_rating != for_rating:
                row.for_rating = for_rating
                s.flush()
            return _record_of(row)

        return self._tx.write(work)

    def ensure_subject(self, dataset: str, name: str, category: str | None = None) -> SubjectRecord:
        """The subject `name` of `dataset` (both created if absent).

        A subject without a category gets `category`; asking for another category than the stored one
        raises Conflict.
        """
        check_text(dataset, "dataset", max_len=200)
        check_text(name, "subject", max_len=300)
        check_optional_text(category, "category", max_len=100)

        def work(s: Session) -> SubjectRecord:
            row = _ensure_subject(s, _ensure_dataset(s, dataset), name, category)
            return SubjectRecord(id=row.id, dataset_id=row.dataset_id, name=row.name, category=row.category)

        return self._tx.write(work)

    def subjects(self, dataset: str) -> list[SubjectRecord]:
        """The subjects of `dataset`, by name (NotFound for an unknown dataset)."""

        def work(s: Session) -> list[SubjectRecord]:
            ds = dataset_id(s, dataset)
            return [
                SubjectRecord(id=r.id, dataset_id=r.dataset_id, name=r.name, category=r.category)
                for r in s.scalars(sa.select(t.Subject).where(t.Subject.dataset_id == ds).order_by(t.Subject.name))
            ]

        return self._tx.read(work)

    def methods(self, dataset: str | None = None) -> list[str]:
        """Distinct method names (of `dataset`, or everywhere), sorted; samples without one are left out."""

        def work(s: Session) -> list[str]:
            query = sa.select(t.Sample.method).distinct().where(t.Sample.method.is_not(None))
            if dataset is not None:
                query = query.where(t.Sample.dataset_id == dataset_id(s, dataset))
            return sorted(s.scalars(query))

        return self._tx.read(work)

    # --- samples -----------------------------------------------------------------------------------------

    def add(
        self,
        dataset: str,
        *,
        references: Sequence[str] = (),
        output: str | None = None,
        prompt: str | None = None,
        subject: str,
        category: str | None = None,
        method: str | None = None,
        seed: int | None = None,
        external_key: str | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> SampleRecord:
        """Add a sample, or return the identical one already stored.

        A *complete* sample has `output` and one or more `references` (SHA-256s returned by
        `store.images.add`) and a `prompt`. With `external_key`, a sample with that key in `dataset` is
        returned if its content (images, prompt, subject, method, seed) is the same, and DuplicateKey is
        raised if it differs. Without a key, a sample with the same content is returned. `info` (free JSON)
        is stored with a new sample and never compared. The dataset and subject are created if absent (see
        `ensure_subject` for `category`).

        A *ratings-only* sample (`output=None`, no `references`, `prompt` optional) holds imported ratings
        or judge values of an output whose image is not (yet) here; it needs `external_key`. Adding it when
        the key is already stored returns the stored sample (complete or not) if the method is the same.
        Adding a complete sample under the key of a stored ratings-only sample *completes that sample*: its
        images are attached and its prompt, subject, category, seed and info become the complete sample's
        (info merged), keeping its id, ratings and metric values. Adding the same again changes nothing.
        """
        return self.put(
            dataset,
            references=references,
            output=output,
            prompt=prompt,
            subject=subject,
            category=category,
            method=method,
            seed=seed,
            external_key=external_key,
            info=info,
        )[0]

    def put(
        self,
        dataset: str,
        *,
        references: Sequence[str] = (),
        output: str | None = None,
        prompt: str | None = None,
        subject: str,
        category: str | None = None,
        method: str | None = None,
        seed: int | None = None,
        external_key: str | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> tuple[SampleRecord, bool]:
        """`add`, also saying whether this call created the sample: (record, created). Two processes adding
        the same sample at once both get its record, and exactly one of them gets created = True (the unique
        keys on (dataset, external key) and (dataset, content) decide), so import counts stay honest."""
        item = prepare_sample(
            dataset,
            references=references,
            output=output,
            prompt=prompt,
            subject=subject,
            category=category,
            method=method,
            seed=seed,
            external_key=external_key,
            info=info,
        )

        def work(s: Session) -> tuple[SampleRecord, bool]:
            sample_id, created = store_sample_created(s, item)
            return load_samples(s, [t.Sample.id == sample_id])[0], created

        return self._tx.write(work)

    def add_many(self, dataset: str, samples: Sequence[Mapping[str, Any]]) -> list[SampleRecord]:
        """`add` for many samples of `dataset` in one transaction (all or nothing): each item holds the
        keyword arguments of `add` (references, output, prompt, subject, category, method, seed,
        external_key, info). Returns the records in the same order. For imports of thousands of samples."""
        if isinstance(samples, (str, Mapping)) or not isinstance(samples, Sequence):
            raise InvalidInput("samples must be a list of dicts with the keyword arguments of samples.add")
        items = []
        for i, fields in enumerate(samples):
            if not isinstance(fields, Mapping):
                raise InvalidInput(
                    f"samples[{i}] must be a dict of samples.add keyword arguments, got {type(fields).__name__}"
                )
            try:
                items.append(prepare_sample(dataset, **fields))
            except TypeError as exc:
                raise InvalidInput(f"samples[{i}]: {exc}") from None
            except InvalidInput as exc:
                raise InvalidInput(f"samples[{i}]: {exc}") from None

        def work(s: Session) -> list[SampleRecord]:
            ids = [store_sample(s, item) for item in items]
            by_id: dict[int, SampleRecord] = {}
            for part in chunks(sorted(set(ids))):
                by_id.update((r.id, r) for r in load_samples(s, [t.Sample.id.in_(list(part))]))
            return [by_id[i] for i in ids]

        return self._tx.write(work)

    def get(self, sample_id: int) -> SampleRecord:
        """The sample (NotFound if there is none with this id)."""
        check_int(sample_id, "sample_id", minimum=1)
        found = self._tx.read(lambda s: load_samples(s, [t.Sample.id == sample_id]))
        if not found:
            raise NotFound(f"sample #{sample_id} does not exist; list samples with store.samples.list()")
        return found[0]

    def get_by_key(self, dataset: str, external_key: str) -> SampleRecord | None:
        """The sample with `external_key` in `dataset`, or None."""
        found = self._tx.read(
            lambda s: load_samples(s, [t.Dataset.name == dataset, t.Sample.external_key == external_key])
        )
        return found[0] if found else None

    def list(
        self,
        dataset: str | None = None,
        *,
        method: str | None = None,
        subject: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[SampleRecord]:
        """Samples by id, filtered by dataset / method / subject name; `limit`/`offset` page through them."""
        if limit is not None:
            check_int(limit, "limit", minimum=0)
        check_int(offset, "offset", minimum=0)
        where = sample_filters(dataset=dataset, method=method, subject=subject)
        return self._tx.read(lambda s: load_samples(s, where, limit=limit, offset=offset))

    def stored_bytes(self, dataset: str) -> int:
        """Bytes of the distinct images and masks the samples of `dataset` hold (0 for an unknown dataset)."""

        def work(s: Session) -> int:
            in_dataset = (
                sa.select(t.SampleImage.id)
                .join(t.Sample, t.Sample.id == t.SampleImage.sample_id)
                .join(t.Dataset, t.Dataset.id == t.Sample.dataset_id)
                .where(t.Dataset.name == dataset)
            )
            images = sa.select(t.SampleImage.blob_sha256).where(t.SampleImage.id.in_(in_dataset))
            masks = sa.select(t.MaskVersion.blob_sha256).where(t.MaskVersion.sample_image_id.in_(in_dataset))
            used = sa.union(images, masks).subquery()
            return int(
                s.scalar(
                    sa.select(sa.func.coalesce(sa.func.sum(t.Blob.size_bytes), 0)).where(
                        t.Blob.sha256.in_(sa.select(used.c[0]))
                    )
                )
                or 0
            )

        return self._tx.read(work)

    def count(self, dataset: str | None = None, *, method: str | None = None, subject: str | None = None) -> int:
        where = sample_filters(dataset=dataset, method=method, subject=subject)
        query = (
            sa.select(sa.func.count(t.Sample.id))
            .join(t.Dataset, t.Dataset.id == t.Sample.dataset_id)
            .join(t.Subject, t.Subject.id == t.Sample.subject_id)
            .where(*where)
        )
        return self._tx.read(lambda s: int(s.scalar(query) or 0))


@dataclass(frozen=True)
class PreparedSample:
    """A checked `add` request."""

    dataset: str
    refs: list[str]
    output: str | None
    prompt: str | None
    subject: str
    category: str | None
    method: str | None
    seed: int | None
    external_key: str | None
    info: dict[str, Any] | None
    content: str


def prepare_sample(
    dataset: str,
    *,
    references: Sequence[str] = (),
    output: str | None = None,
    prompt: str | None = None,
    subject: str,
    category: str | None = None,
    method: str | None = None,
    seed: int | None = None,
    external_key: str | None = None,
    info: Mapping[str, Any] | None = None,
) -> PreparedSample:
    """Check the arguments of `SampleRepository.add` (InvalidInput naming the bad one)."""
    check_text(dataset, "dataset", max_len=200)
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise InvalidInput(
            "references must be a non-empty list of image SHA-256s (from store.images.add), "
            "or empty for a ratings-only sample"
        )
    refs = [check_sha256(r, name=f"references[{i}]") for i, r in enumerate(references)]
    ratings_only = output is None
    if ratings_only:
        if refs:
            raise InvalidInput(
                "a sample with references needs its output image too; pass output=<SHA-256>, "
                "or no references for a ratings-only sample"
            )
        if external_key is None:
            raise InvalidInput(
                "a ratings-only sample (output=None) needs an external_key, so that its images can be attached later"
            )
        check_optional_text(prompt, "prompt", max_len=10_000)
    else:
        if not refs:
            raise InvalidInput(
                "references must be a non-empty list of image SHA-256s (from store.images.add); "
                "only a ratings-only sample (output=None) has none"
            )
        check_sha256(output, name="output")
        check_text(prompt, "prompt", max_len=10_000)
    check_text(subject, "subject", max_len=300)
    check_optional_text(category, "category", max_len=100)
    check_optional_text(method, "method", max_len=200)
    check_optional_text(external_key, "external_key", max_len=500)
    if seed is not None:
        check_int(seed, "seed")
        if not -(2**63) <= seed < 2**63:
            raise InvalidInput(f"seed {seed} does not fit in 64 bits")
    if info is not None and not isinstance(info, Mapping):
        raise InvalidInput(f"info must be a dict or None, got {type(info).__name__}")
    info_json = None if info is None else json_safe(dict(info), name="info")
    content = _content_key(refs, output, prompt, subject, method, seed, external_key)
    return PreparedSample(
        dataset, refs, output, prompt, subject, category, method, seed, external_key, info_json, content
    )


def store_sample(s: Session, p: PreparedSample) -> int:
    """Insert, complete or find the sample `p` (see `SampleRepository.add`); its id."""
    return store_sample_created(s, p)[0]


def store_sample_created(s: Session, p: PreparedSample) -> tuple[int, bool]:
    """`store_sample`, and whether this call inserted the sample's row."""
    blobs = p.refs + ([] if p.output is None else [p.output])
    missing = sorted(set(blobs) - set(s.scalars(sa.select(t.Blob.sha256).where(t.Blob.sha256.in_(blobs)))))
    if missing:
        raise NotFound(
            f"image {missing[0]} is not in the blob store ({len(missing)} missing); add "
            f"the bytes with store.images.add(data) first and pass the returned SHA-256"
        )
    ds = _ensure_dataset(s, p.dataset)
    existing = _find_existing(s, ds, p.external_key, p.content)
    inserted = False
    if existing is None:
        subj = _ensure_subject(s, ds, p.subject, p.category)
        inserted = insert_ignore(
            s,
            t.Sample,
            {
                "dataset_id": ds,
                "subject_id": subj.id,
                "prompt": p.prompt,
                "method": p.method,
                "seed": p.seed,
                "external_key": p.external_key,
                "content_key": p.content,
                "info": p.info,
                "created_at": utcnow(),
            },
        )
        existing = _find_existing(s, ds, p.external_key, p.content)
        assert existing is not None
        if inserted:
            _add_images(s, existing.id, p.refs, p.output)
    if existing.content_key != p.content:
        existing = s.scalars(sa.select(t.Sample).where(t.Sample.id == existing.id).with_for_update()).one()
        if existing.method != p.method:
            raise DuplicateKey(
                f"dataset {p.dataset!r} already has a sample with external key {p.external_key!r} "
                f"(sample #{existing.id}) of method {existing.method!r}, not {p.method!r}; give this "
                f"sample another key, or leave the stored one as it is"
            )
        if p.output is not None and not _has_output(s, existing.id):
            _complete(
                s,
                existing,
                _ensure_subject(s, ds, p.subject, p.category),
                p.refs,
                p.output,
                p.prompt,
                p.seed,
                p.content,
                p.info,
            )
        elif p.output is not None:
            raise DuplicateKey(
                f"dataset {p.dataset!r} already has a sample with external key {p.external_key!r} "
                f"(sample #{existing.id}) whose images, prompt, subject, method or seed differ; give "
                f"this sample another key, or leave the stored one as it is"
            )
    return existing.id, inserted


def _dataset_record(s: Session, ds_id: int) -> DatasetRecord:
    row = s.get(t.Dataset, ds_id)
    assert row is not None
    return _record_of(row)


def _record_of(row: t.Dataset) -> DatasetRecord:
    return DatasetRecord(id=row.id, name=row.name, created_at=row.created_at, for_rating=bool(row.for_rating))


def _ensure_dataset(s: Session, name: str) -> int:
    insert_ignore(s, t.Dataset, {"name": name, "created_at": utcnow()})
    return dataset_id(s, name)


def _ensure_subject(s: Session, ds: int, name: str, category: str | None) -> t.Subject:
    insert_ignore(s, t.Subject, {"dataset_id": ds, "name": name, "category": category, "created_at": utcnow()})
    row = s.scalars(
        sa.select(t.Subject).where(t.Subject.dataset_id == ds, t.Subject.name == name).with_for_update()
    ).one()
    if category is not None and row.category != category:
        if row.category is not None:
            raise Conflict(
                f"subject {name!r} is stored with category {row.category!r}, not {category!r}; "
                f"pass the stored category (or none)"
            )
        row.category = category
        s.flush()
    return row


def _has_output(s: Session, sample_id: int) -> bool:
    return (
        s.scalar(
            sa.select(t.SampleImage.id).where(t.SampleImage.sample_id == sample_id, t.SampleImage.role == "output")
        )
        is not None
    )


def _add_images(s: Session, sample_id: int, refs: list[str], output: str | None) -> None:
    if output is None:
        return
    s.add_all(
        [t.SampleImage(sample_id=sample_id, role="reference", position=i, blob_sha256=r) for i, r in enumerate(refs)]
    )
    s.add(t.SampleImage(sample_id=sample_id, role="output", position=0, blob_sha256=output))
    s.flush()


def _complete(
    s: Session,
    row: t.Sample,
    subject: t.Subject,
    refs: list[str],
    output: str,
    prompt: str | None,
    seed: int | None,
    content: str,
    info: dict[str, Any] | None,
) -> None:
    """Attach images to the ratings-only sample `row` (locked) and take the complete sample's fields."""
    row.subject_id, row.prompt, row.seed, row.content_key = subject.id, prompt, seed, content
    if info is not None:
        row.info = {**(row.info or {}), **info}
    s.flush()
    _add_images(s, row.id, refs, output)


def _find_existing(s: Session, ds: int, external_key: str | None, content: str) -> t.Sample | None:
    if external_key is not None:
        where = t.Sample.external_key == external_key
    else:
        where = t.Sample.content_key == content
    return s.scalar(sa.select(t.Sample).where(t.Sample.dataset_id == ds, where))


def _content_key(
    refs: list[str],
    output: str | None,
    prompt: str | None,
    subject: str,
    method: str | None,
    seed: int | None,
    external_key: str | None,
) -> str:
    body = {
        "references": refs,
        "output": output,
        "prompt": prompt,
        "subject": subject,
        "method": method,
        "seed": seed,
        "external_key": external_key,
    }
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()
