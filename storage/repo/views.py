"""Read models joining samples with their latest metric values and their ratings (browse, exports).

Ratings-only samples are included (their `sample.output` is None and `references` empty). `browse_page` sorts and
pages over every matching sample in the database and returns one page with the total."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..errors import InvalidInput
from ..record_types import SampleRow
from ..transactions import Transactions
from ._common import check_int, chunks, load_samples, sample_filters
from .masks import current_mask_ids
from .metrics import latest_values

COLUMN_SORTS = {
    "id": t.Sample.id,
    "dataset": t.Dataset.name,
    "subject": t.Subject.name,
    "method": t.Sample.method,
    "prompt": t.Sample.prompt,
}
"""Sort keys of `browse_page` the database orders by itself; the others are `metric:<name>` (the latest value with
the current masks), `mean:<criterion>` (mean rating) and `raters` (most raters of one criterion)."""


@dataclass(frozen=True)
class BrowsePage:
    """One page of `ViewRepository.browse_page`: its rows in sort order, and what the whole selection holds."""

    rows: list[SampleRow]
    total: int
    """Samples matching the filters, in the whole database."""
    offset: int
    """Position of the first row within the sorted selection (0-based)."""
    metrics: list[str]
    """Every metric name stored for a matching sample (so columns do not change from page to page)."""


class ViewRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    def browse(
        self,
        dataset: str | None = None,
        *,
        method: str | None = None,
        subject: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[SampleRow]:
        """Samples (filtered like `SampleRepository.list`) with latest metrics, ratings and mean ratings."""
        if limit is not None:
            check_int(limit, "limit", minimum=0)
        check_int(offset, "offset", minimum=0)
        where = sample_filters(dataset=dataset, method=method, subject=subject)
        return self._tx.read(lambda s: sample_rows(s, where, limit=limit, offset=offset))

    def browse_page(
        self,
        dataset: str | None = None,
        *,
        method: str | None = None,
        subject: str | None = None,
        sort: str = "id",
        descending: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> BrowsePage:
        """Rows `offset` .. `offset + limit - 1` of every sample matching the filters (like `browse`), sorted by
        `sort` (a `COLUMN_SORTS` key, `metric:<name>`, `mean:<criterion>` or `raters`; ties by id, ascending);
        samples without a value for the key come last in both directions. InvalidInput for another key."""
        check_int(limit, "limit", minimum=0)
        check_int(offset, "offset", minimum=0)
        where = sample_filters(dataset=dataset, method=method, subject=subject)
        kind, _, name = sort.partition(":")
        if sort not in COLUMN_SORTS and not (kind in ("metric", "mean") and name) and sort != "raters":
            raise InvalidInput(
                f"cannot sort by {sort!r}: use one of {', '.join(COLUMN_SORTS)}, metric:<name>, mean:<criterion> "
                "or raters"
            )

        def work(s: Session) -> BrowsePage:
            matching = _SELECTION.where(*where)
            total = int(s.scalar(sa.select(sa.func.count()).select_from(matching.subquery())) or 0)
            metrics = sorted(
                s.scalars(
                    sa.select(t.MetricValue.metric)
                    .distinct()
                    .where(t.MetricValue.sample_id.in_(matching.with_only_columns(t.Sample.id)))
                )
            )
            if sort in COLUMN_SORTS:
                column = COLUMN_SORTS[sort]
                query = matching.order_by(column.is_(None), column.desc() if descending else column, t.Sample.id).limit(
                    limit
                )
                ids = list(s.scalars(query.offset(offset)))
            else:
                ids = _sorted_ids(s, list(s.scalars(matching.order_by(t.Sample.id))), sort, descending)
                ids = ids[offset : offset + limit]
            by_id = {r.sample.id: r for r in sample_rows(s, [t.Sample.id.in_(ids)])} if ids else {}
            return BrowsePage([by_id[i] for i in ids], total, offset, metrics)

        return self._tx.read(work)


_SELECTION = (
    sa.select(t.Sample.id)
    .join(t.Dataset, t.Dataset.id == t.Sample.dataset_id)
    .join(t.Subject, t.Subject.id == t.Sample.subject_id)
)
"""Sample ids joined with their dataset and subject (what `sample_filters` filters on)."""


def _sorted_ids(s: Session, ids: list[int], sort: str, descending: bool) -> list[int]:
    """`ids` sorted by a key computed here (a metric's latest value, a mean rating, the rater count); missing last."""
    keys = _sort_keys(s, ids, sort)
    present = sorted((i for i in ids if i in keys), key=lambda i: (keys[i], i))
    if descending:
        present.sort(key=lambda i: (-keys[i], i))
    return present + [i for i in ids if i not in keys]


def _sort_keys(s: Session, ids: list[int], sort: str) -> dict[int, float]:
    kind, _, name = sort.partition(":")
    keys: dict[int, float] = {}
    if kind == "metric":
        current = current_mask_ids(s, ids)
        for part in chunks(ids):
            rows = s.execute(
                sa.select(t.MetricValue.id, t.MetricValue.sample_id, t.MetricValue.value)
                .where(t.MetricValue.sample_id.in_(part), t.MetricValue.metric == name)
                .order_by(t.MetricValue.id)
            ).all()
            used: dict[int, set[int]] = defaultdict(set)
            for value_ids in chunks([r.id for r in rows]):
                for value_id, mask_id in s.execute(
                    sa.select(t.MetricValueMask.metric_value_id, t.MetricValueMask.mask_version_id).where(
                        t.MetricValueMask.metric_value_id.in_(list(value_ids))
                    )
                ):
                    used[value_id].add(mask_id)
            latest: dict[int, float | None] = {}
            for value_id, sample_id, value in rows:  # the newest value computed with current masks wins
                if used[value_id] <= current.get(sample_id, set()):
                    latest[sample_id] = value
            keys.update((i, float(v)) for i, v in latest.items() if v is not None)
        return keys
    per_criterion: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for part in chunks(ids):
        for sample_id, criterion, score in s.execute(
            sa.select(t.Rating.sample_id, t.Rating.criterion, t.Rating.score).where(
                t.Rating.sample_id.in_(part), t.Rating.score.is_not(None)
            )
        ):
            if score is not None:  # the query leaves NULL scores out; this says so to the type checker
                per_criterion[sample_id][criterion].append(score)
    for sample_id, scores in per_criterion.items():
        if kind == "mean" and scores.get(name):
            keys[sample_id] = sum(scores[name]) / len(scores[name])
        elif sort == "raters":
            keys[sample_id] = max(len(v) for v in scores.values())
    if sort == "raters":
        keys.update((i, 0.0) for i in ids if i not in keys)
    return keys


def sample_rows(
    s: Session, where: list[sa.ColumnElement[bool]], *, limit: int | None = None, offset: int = 0
) -> list[SampleRow]:
    samples = load_samples(s, where, limit=limit, offset=offset)
    ids = [x.id for x in samples]
    metrics = latest_values(s, ids)
    ratings: dict[int, dict[str, dict[str, int | None]]] = defaultdict(lambda: defaultdict(dict))
    statuses: dict[int, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    notes: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for part in chunks(ids):
        for sample_id, username, criterion, score, status, note in s.execute(
            sa.select(
                t.Rating.sample_id, t.Rater.username, t.Rating.criterion, t.Rating.score, t.Rating.status, t.Rating.note
            )
            .join(t.Rater, t.Rater.id == t.Rating.rater_id)
            .where(t.Rating.sample_id.in_(part))
            .order_by(t.Rater.username, t.Rating.criterion)
        ):
            ratings[sample_id][username][criterion] = score
            statuses[sample_id][username][criterion] = status
            if note and note not in notes[sample_id][username]:
                notes[sample_id][username].append(note)
    rows = []
    for sample in samples:
        by_rater = {u: dict(c) for u, c in ratings.get(sample.id, {}).items()}
        means: dict[str, float | None] = {}
        counts: dict[str, int] = {}
        rated = {c for by in by_rater.values() for c in by}
        for criterion in [c for c in t.RATING_CRITERIA if c in t.CRITERIA or c in rated]:
            scores = [c[criterion] for c in by_rater.values() if c.get(criterion) is not None]
            counts[criterion] = len(scores)
            means[criterion] = sum(scores) / len(scores) if scores else None  # type: ignore[arg-type]
        values = {name: v.value for name, v in sorted(metrics.get(sample.id, {}).items())}
        rows.append(
            SampleRow(
                sample=sample,
                metrics=values,
                ratings=by_rater,
                means=means,
                counts=counts,
                statuses={u: dict(c) for u, c in statuses.get(sample.id, {}).items()},
                notes={u: " | ".join(n) for u, n in notes.get(sample.id, {}).items()},
            )
        )
    return rows
