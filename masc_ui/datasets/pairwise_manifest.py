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
with `file:line` (the CSV header is line 1). Nothing is written here: `read_pairwise` gives the same as a `Parsed`
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
    for where, row in read_rows(path, COLUMNS, REQUIRED, "pairwise judgments file"):
        if isinstance(row, str):
            parsed.problems.append(Problem(where, row))
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
                        f"duplicate judgment: {entry.rater!r} already judged this pair for {entry.criterion!r} at {first.where}"
                        if same
                        else f"conflicting judgment: {entry.rater!r} judged this pair for {entry.criterion!r} at {first.where} "
                        f"with winner {first.winner_key or 'tie'!r}, here {entry.winner_key or 'tie'!r}; the first is kept"
                    ),
                )
            )
            continue
        seen[entry.key] = entry
        parsed.judgments.append(entry)
    if not parsed.judgments and not parsed.problems:
        parsed.notes.append(f"{path.name} holds no rows")
    return parsed


def read_pairwise(path: Path) -> Parsed:
    """`parse_pairwise_manifest(path)` as an importer layout: judgments in `Parsed.pairwise`."""
    parsed = parse_pairwise_manifest(path)
    return Parsed(pairwise=parsed.judgments, problems=parsed.problems, notes=parsed.notes)


class _BadRow(Exception):
    pass


def _entry(where: str, row: dict[str, Any]) -> PairwiseEntry:
    unknown = sorted(set(row) - set(COLUMNS))
    if unknown:
        raise _BadRow(f"unknown key(s) {unknown}; the columns are {', '.join(COLUMNS)}")
    given = {c: _text(row, c) for c in REQUIRED}
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
