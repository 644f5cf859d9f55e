"""The pairwise judgments export: one row per current judgment, as CSV or JSON Lines.

Columns: `dataset, rater, external, criterion, status, left, right, winner, winner_sample_id, both_bad, time,
seconds, note, revision, left_sample_id, right_sample_id, left_method, right_method, task_position`.
`left` / `right` are the samples' external keys as shown to the rater (empty when a sample has none: then its id
columns identify it), `winner` is `left` / `right` / `tie` (empty when skipped or flagged), `time` is when the
current answer was given (ISO 8601 UTC), `task_position` the task's place in the rater's sequence (empty for
imported judgments). Rows are ordered by dataset, then time. Cells are written as in the sample export.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, TextIO

import sqlalchemy as sa
from sqlalchemy.orm import Session, aliased

from .. import schema as t
from .exports import _csv_cell, _open

COLUMNS = (
    "dataset",
    "rater",
    "external",
    "criterion",
    "status",
    "left",
    "right",
    "winner",
    "winner_sample_id",
    "both_bad",
    "time",
    "seconds",
    "note",
    "revision",
    "left_sample_id",
    "right_sample_id",
    "left_method",
    "right_method",
    "task_position",
)


def pair_export_table(s: Session, dataset: str | None) -> tuple[list[str], list[dict[str, Any]]]:
    """(columns, rows) of the current judgments of `dataset` (None = every dataset)."""
    left, right = aliased(t.Sample), aliased(t.Sample)
    j = t.PairJudgment
    right_id = sa.case((j.left_sample_id == j.sample_a_id, j.sample_b_id), else_=j.sample_a_id)
    query = (
        sa.select(
            j,
            t.Rater.username,
            t.Rater.is_external,
            t.Dataset.name,
            left.external_key,
            left.method,
            right.external_key,
            right.method,
            t.PairTask.position,
        )
        .join(t.Rater, t.Rater.id == j.rater_id)
        .join(left, left.id == j.left_sample_id)
        .join(right, right.id == right_id)
        .join(t.Dataset, t.Dataset.id == left.dataset_id)
        .outerjoin(t.PairTask, t.PairTask.id == j.task_id)
    )
    if dataset is not None:
        query = query.where(t.Dataset.name == dataset)
    rows = []
    for row, rater, external, ds, lkey, lmethod, rkey, rmethod, position in s.execute(
        query.order_by(t.Dataset.name, j.judged_at, j.id)
    ):
        right_sample = row.sample_b_id if row.left_sample_id == row.sample_a_id else row.sample_a_id
        winner_sample = {"left": row.left_sample_id, "right": right_sample}.get(row.winner or "")
        rows.append(
            {
                "dataset": ds,
                "rater": rater,
                "external": external,
                "criterion": row.criterion,
                "status": row.status,
                "left": lkey,
                "right": rkey,
                "winner": row.winner,
                "winner_sample_id": winner_sample,
                "both_bad": row.both_bad,
                "time": row.judged_at.isoformat(),
                "seconds": row.seconds_spent,
                "note": row.note,
                "revision": row.revision,
                "left_sample_id": row.left_sample_id,
                "right_sample_id": right_sample,
                "left_method": lmethod,
                "right_method": rmethod,
                "task_position": position,
            }
        )
    return list(COLUMNS), rows


def write_pair_csv(target: Path | str | TextIO, columns: list[str], rows: list[dict[str, Any]]) -> int:
    with _open(target) as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_cell(v) for k, v in row.items()})
    return len(rows)


def write_pair_jsonl(target: Path | str | TextIO, columns: list[str], rows: list[dict[str, Any]]) -> int:
    with _open(target) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)
