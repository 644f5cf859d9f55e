"""One rule for every result the Score tab shows next to its inputs (the score table, MaSC's maps, the catalogue
explanation, the mask-sensitivity check): each result remembers the fingerprint of the sample it was computed on (`sample_fingerprint`); when
the sample on screen has another fingerprint, the result is flagged "out of date" with the button that computes it
again. New images clear the results instead (`score_actions.cleared_results`).

`Computed` is what the Score tab keeps in its `computed` state: one fingerprint (or None: nothing shown) per entry
of `RESULTS`, in that order. A shorter tuple (an older caller) counts the missing entries as None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CATALOGUE_LABEL = "Explain VQAScore, ITMScore, FaceSim, FaceScore"
"""The catalogue explanation's button (`catalogue_panel.build`)."""
SENSITIVITY_LABEL = "Check mask sensitivity"
"""The mask-sensitivity check's button (`sensitivity_panel.build`)."""
RESULTS: tuple[tuple[str, str], ...] = (
    ("score table", "Run"),
    ("maps", "Explain"),
    ("catalogue explanation", CATALOGUE_LABEL),
    ("mask sensitivity", SENSITIVITY_LABEL),
)
"""(what the result is called in the note, the button that computes it again), in the order of `Computed`."""
NAMES = tuple(name for name, _ in RESULTS)
PLURAL = frozenset({"maps"})
"""The names of `RESULTS` that take a plural verb ("the maps were computed")."""

Computed = tuple[str | None, ...]
NOTHING: Computed = (None,) * len(RESULTS)
"""Nothing shown."""


def keys_of(computed: Sequence[str | None] | None) -> Computed:
    """`computed` with one entry per `RESULTS` (missing entries None)."""
    keys = tuple(computed or ())[: len(RESULTS)]
    return keys + (None,) * (len(RESULTS) - len(keys))


def with_result(computed: Sequence[str | None] | None, name: str, key: str | None) -> Computed:
    """`computed` where the result called `name` (one of `NAMES`) was computed on the sample with fingerprint `key`
    (None: it is no longer shown)."""
    keys = list(keys_of(computed))
    keys[NAMES.index(name)] = key
    return tuple(keys)


@dataclass(frozen=True)
class ResultOutputs:
    """The Score tab's components that every result's handler answers in besides its own: the status line
    (`status`), the fingerprints of the results shown (`computed`, a `Computed`) and the "out of date" note under Run
    (`stale`)."""

    status: Any
    computed: Any
    stale: Any

    def answer(self, line: str, fingerprints: Sequence[str | None] | None, name: str, key: str | None) -> dict:
        """Their values once result `name` was computed on the sample with fingerprint `key` (None: it failed, and
        the result shown is gone), the fingerprints shown before being `fingerprints`: the status `line`, the new
        fingerprints and, for a result computed, the note under Run (a failure leaves that note as it is)."""
        now = with_result(fingerprints, name, key)
        values: dict = {self.status: line, self.computed: now}
        if key is not None:
            values[self.stale] = stale_note(key, now)
        return values


def stale_note(
    now: str | None,
    computed: Sequence[str | None] | None,
    only: Sequence[str] = NAMES,
    *,
    element_id: str = "stale-note",
) -> str:
    """The "out of date" note (HTML) for the sample on screen, with fingerprint `now` (None: the inputs on screen
    make no sample), and the results shown, `computed`, among those called `only`; empty when every one of them
    shown belongs to the sample. A button with a long label is quoted."""
    stale = [
        (name, button)
        for (name, button), key in zip(RESULTS, keys_of(computed))
        if name in only and key is not None and key != now
    ]
    if not stale:
        return ""
    names = words([f"the {name}" for name, _ in stale])
    buttons = words([f"“{button}”" if " " in button else button for _, button in stale])
    return (
        f'<div class="stale-note" id="{element_id}">⚠ Results are out of date: the images, masks, prompt or '
        f"subject changed since {names} {'were' if len(stale) > 1 or stale[0][0] in PLURAL else 'was'} computed. "
        f"Press {buttons} again.</div>"
    )


def words(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
