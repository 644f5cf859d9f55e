"""Read models joining samples with their latest metric values and their ratings (browse, exports).

Ratings-only samples are included (their `sample.output` is None and `references` empty)."""

from __future__ import annotations

from collections import defaultdict

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..record_types import SampleRow
from ..transactions import Transactions
from ._common import check_int, chunks, load_samples, sample_filters
from .metrics import latest_values


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
