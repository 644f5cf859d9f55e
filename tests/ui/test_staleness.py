"""The one "out of date" rule of the Score tab's results (`staleness`): every result shown (score table, MaSC maps,
catalogue explanation) is flagged with its button when the sample on screen is another one."""

from __future__ import annotations

from masc_ui.ui.staleness import CATALOGUE_LABEL, NOTHING, keys_of, stale_note, with_result


def test_every_result_computed_on_other_inputs_is_flagged_with_its_button():
    shown = with_result(
        with_result(with_result(NOTHING, "score table", "a"), "maps", "a"), "catalogue explanation", "a"
    )
    assert stale_note("a", shown) == ""
    note = stale_note("b", shown)
    assert "since the score table, the maps and the catalogue explanation were computed" in note
    assert f"Press Run, Explain and “{CATALOGUE_LABEL}” again" in note
    only = stale_note("b", with_result(shown, "catalogue explanation", "b"))
    assert "the score table and the maps were computed" in only and "catalogue" not in only


def test_a_catalogue_explanation_alone_is_flagged_and_one_result_takes_was():
    note = stale_note("b", with_result(NOTHING, "catalogue explanation", "a"))
    assert "since the catalogue explanation was computed" in note and f"Press “{CATALOGUE_LABEL}” again" in note


def test_nothing_shown_is_never_out_of_date_and_short_tuples_are_padded():
    assert stale_note(None, NOTHING) == "" and stale_note("x", None) == ""
    assert keys_of(("a", None)) == ("a", None, None, None)  # a stored sample opened from Browse: its table only
    assert "the score table was computed" in stale_note("b", ("a", None))
    assert "the score table was computed" in stale_note(None, ("a",))  # the inputs make no sample now


def test_a_note_for_some_results_only():
    shown = ("a", "a", "a")
    local = stale_note("b", shown, ["catalogue explanation"], element_id="catalogue-stale-note")
    assert 'id="catalogue-stale-note"' in local and "since the catalogue explanation was computed" in local
    assert stale_note("b", ("a", "a", None), ["catalogue explanation"]) == ""


def test_the_check_runs_again_after_every_result_one_check_at_a_time(demo_settings):
    """A check that read the inputs before a result arrived must not have the last word: every event that computes
    a result is followed by a check, and all checks share one queue slot (so they answer in the order asked)."""
    from masc_ui.ui.blocks import build_app
    from masc_ui.ui.score_tab import FRESHNESS
    from masc_ui.workbench import build_workbench

    wb = build_workbench(demo_settings)
    try:
        app = build_app(wb)
        ids = {b.elem_id: b for b in app.blocks.values() if getattr(b, "elem_id", None)}
        notes = [ids["stale-box"], ids["catalogue-stale"], ids["sensitivity-stale"]]
        checks = [fn for fn in app.fns.values() if list(fn.outputs) == notes]
        assert checks and all(fn.concurrency_id == FRESHNESS and fn.concurrency_limit == 1 for fn in checks)
        after = {fn.trigger_after for fn in checks}
        by_api = {fn.api_name: fn._id for fn in app.fns.values() if isinstance(fn.api_name, str)}
        for api in ("run", "explain", "save", "save_new", "explain_catalogue", "mask_sensitivity"):
            assert by_api[api] in after, api
    finally:
        wb.close()
