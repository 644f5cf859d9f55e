"""Text typed by users (prompts, subject, dataset and method names) checked at the edge, before any work."""

from __future__ import annotations

import re

from ..errors import InputError

_REFUSED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
"""NUL and other control characters (tab and line breaks are fine), and lone surrogates: what a command line
argument holds when its bytes were not UTF-8. The database cannot store NUL or surrogates."""
MAX_LENGTHS = {"prompt": 10_000, "subject": 300, "dataset": 200, "method": 200}
"""Longest text of each field (what the database columns hold)."""


def check_text_input(value: str | None, name: str, *, field: str | None = None) -> str | None:
    """`value` (None stays None) unless it holds a refused character or is longer than its field allows;
    InputError naming `name` and the position, never echoing the text."""
    if value is None:
        return None
    bad = _REFUSED.search(value)
    if bad is not None:
        what = (
            "a NUL character"
            if bad.group() == "\x00"
            else "text that is not valid UTF-8"
            if "\ud800" <= bad.group() <= "\udfff"
            else "a control character"
        )
        raise InputError(f"{name} contains {what} at position {bad.start() + 1}; remove it and try again")
    limit = MAX_LENGTHS.get(field or name)
    if limit is not None and len(value) > limit:
        raise InputError(f"{name} is {len(value):,} characters long; at most {limit:,} are allowed")
    return value
