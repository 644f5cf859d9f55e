"""Metric values with provenance. Values are appended, never updated: a new mask, model or parameter
adds a value next to the old ones. "Latest" means the most recently recorded value among those computed
with the sample's *current* masks (values that used no mask always qualify)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput
from ..provenance import as_provenance, json_safe, provenance_key
from ..record_types import MetricInput, MetricValueRecord, Provenance
from ..transactions import Transactions
from ._common import (
    check_int,
    check_optional_text,
    check_text,
    check_timestamp,
    chunks,
    dataset_id,
    insert_returning_id,
    require_sample,
    utcnow,
)
from .masks import current_mask_ids

EXTERNAL_CODE_VERSION = "external"
"""`code_version` of values imported from outside (e.g. a GPT judge's scores)."""


class MetricRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    def record(
        self,
        sample_id: int,
        metric: str,
        value: float | None,
        *,
        provenance: Provenance | Mapping[str, Any],
        reason: str | None = None,
        extras: Mapping[str, Any] | None = None,
        mask_version_ids: Sequence[int] = (),
        computed_at: dt.datetime | None = None,
    ) -> MetricValueRecord:
        """Append one value. NaN/None is stored as NULL and needs a `reason` (NaN without one gets
        "value was NaN"); infinities are refused. `mask_version_ids` must belong to the sample."""
        item = MetricInput(
            sample_id=sample_id,
            metric=metric,
            value=value,
            provenance=provenance,
            reason=reason,
            extras=extras,
            mask_version_ids=tuple(mask_version_ids),
            computed_at=computed_at,
        )
        return self.record_many([item])[0]

    def record_many(self, items: Iterable[MetricInput]) -> list[MetricValueRecord]:
        """Append many values in one transaction (all or nothing); records in input order."""
        rows = [_validated(i, item) for i, item in enumerate(items)]

        def work(s: Session) -> list[MetricValueRecord]:
            for sample_id in sorted({r["sample_id"] for r, _ in rows}):
                require_sample(s, sample_id)
            return [record for record, _ in insert_values(s, rows)]

        return self._tx.write(work)

    def record_external(
        self,
        sample_id: int,
        metric: str,
        value: float | None,
        *,
        source: str,
        reason: str | None = None,
        extras: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> MetricValueRecord:
        """Append a value that was computed elsewhere (e.g. `metric="gpt4o_cp"`, `source="gpt-4o"`)."""
        check_text(source, "source", max_len=500)
        prov = Provenance(model_id=source, code_version=EXTERNAL_CODE_VERSION, params=dict(params or {}))
        return self.record(sample_id, metric, value, provenance=prov, reason=reason, extras=extras)

    def has_value(
        self, sample_id: int, metric: str, provenance_key: str, *, mask_version_ids: Sequence[int] | None = None
    ) -> bool:
        """True if `metric` was recorded for the sample with this provenance key and with the sample's
        current masks (so a batch run can skip it). With `mask_version_ids`, only a value computed with
        exactly those masks counts (use it for metrics whose masks are optional)."""
        exact = None if mask_version_ids is None else {sample_id: mask_version_ids}
        return sample_id in self.scored_samples(metric, provenance_key, [sample_id], mask_version_ids=exact)

    def scored_samples(
        self,
        metric: str,
        provenance_key: str,
        sample_ids: Sequence[int] | None = None,
        *,
        mask_version_ids: Mapping[int, Sequence[int]] | None = None,
    ) -> set[int]:
        """Ids (among `sample_ids`, or all) that have `metric` with this key, computed with masks that are
        all still current. For samples in `mask_version_ids` (sample id -> mask ids), only values
        computed with exactly those masks count."""
        exact = {sid: set(ids) for sid, ids in (mask_version_ids or {}).items()}

        def work(s: Session) -> set[int]:
            query = sa.select(t.MetricValue.id, t.MetricValue.sample_id).where(
                t.MetricValue.metric == metric, t.MetricValue.provenance_key == provenance_key
            )
            found: list[tuple[int, int]] = []
            if sample_ids is None:
                found = [(r[0], r[1]) for r in s.execute(query)]
            else:
                for part in chunks(list(sample_ids)):
                    part_query = query.where(t.MetricValue.sample_id.in_(part))
                    found += [(r[0], r[1]) for r in s.execute(part_query)]
            masks = _masks_of(s, [vid for vid, _ in found])
            current = current_mask_ids(s, sorted({sid for _, sid in found}))

            def counts(vid: int, sid: int) -> bool:
                used = masks.get(vid, set())
                return used == exact[sid] if sid in exact else used <= current.get(sid, set())

            return {sid for vid, sid in found if counts(vid, sid)}

        return self._tx.read(work)

    def latest(
        self, sample_id: int, *, provenance_keys: Mapping[str, str] | None = None
    ) -> dict[str, MetricValueRecord]:
        """metric -> latest value computed with the sample's current masks (optionally only values whose
        provenance key is `provenance_keys[metric]`, for the metrics named there)."""

        def work(s: Session) -> dict[str, MetricValueRecord]:
            require_sample(s, sample_id)
            return latest_values(s, [sample_id], provenance_keys).get(sample_id, {})

        return self._tx.read(work)

    def latest_for(
        self, sample_ids: Sequence[int], *, provenance_keys: Mapping[str, str] | None = None
    ) -> dict[int, dict[str, MetricValueRecord]]:
        """`latest` for many samples at once."""
        return self._tx.read(lambda s: latest_values(s, list(sample_ids), provenance_keys))

    def history(self, sample_id: int, metric: str | None = None) -> list[MetricValueRecord]:
        """Every value of the sample (of one metric, if given), oldest first."""

        def work(s: Session) -> list[MetricValueRecord]:
            require_sample(s, sample_id)
            query = sa.select(t.MetricValue).where(t.MetricValue.sample_id == sample_id)
            if metric is not None:
                query = query.where(t.MetricValue.metric == metric)
            rows = list(s.scalars(query.order_by(t.MetricValue.id)))
            masks = _masks_of(s, [r.id for r in rows])
            return [_record(r, masks.get(r.id, set())) for r in rows]

        return self._tx.read(work)

    def names(self, dataset: str | None = None) -> list[str]:
        """Metric names that have values (in `dataset`, or anywhere), sorted."""

        def work(s: Session) -> list[str]:
            query = sa.select(t.MetricValue.metric).distinct()
            if dataset is not None:
                query = query.join(t.Sample, t.Sample.id == t.MetricValue.sample_id).where(
                    t.Sample.dataset_id == dataset_id(s, dataset)
                )
            return sorted(s.scalars(query))

        return self._tx.read(work)


def latest_values(
    s: Session, sample_ids: list[int], provenance_keys: Mapping[str, str] | None = None
) -> dict[int, dict[str, MetricValueRecord]]:
    """sample id -> metric -> latest value with current masks (see the module docstring)."""
    out: dict[int, dict[str, MetricValueRecord]] = {}
    current = current_mask_ids(s, sample_ids)
    for part in chunks(sample_ids):
        rows = list(
            s.scalars(sa.select(t.MetricValue).where(t.MetricValue.sample_id.in_(part)).order_by(t.MetricValue.id))
        )
        masks = _masks_of(s, [r.id for r in rows])
        for row in rows:
            wanted = None if provenance_keys is None else provenance_keys.get(row.metric)
            if wanted is not None and row.provenance_key != wanted:
                continue
            used = masks.get(row.id, set())
            if used <= current.get(row.sample_id, set()):
                out.setdefault(row.sample_id, {})[row.metric] = _record(row, used)
    return out


def _masks_of(s: Session, value_ids: list[int]) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for part in chunks(value_ids):
        for vid, mid in s.execute(
            sa.select(t.MetricValueMask.metric_value_id, t.MetricValueMask.mask_version_id).where(
                t.MetricValueMask.metric_value_id.in_(part)
            )
        ):
            out.setdefault(vid, set()).add(mid)
    return out


def _check_masks_belong(s: Session, rows: list[tuple[dict[str, Any], tuple[int, ...]]]) -> None:
    wanted = sorted({m for _, masks in rows for m in masks})
    owner: dict[int, int] = {}
    for part in chunks(wanted):
        owner.update(
            s.execute(
                sa.select(t.MaskVersion.id, t.SampleImage.sample_id)
                .join(t.SampleImage, t.SampleImage.id == t.MaskVersion.sample_image_id)
                .where(t.MaskVersion.id.in_(part))
            ).all()
        )
    for values, masks in rows:
        for m in masks:
            if owner.get(m) != values["sample_id"]:
                where = "does not exist" if m not in owner else f"belongs to sample #{owner[m]}"
                raise InvalidInput(
                    f"mask version #{m} given for a {values['metric']!r} value of sample "
                    f"#{values['sample_id']} {where}; pass the ids of that sample's masks "
                    f"(store.masks.current(sample_id))"
                )


def _validated(index: int, item: MetricInput) -> tuple[dict[str, Any], tuple[int, ...]]:
    if not isinstance(item, MetricInput):
        raise InvalidInput(f"item {index} must be a storage.MetricInput, got {type(item).__name__}")
    where = f"metric value {index}"
    check_int(item.sample_id, f"{where}: sample_id", minimum=1)
    values = value_columns(
        where,
        metric=item.metric,
        value=item.value,
        provenance=item.provenance,
        reason=item.reason,
        extras=item.extras,
        computed_at=item.computed_at,
    )
    masks = tuple(sorted({check_int(m, f"{where}: mask_version_ids", minimum=1) for m in item.mask_version_ids}))
    return {"sample_id": item.sample_id, **values}, masks


def value_columns(
    where: str,
    *,
    metric: str,
    value: float | None,
    provenance: Provenance | Mapping[str, Any],
    reason: str | None,
    extras: Mapping[str, Any] | None,
    computed_at: dt.datetime | None,
) -> dict[str, Any]:
    """The checked columns of one metric value (all but `sample_id`); InvalidInput names `where`."""
    check_text(metric, f"{where}: metric", max_len=100)
    if reason is not None:
        check_text(reason, f"{where}: reason", max_len=10_000)
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidInput(f"{where} ({metric}): value must be a float or None, got {value!r}")
        value = float(value)
        if math.isnan(value):
            value, reason = None, reason or "value was NaN"
        elif math.isinf(value):
            raise InvalidInput(f"{where} ({metric}): value is {value}; store None with a reason instead")
    if value is None and reason is None:
        raise InvalidInput(
            f"{where} ({metric}): value is None but no reason is given; say why it is undefined (e.g. 'empty mask')"
        )
    prov = as_provenance(provenance)
    check_text(prov.code_version, f"{where}: provenance code_version", max_len=200)
    for name, limit in (("model_id", 500), ("revision", 200), ("device", 50), ("dtype", 50)):
        check_optional_text(getattr(prov, name), f"{where}: provenance {name}", max_len=limit)
    if extras is not None and not isinstance(extras, Mapping):
        raise InvalidInput(f"{where}: extras must be a dict or None, got {type(extras).__name__}")
    when = utcnow() if computed_at is None else check_timestamp(computed_at, f"{where}: computed_at")
    return {
        "metric": metric,
        "value": value,
        "reason": reason,
        "extras": None if extras is None else json_safe(dict(extras), name=f"{where}: extras"),
        "model_id": prov.model_id,
        "revision": prov.revision,
        "params": json_safe(dict(prov.params), name=f"{where}: provenance params"),
        "code_version": prov.code_version,
        "device": prov.device,
        "dtype": prov.dtype,
        "provenance_key": provenance_key(prov),
        "computed_at": when,
    }


def insert_values(
    s: Session, rows: list[tuple[dict[str, Any], tuple[int, ...]]]
) -> list[tuple[MetricValueRecord, bool]]:
    """Insert checked values (`_validated` / `value_columns` + `sample_id`, mask version ids), in order, inside
    a write transaction; the samples must exist. InvalidInput when a mask belongs to another sample.

    Each value gets its identity (`masks_key`, `sequence`: see `schema.MetricValue`); a value whose identity
    another writer stored meanwhile is not inserted again. Returns (record, inserted) per row: the new record,
    or the one already stored under that identity with inserted = False."""
    _check_masks_belong(s, rows)
    out = []
    for values, masks in rows:
        masks_key = masks_key_of(masks)
        same = (
            t.MetricValue.sample_id == values["sample_id"],
            t.MetricValue.metric == values["metric"],
            t.MetricValue.provenance_key == values["provenance_key"],
            t.MetricValue.masks_key == masks_key,
        )
        values = dict(values)
        sequence = values.pop("sequence", None)  # the caller's, when it decided to append from what it saw
        if sequence is None:
            sequence = int(s.scalar(sa.select(sa.func.count()).select_from(t.MetricValue).where(*same)) or 0)
        new_id = insert_returning_id(s, t.MetricValue, {**values, "masks_key": masks_key, "sequence": sequence})
        if new_id is None:
            row = s.scalars(sa.select(t.MetricValue).where(*same, t.MetricValue.sequence == sequence)).one()
            out.append((_record(row, masks), False))
            continue
        s.add_all([t.MetricValueMask(metric_value_id=new_id, mask_version_id=m) for m in masks])
        s.flush()
        out.append((_record(s.get_one(t.MetricValue, new_id), masks), True))
    return out


def masks_key_of(mask_version_ids: Sequence[int]) -> str:
    """`metric_values.masks_key` of a value computed with these mask versions."""
    key = ",".join(str(m) for m in sorted(set(mask_version_ids)))
    if len(key) > t.MASKS_KEY_MAX:
        raise InvalidInput(
            f"a metric value names {len(mask_version_ids)} mask versions; at most "
            f"{t.MASKS_KEY_MAX} characters of their ids can be stored"
        )
    return key


def most_recent_with(
    s: Session, sample_id: int, metric: str, key: str, masks: tuple[int, ...]
) -> tuple[MetricValueRecord | None, int]:
    """(the most recently recorded value of `metric` for the sample with provenance key `key`, computed with
    exactly the mask versions `masks`, or None; how many such values there are), read in one statement: the
    count is the `sequence` a value appended after them takes, so a writer that saw no value and one that
    stored it meanwhile compute the same identity."""
    rows = list(
        s.scalars(
            sa.select(t.MetricValue)
            .where(
                t.MetricValue.sample_id == sample_id,
                t.MetricValue.metric == metric,
                t.MetricValue.provenance_key == key,
                t.MetricValue.masks_key == masks_key_of(masks),
            )
            .order_by(t.MetricValue.id.desc())
        )
    )
    if not rows:
        return None, 0
    return _record(rows[0], set(masks)), len(rows)


def _record(row: t.MetricValue, masks: set[int] | tuple[int, ...]) -> MetricValueRecord:
    prov = Provenance(
        model_id=row.model_id,
        code_version=row.code_version,
        revision=row.revision,
        params=row.params,
        device=row.device,
        dtype=row.dtype,
    )
    return MetricValueRecord(
        id=row.id,
        sample_id=row.sample_id,
        metric=row.metric,
        value=row.value,
        reason=row.reason,
        extras=row.extras,
        provenance=prov,
        provenance_key=row.provenance_key,
        mask_version_ids=tuple(sorted(masks)),
        computed_at=row.computed_at,
    )
