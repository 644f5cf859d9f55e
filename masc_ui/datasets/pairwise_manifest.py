"""Pairwise human judgments from a JSONL or CSV file, one judgment per row ("which of two outputs is better").

Columns (JSONL keys or CSV header):

| column | required | meaning |
|---|---|---|
| `left` | yes | key of the sample shown on the left (its external `key` in the dataset) |
| `right` | yes | key of the sample shown on the right |
| `criterion` | yes | `cp` (concept preservation) or `pf` (prompt following) |
| `winner` | yes | `left`, `right` or `tie`; `a` means left and `b` right |
| `rater` | yes | who judged (stored as an external rater) |
| `both_bad` | no | flag: both outputs are bad (`true`/`false`, `1`/`0`, `yes`/`no`) |
| `time` | no | when it was judged, ISO 8601 (`2026-02-01T10:15:00Z`; without a zone: UTC) |
| `seconds` | no | time spent on it, seconds >= 0 |

Identity (idempotency key): (rater, the two sample keys in either order, criterion) — one current judgment per
rater, pair and criterion, as for absolute ratings. Importing the same file again must add nothing: the ingest
compares `PairwiseEntry.key` and the answer (`winner_key`, which does not depend on the left/right order).
Within one file a second row with an identity already seen is skipped and reported: a *duplicate* when it gives
the same answer, a *conflicting* judgment when not (the first row is kept). Bad rows are skipped and reported
with `file:line` (the CSV header is line 1).

The pairwise judgments export (`masc-ui export --pairwise`) imports as it is: its other columns (`dataset`,
`external`, `status`, `winner_sample_id`, `note`, `revision`, `left_sample_id`, `right_sample_id`, `left_method`,
`right_method`, `task_position`, `gold`, with the history `current` and `replaced_at`) are read, not stored. A row
whose `gold` is set (a judgment of a gold pair or of a pair attention check, which never counts for a method), a
skipped or flagged answer (`status`) and an earlier revision (`current` false) are left out, counted in the notes;
a side without a key (`left` / `right` empty) is named by its `left_sample_id` / `right_sample_id` as `#<id>` (the
database the export came from). Nothing is written here: `read_pairwise` gives the same as a `Parsed`
layout for the importers (`masc-ui import PATH --format pairwise --dataset NAME`), whose ingest resolves the keys in
the dataset (an unknown key skips the row, reported) and stores the judgments as external raters'.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .entries import PairwiseEntry, Parsed, Problem
from .table_rows import read_rows

COLUMNS = ("left", "right", "criterion", "winner", "rater", "both_bad", "time", "seconds")
EXPORT_COLUMNS = (
    "dataset",
    "external",
    "status",
    "winner_sample_id",
    "note",
    "revision",
    "left_sample_id",
    "right_sample_id",
    "left_method",
    "right_method",
    "task_position",
    "gold",
    "current",
    "replaced_at",
)
"""Columns of the pairwise judgments export that are read but not stored (see the module docstring)."""
REQUIRED = ("left", "right", "criterion", "winner", "rater")
CRITERIA = ("cp", "pf")
WINNER_ALIASES = {"left": "left", "right": "right", "tie": "tie", "a": "left", "b": "right"}
TRUE_WORDS = ("true", "1", "yes", "y")
FALSE_WORDS = ("false", "0", "no", "n")


@dataclass
class ParsedJudgments:
    judgments: list[PairwiseEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def parse_pairwise_manifest(path: Path) -> ParsedJudgments:
    """Read a `.jsonl`/`.json`/`.ndjson` or `.csv`/`.tsv` file of pairwise judgments (see the module docstring).

    Raises `InputError` when the file is missing, of another type, or (CSV) has no usable header.
    """
    path = Path(path)
    parsed = ParsedJudgments()
    seen: dict[tuple[str, str, str, str], PairwiseEntry] = {}
    left_out = {reason: 0 for reason in LEFT_OUT}
    for where, row in read_rows(path, COLUMNS + EXPORT_COLUMNS, REQUIRED, "pairwise judgments file"):
        if isinstance(row, str):
            parsed.problems.append(Problem(where, row))
            continue
        reason = _left_out(row)
        if reason is not None:
            left_out[reason] += 1
            continue
        try:
            entry = _entry(where, row)
        except _BadRow as exc:
            parsed.problems.append(Problem(where, str(exc)))
            continue
        first = seen.get(entry.key)
        if first is not None:
            same = first.winner_key == entry.winner_key
            parsed.problems.append(
                Problem(
                    where,
                    (
                        f"duplicate judgment: {entry.rater!r} already judged this pair for {entry.criterion!r} "
                        f"at {first.where}"
                        if same
                        else f"conflicting judgment: {entry.rater!r} judged this pair for {entry.criterion!r} "
                        f"at {first.where} with winner {first.winner_key or 'tie'!r}, here {entry.winner_key or 'tie'!r}; the first is kept"
                    ),
                )
            )
            continue
        seen[entry.key] = entry
        parsed.judgments.append(entry)
    parsed.notes += [f"{path.name}: {n} {LEFT_OUT[reason]} left out" for reason, n in left_out.items() if n]
    if not parsed.judgments and not parsed.problems and not any(left_out.values()):
        parsed.notes.append(f"{path.name} holds no rows")
    return parsed


LEFT_OUT = {
    "gold": "judgment(s) of a gold pair or a pair attention check (column gold; they never count for a method; "
    "a file of `--format pair-gold` marks gold pairs)",
    "status": "skipped or flagged answer(s) (column status; only judgments with a winner are imported)",
    "current": "earlier revision(s) of a judgment (column current false; the current one is imported)",
}
"""Why an export row is left out (see the module docstring), by the column that says so."""


def _left_out(row: dict[str, Any]) -> str | None:
    """The `LEFT_OUT` reason of an export row that is not a judgment to import, None for one to import."""
    if str(row.get("gold") or "").strip():
        return "gold"
    if str(row.get("status") or "rated").strip().lower() != "rated":
        return "status"
    if str(row.get("current", True)).strip().lower() in FALSE_WORDS:
        return "current"
    return None


def read_pairwise(path: Path) -> Parsed:
    """`parse_pairwise_manifest(path)` as an importer layout: judgments in `Parsed.pairwise`."""
    parsed = parse_pairwise_manifest(path)
    return Parsed(pairwise=parsed.judgments, problems=parsed.problems, notes=parsed.notes)


class _BadRow(Exception):
    pass


def _entry(where: str, row: dict[str, Any]) -> PairwiseEntry:
    unknown = sorted(set(row) - set(COLUMNS) - set(EXPORT_COLUMNS))
    if unknown:
        raise _BadRow(f"unknown key(s) {unknown}; the columns are {', '.join(COLUMNS)}")
    given = {c: _text(row, c) or _by_id(row, c) for c in REQUIRED}
    missing = [c for c, v in given.items() if v is None]
    if missing:
        raise _BadRow(f"missing field(s) {missing}")
    text = {c: v or "" for c, v in given.items()}
    if text["left"] == text["right"]:
        raise _BadRow(f"left and right are the same sample {text['left']!r}; a judgment compares two samples")
    criterion = text["criterion"].lower()
    if criterion not in CRITERIA:
        raise _BadRow(f"bad criterion {text['criterion']!r}; use {' or '.join(CRITERIA)}")
    winner = WINNER_ALIASES.get(text["winner"].lower())
    if winner is None:
        raise _BadRow(f"bad winner {text['winner']!r}; use left, right or tie (a = left, b = right)")
    return PairwiseEntry(
        where,
        text["left"],
        text["right"],
        criterion,
        winner,
        text["rater"],
        _flag(row.get("both_bad")),
        _time(row.get("time")),
        _seconds(row.get("seconds")),
    )


def _by_id(row: dict[str, Any], name: str) -> str | None:
    """`#<id>` of an export row's side without a key (`left_sample_id` / `right_sample_id`), else None."""
    if name not in ("left", "right"):
        return None
    sample_id = _text(row, f"{name}_sample_id")
    return f"#{sample_id}" if sample_id is not None and sample_id.isdigit() else None


def _text(row: dict[str, Any], name: str) -> str | None:
    value = row.get(name)
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise _BadRow(f"{name} must be text, got {type(value).__name__}")
    text = str(value).strip()
    return text or None


def _flag(value: Any) -> bool:
    if value is None or value == "":
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise _BadRow(f"bad both_bad flag {value!r}; use true or false")


def _time(value: Any) -> dt.datetime | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _BadRow(f"bad time {value!r}: give an ISO 8601 text such as 2026-02-01T10:15:00Z")
    try:
        stamp = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise _BadRow(f"bad time {value!r}: give an ISO 8601 text such as 2026-02-01T10:15:00Z") from None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=dt.timezone.utc)


def _seconds(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise _BadRow(f"bad seconds {value!r}: give the time spent as a number of seconds") from None
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise _BadRow(f"bad seconds {value!r}: give the time spent as a number of seconds >= 0")
    return number
