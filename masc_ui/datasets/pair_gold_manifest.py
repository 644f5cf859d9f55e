"""Gold pairs from a JSONL or CSV file: pairs of samples and the answer each accepts, one pair per row.

Columns (JSONL keys or CSV header):

| column | required | meaning |
|---|---|---|
| `left` | yes | the first sample of the pair: its external `key` in the dataset, or `#<id>` |
| `right` | yes | the second sample |
| `gold_cp` | one of the two | accepted answer for concept preservation: `a` (left is better), `b` (right is better) or `tie`; `left` / `right` mean `a` / `b` |
| `gold_pf` | one of the two | the same for prompt following |
| `kind` | no | `gold` (default: an admin's gold pair) or `attention` (an attention check; reported apart) |
| `note` | no | why that answer (kept with the mark, shown to admins only) |

Identity: the two samples in either order and the criterion. Within one file a second answer for a pair and
criterion already seen is skipped and reported, a *duplicate* when it accepts the same (the same better sample, or
tie), a *conflicting* answer when not (the first row is kept). Bad rows are skipped and reported with `file:line`
(the CSV header is line 1). Nothing is written here: `read_pair_gold` gives the entries as a `Parsed` layout for
`masc-ui import PATH --format pair-gold --dataset NAME`, whose ingest resolves the samples in the dataset (an
unknown one skips the row, reported) and marks each pair through the gold pairs' repository; importing the same
file again changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .entries import PairGoldEntry, Parsed
from .table_rows import read_rows

COLUMNS = ("left", "right", "gold_cp", "gold_pf", "kind", "note")
REQUIRED = ("left", "right")
ANSWER_COLUMNS = {"gold_cp": "cp", "gold_pf": "pf"}
ANSWER_ALIASES = {"a": "a", "b": "b", "tie": "tie", "left": "a", "right": "b"}
KINDS = ("gold", "attention")
NOTE_MAX = 2000


def read_pair_gold(path: Path) -> Parsed:
    """Read a `.jsonl`/`.json`/`.ndjson` or `.csv`/`.tsv` file of gold pairs (see the module docstring) as an importer
    layout: the accepted answers in `Parsed.pair_gold`, one entry per pair and criterion.

    Raises `InputError` when the file is missing, of another type, or (CSV) has no usable header."""
    path = Path(path)
    parsed = Parsed()
    seen: dict[tuple[str, str, str], PairGoldEntry] = {}
    for where, row in read_rows(path, COLUMNS, REQUIRED, "gold pairs file"):
        if isinstance(row, str):
            parsed.skip(where, row)
            continue
        try:
            entries = _entries(where, row)
        except _BadRow as exc:
            parsed.skip(where, str(exc))
            continue
        for entry in entries:
            first = seen.get(entry.key)
            if first is None:
                seen[entry.key] = entry
                parsed.pair_gold.append(entry)
            elif first.better == entry.better:
                parsed.skip(where, f"duplicate answer: this pair's {entry.criterion} answer was given at {first.where}")
            else:
                parsed.skip(
                    where,
                    f"conflicting answer: this pair's {entry.criterion} answer was given at {first.where} as "
                    f"{first.better or 'tie'!r} better, here {entry.better or 'tie'!r}; the first is kept",
                )
    if not parsed.pair_gold and not parsed.problems:
        parsed.notes.append(f"{path.name} holds no rows")
    return parsed


class _BadRow(Exception):
    pass


def _entries(where: str, row: dict[str, Any]) -> list[PairGoldEntry]:
    unknown = sorted(set(row) - set(COLUMNS))
    if unknown:
        raise _BadRow(f"unknown key(s) {unknown}; the columns are {', '.join(COLUMNS)}")
    left, right = _text(row, "left"), _text(row, "right")
    missing = [name for name, value in (("left", left), ("right", right)) if value is None]
    if missing or left is None or right is None:
        raise _BadRow(f"missing field(s) {missing}")
    if left == right:
        raise _BadRow(f"left and right are the same sample {left!r}; a gold pair is two samples")
    kind = (_text(row, "kind") or "gold").lower()
    if kind not in KINDS:
        raise _BadRow(f"bad kind {row.get('kind')!r}; use {' or '.join(KINDS)}")
    note = _text(row, "note")
    if note is not None and len(note) > NOTE_MAX:
        raise _BadRow(f"note too long ({len(note)} characters; at most {NOTE_MAX})")
    entries = []
    for column, criterion in ANSWER_COLUMNS.items():
        given = _text(row, column)
        if given is None:
            continue
        accepted = ANSWER_ALIASES.get(given.lower())
        if accepted is None:
            raise _BadRow(f"bad {column} {given!r}; use a (left is better), b (right is better) or tie")
        entries.append(PairGoldEntry(where, left, right, criterion, accepted, kind, note))
    if not entries:
        raise _BadRow("no accepted answer: give gold_cp or gold_pf (a, b or tie)")
    return entries


def _text(row: dict[str, Any], name: str) -> str | None:
    value = row.get(name)
    if value is None:
        return None
    if isinstance(value, (dict, list, bool)):
        raise _BadRow(f"{name} must be text, got {type(value).__name__}")
    text = str(value).strip()
    return text or None
