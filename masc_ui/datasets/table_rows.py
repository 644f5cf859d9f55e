"""Rows of a JSONL or CSV/TSV file of records, each with where it came from (`file:line`), for the importers
that read one record per row (the sample manifest, pairwise judgments).

A row that cannot be read becomes a message instead of a dict, so the importer reports it with its line and
goes on; a file that cannot be read at all (no CSV header, unknown or missing columns) raises `InputError`.
Line numbers are the file's physical lines (CSV: the header is line 1).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
CSV_SUFFIXES = (".csv", ".tsv")


def read_rows(
    path: Path, columns: Sequence[str], required: Sequence[str], what: str
) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """(where, row dict or problem text) per non-empty row of a `.jsonl`/`.json`/`.ndjson` or `.csv`/`.tsv` file;
    `what` names the file kind in errors ("manifest"). InputError for a missing file or another type."""
    if not path.is_file():
        raise InputError(f"{what} {path}: file not found; pass a .jsonl or .csv {what}")
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return jsonl_rows(path)
    if suffix in CSV_SUFFIXES:
        return csv_rows(path, "\t" if suffix == ".tsv" else ",", columns, required, what)
    raise InputError(
        f"{what} {path}: unknown file type {suffix!r}; use .jsonl (one JSON object per line) or .csv with a header row"
    )


def jsonl_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | str]]:
    with path.open(encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, start=1):
            where = f"{path.name}:{lineno}"
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield where, f"not valid JSON: {exc.msg} at column {exc.colno}"
                continue
            if not isinstance(row, dict):
                yield where, f"not valid JSON object: a row must be an object {{...}}, got {type(row).__name__}"
                continue
            yield where, row


def csv_rows(
    path: Path, delimiter: str, columns: Sequence[str], required: Sequence[str], what: str
) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """Rows of a CSV whose header must name only `columns` and all of `required`; empty cells are dropped."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh, delimiter=delimiter)
        header = reader.fieldnames or []
        if not header:
            raise InputError(
                f"{what} {path}: no header row; the first line must name the columns ({', '.join(columns)})"
            )
        unknown = [h for h in header if h not in columns]
        missing = [c for c in required if c not in header]
        if unknown or missing:
            parts = []
            if unknown:
                parts.append(f"unknown column(s) {unknown}")
            if missing:
                parts.append(f"missing required column(s) {missing}")
            raise InputError(
                f"{what} {path}: {'; '.join(parts)}; the columns are {', '.join(columns)} "
                f"(required: {', '.join(required)})"
            )
        for row in reader:
            where = f"{path.name}:{reader.line_num}"
            if None in row:
                yield where, f"too many cells: {len(header) + len(row[None])} for {len(header)} columns"
                continue
            yield where, {k: v for k, v in row.items() if v not in (None, "")}
