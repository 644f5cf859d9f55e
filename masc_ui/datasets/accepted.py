"""Accepted answers of gold tasks as people write them: one score 0-4 (`3`) or a range (`3-4`, `3..4`), in the
manifest's `gold_cp` / `gold_pf` columns, the CLI's `--accept` and the admin's form alike."""

from __future__ import annotations

import re

from ..errors import InputError

_ACCEPTED = re.compile(r"^\s*([0-4])\s*(?:(?:-|\.\.|–)\s*([0-4]))?\s*$")


def parse_accepted(text: object) -> tuple[int, int]:
    """(low, high) of an accepted answer written `3` (only 3) or `3-4` / `3..4` (3 or 4); InputError otherwise."""
    found = _ACCEPTED.match(str(text))
    if found is None:
        raise InputError(
            f"accepted answer {str(text)[:40]!r}: write one score 0-4 (e.g. 3) or a range low-high (e.g. 3-4)"
        )
    low = int(found.group(1))
    high = int(found.group(2)) if found.group(2) is not None else low
    if low > high:
        raise InputError(
            f"accepted answer {text!r}: the range is empty; give the lower score first (e.g. {high}-{low})"
        )
    return low, high


def accepted_text(low: int, high: int) -> str:
    """`3` or `3-4`."""
    return str(low) if low == high else f"{low}-{high}"
