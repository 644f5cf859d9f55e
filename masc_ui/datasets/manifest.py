"""Manifest importer: a JSONL or CSV file, one sample per row, paths relative to the manifest's folder.

Columns (JSONL keys or CSV header):

| column | required | meaning |
|---|---|---|
| `ref` | yes | reference image path; several: a JSON list, or in CSV paths separated by `|` |
| `ref_mask` | no | mask of each reference (same count and order as `ref`; empty = none) |
| `out` | yes | generated image path |
| `out_mask` | no | mask of the subject in the output |
| `prompt` | yes | full generation prompt |
| `subject` | yes | subject name |
| `method`, `category` | no | generation method, subject category |
| `seed` | no | integer generation seed |
| `key` | no | external key, unique within the dataset (default: the sample's content identifies it) |
| `gold_cp`, `gold_pf` | no | makes the sample a gold task: its accepted answer, one score `3` or a range `3-4` |

Line numbers in problems are the file's physical lines (CSV: the header is line 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from .accepted import parse_accepted
from .entries import Parsed, SampleEntry
from .table_rows import read_rows

COLUMNS = (
    "ref",
    "ref_mask",
    "out",
    "out_mask",
    "prompt",
    "subject",
    "method",
    "seed",
    "key",
    "category",
    "gold_cp",
    "gold_pf",
)
REQUIRED = ("ref", "out", "prompt", "subject")
MULTI_SEPARATOR = "|"
"""Separator of several paths in one CSV cell."""


def parse_manifest(path: Path) -> Parsed:
    """Read a `.jsonl`/`.json` (one object per line) or `.csv` manifest into sample entries.

    Raises `InputError` when the file is missing, of another type, or (CSV) has no usable header.
    Rows with problems (missing field, unknown key, missing file, bad seed, duplicate key) are skipped
    and reported with their line.
    """
    path = Path(path)
    rows = read_rows(path, COLUMNS, REQUIRED, "manifest")
    parsed = Parsed()
    seen_keys: dict[str, str] = {}
    for where, row in rows:
        if isinstance(row, str):
            parsed.skip(where, row)
            continue
        try:
            entry = _entry(where, row, path.parent)
        except _BadRow as exc:
            parsed.skip(where, str(exc))
            continue
        if entry.key is not None:
            if entry.key in seen_keys:
                parsed.skip(where, f"duplicate key: {entry.key!r} was already used at {seen_keys[entry.key]}")
                continue
            seen_keys[entry.key] = where
        parsed.samples.append(entry)
    if not parsed.samples and not parsed.problems:
        parsed.notes.append(f"{path.name} holds no rows")
    return parsed


class _BadRow(Exception):
    pass


def _entry(where: str, row: dict[str, Any], base: Path) -> SampleEntry:
    unknown = sorted(set(row) - set(COLUMNS))
    if unknown:
        raise _BadRow(f"unknown key(s) {unknown}; the columns are {', '.join(COLUMNS)}")
    missing = [c for c in REQUIRED if row.get(c) in (None, "", [])]
    if missing:
        raise _BadRow(f"missing field(s) {missing}")
    refs = _paths(row["ref"], "ref", base)
    ref_masks: tuple[Path | None, ...] = ()
    if row.get("ref_mask") not in (None, "", []):
        ref_masks = _paths(row["ref_mask"], "ref_mask", base, allow_empty=True)
        if len(ref_masks) != len(refs):
            raise _BadRow(
                f"ref_mask lists {len(ref_masks)} path(s) for {len(refs)} ref(s); give one per ref (empty for none)"
            )
    out = _paths(row["out"], "out", base)
    if len(out) != 1:
        raise _BadRow(f"out must be one path, got {len(out)}")
    out_mask = _paths(row["out_mask"], "out_mask", base)[0] if row.get("out_mask") else None
    for p in [*refs, *ref_masks, out[0], out_mask]:
        if p is not None and not p.is_file():
            raise _BadRow(f"missing file: {p}")
    return SampleEntry(
        where=where,
        key=_text(row, "key"),
        subject=_text(row, "subject"),
        prompt=_text(row, "prompt"),
        out=out[0],
        refs=refs,
        ref_masks=ref_masks,
        out_mask=out_mask,
        method=_text(row, "method"),
        seed=_seed(row.get("seed")),
        category=_text(row, "category"),
        gold=_gold(row),
    )


def _gold(row: dict[str, Any]) -> dict[str, tuple[int, int]]:
    found = {}
    for criterion in ("cp", "pf"):
        text = _text(row, f"gold_{criterion}")
        if text is not None:
            try:
                found[criterion] = parse_accepted(text)
            except InputError as exc:
                raise _BadRow(f"gold_{criterion}: {exc}") from None
    return found


def _paths(value: Any, name: str, base: Path, allow_empty: bool = False) -> tuple[Any, ...]:
    if isinstance(value, str):
        items: list[Any] = value.split(MULTI_SEPARATOR) if MULTI_SEPARATOR in value else [value]
    elif isinstance(value, list):
        items = value
    else:
        raise _BadRow(f"{name} must be a path or a list of paths, got {type(value).__name__}")
    out: list[Path | None] = []
    for item in items:
        if item is None or (isinstance(item, str) and not item.strip()):
            if not allow_empty:
                raise _BadRow(f"{name} has an empty path")
            out.append(None)
            continue
        if not isinstance(item, str):
            raise _BadRow(f"{name} must hold paths (strings), got {type(item).__name__}")
        p = Path(item.strip()).expanduser()
        out.append(p if p.is_absolute() else (base / p))
    return tuple(out)


def _text(row: dict[str, Any], name: str) -> str | None:
    value = row.get(name)
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise _BadRow(f"{name} must be text, got {type(value).__name__}")
    text = str(value).strip()
    return text or None


def _seed(value: Any) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise _BadRow(f"bad seed: {value!r} is not an integer")
