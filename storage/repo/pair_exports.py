"""The pairwise judgments export: one row per current judgment (and, asked for, per earlier revision), as CSV or JSON
Lines.

Columns: `dataset, rater, external, criterion, status, left, right, winner, winner_sample_id, both_bad, time,
seconds, note, revision, left_sample_id, right_sample_id, left_method, right_method, task_position, gold`.
`left` / `right` are the samples' external keys as shown to the rater (empty when a sample has none: then its id
columns identify it), `winner` is `left` / `right` / `tie` (empty when skipped or flagged), `time` is when the
answer was given (ISO 8601 UTC), `seconds` the time on task (seconds the rater spent on the answer; empty for
imports without it), `task_position` the task's place in the rater's sequence (empty for imported judgments), `gold`
the kind of the pair's gold mark (`gold` or `attention`: a gold pair or a pair attention check, whose judgments never
count for a method; empty for a normal pair).
Rows are ordered by dataset, then time. Cells are written as in the sample export.

Options (`pair_export_table`): without the time on task the `seconds` column is left out; with the rating history
every superseded revision of a judgment is a row too (its own answer, time, seconds and side shown left), and two
columns follow: `current` (true on the judgment's current revision) and `replaced_at` (when a superseded revision
was replaced; empty on current rows).
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
    "gold",
)
TIME_ON_TASK_COLUMNS = ("seconds",)
"""Columns left out when the time on task is not asked for."""
HISTORY_COLUMNS = ("current", "replaced_at")
"""Columns added when the rating history is asked for."""


def pair_export_columns(*, history: bool = False, time_on_task: bool = True) -> list[str]:
    """The columns of `pair_export_table` with these options, in order."""
    columns = [c for c in COLUMNS if time_on_task or c not in TIME_ON_TASK_COLUMNS]
    return columns + list(HISTORY_COLUMNS) if history else columns


def pair_export_table(
    s: Session, dataset: str | None, *, history: bool = False, time_on_task: bool = True
) -> tuple[list[str], list[dict[str, Any]]]:
    """(columns, rows) of the judgments of `dataset` (None = every dataset): the current ones, with `history` every
    superseded revision too; with `time_on_task` False, no `seconds` (see the module docstring)."""
    left, right = aliased(t.Sample), aliased(t.Sample)
    j = t.PairJudgment
    right_id = sa.case((j.left_sample_id == j.sample_a_id, j.sample_b_id), else_=j.sample_a_id)
    gold_kind = (
        sa.select(sa.func.max(t.PairGoldAnswer.kind))
        .where(t.PairGoldAnswer.sample_a_id == j.sample_a_id, t.PairGoldAnswer.sample_b_id == j.sample_b_id)
        .scalar_subquery()
    )
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
            gold_kind,
        )
        .join(t.Rater, t.Rater.id == j.rater_id)
        .join(left, left.id == j.left_sample_id)
        .join(right, right.id == right_id)
        .join(t.Dataset, t.Dataset.id == left.dataset_id)
        .outerjoin(t.PairTask, t.PairTask.id == j.task_id)
    )
    if dataset is not None:
        query = query.where(t.Dataset.name == dataset)
    keyed: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    judgments: dict[int, tuple[dict[str, Any], dict[int, tuple[str | None, str | None]]]] = {}
    for row, rater, external, ds, lkey, lmethod, rkey, rmethod, position, gold in s.execute(
        query.order_by(t.Dataset.name, j.judged_at, j.id)
    ):
        right_sample = row.sample_b_id if row.left_sample_id == row.sample_a_id else row.sample_a_id
        common = {
            "dataset": ds,
            "rater": rater,
            "external": external,
            "criterion": row.criterion,
            "task_position": position,
            "gold": gold,
        }
        shown = {row.left_sample_id: (lkey, lmethod), right_sample: (rkey, rmethod)}
        judgments[row.id] = (common, shown)
        answer = _answer(common, shown, row, row.left_sample_id, right_sample)
        if history:
            answer |= {"current": True, "replaced_at": None}
        keyed.append(((ds, row.judged_at, row.id, row.revision), answer))
    if history and judgments:
        h = t.PairJudgmentHistory
        for chunk in _chunks(sorted(judgments)):
            for old in s.scalars(sa.select(h).where(h.judgment_id.in_(chunk))):
                common, shown = judgments[old.judgment_id]
                other = next(sid for sid in shown if sid != old.left_sample_id)
                answer = _answer(common, shown, old, old.left_sample_id, other)
                answer |= {"current": False, "replaced_at": old.replaced_at.isoformat()}
                keyed.append(((common["dataset"], old.judged_at, old.judgment_id, old.revision), answer))
        keyed.sort(key=lambda item: item[0])
    columns = pair_export_columns(history=history, time_on_task=time_on_task)
    return columns, [{c: answer[c] for c in columns} for _, answer in keyed]


def _answer(
    common: dict[str, Any],
    shown: dict[int, tuple[str | None, str | None]],
    row: t.PairJudgment | t.PairJudgmentHistory,
    left_id: int,
    right_id: int,
) -> dict[str, Any]:
    """One export row of a judgment's revision `row` (current or superseded), shown with `left_id` on the left."""
    winner_sample = {"left": left_id, "right": right_id}.get(row.winner or "")
    (lkey, lmethod), (rkey, rmethod) = shown[left_id], shown[right_id]
    return {
        **common,
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
        "left_sample_id": left_id,
        "right_sample_id": right_id,
        "left_method": lmethod,
        "right_method": rmethod,
    }


IDS_PER_QUERY = 500
"""Judgment ids per `IN (...)` of the history query: far below SQLite's and PostgreSQL's parameter limits."""


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[i : i + IDS_PER_QUERY] for i in range(0, len(ids), IDS_PER_QUERY)]


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
