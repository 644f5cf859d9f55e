"""Messages agree in number with what they name."""

from __future__ import annotations

from masc_ui.ui.staleness import stale_note


def test_out_of_date_note_agrees_with_what_is_stale():
    assert "since the maps were computed" in stale_note("now", (None, "before"))
    assert "since the score table was computed" in stale_note("now", ("before", None))
    assert "since the score table and the maps were computed" in stale_note("now", ("before", "before"))
