"""Where a mask came from: the source names of the Score tab's masks and the words its messages use for them."""

from __future__ import annotations

SOURCES = ("drawn", "sam", "text-prompted", "imported")
"""Where a mask came from (storage calls text-prompted masks `text`)."""


def source_words(source: str | None) -> str:
    """How a message names a mask's source (`drawn` -> `brush`)."""
    return {
        "drawn": "brush",
        "sam": "Segment Anything",
        "text-prompted": "subject-name",
        "imported": "imported",
        None: "previous",
    }.get(source, str(source))
