"""The Score tab's mask-sensitivity handler, called directly: the table of the check, refusals in words (the table
then gone with its fingerprint), and its place in the one staleness rule."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest

from masc_ui.ui import sensitivity_panel
from masc_ui.ui.staleness import NOTHING, ResultOutputs, with_result
from masc_ui.workbench import build_workbench, sample_fingerprint
from masc_ui.workbench.examples import load_example

ADMIN = SimpleNamespace(username=None)  # no logins: the local user is the admin


@pytest.fixture()
def wb(demo_settings):
    bench = build_workbench(demo_settings)
    yield bench
    bench.close()


def _sample_of(wb, masked: bool = True):
    ex = load_example("cat-on-grass")

    def sample_of(ref, extra, out, prompt, subject, session):
        masks = ([ex.ref_mask], ex.out_mask) if masked else ([None], None)
        return wb.scoring.make_sample([ex.ref], ex.out, prompt, subject, *masks)

    return sample_of, ex


def _check(wb, sample_of):
    """The check's handler of a panel built in a page of its own, and the components its answers are keyed by (the
    panel's and the Score tab's status line, fingerprints and "out of date" note under Run)."""
    with gr.Blocks():
        fields = [gr.Textbox(), gr.File(), gr.Textbox(), gr.Textbox(), gr.Textbox(), gr.State(None)]
        tab = SimpleNamespace(status=gr.Markdown(), computed=gr.State(NOTHING), stale=gr.HTML())
        tab.panel = sensitivity_panel.build(
            wb, sample_of, fields, gr.CheckboxGroup(), tab.status, tab.computed, tab.stale
        )
    score = ResultOutputs(tab.status, tab.computed, tab.stale)
    return sensitivity_panel.check_handler(wb, sample_of, tab.panel, score), tab


def test_the_check_shows_each_variant_and_the_spread(wb):
    sample_of, ex = _sample_of(wb)
    handler, tab = _check(wb, sample_of)
    shown = handler(
        None, None, None, ex.prompt, ex.subject, None, ["cp", "clip_i", "pf"], "0, 2", False, NOTHING, request=ADMIN
    )
    table = shown[tab.panel.table]
    for text in ("<th>own masks</th>", "<th>0 px</th>", "<th>eroded 2 px</th>", "<th>dilated 2 px</th>"):
        assert text in table
    assert "<td>MaSC CP</td>" in table and "<td>MaSC PF</td>" in table and "CLIP-I<" not in table
    assert "subject name" not in table  # not asked
    key = sample_fingerprint(sample_of(None, None, None, ex.prompt, ex.subject, None))
    computed = shown[tab.computed]
    assert computed == with_result(NOTHING, "mask sensitivity", key)
    assert shown[tab.stale] == shown[tab.panel.stale] == "" and "models loaded" in shown[tab.status]
    assert sensitivity_panel.stale_here("another sample", computed).count("mask sensitivity was computed") == 1


def test_refusals_are_messages_and_drop_the_check_shown(wb):
    sample_of, ex = _sample_of(wb)
    handler, tab = _check(wb, sample_of)
    before = with_result(NOTHING, "mask sensitivity", "before")
    shown = handler(None, None, None, ex.prompt, ex.subject, None, ["cp"], "three", False, before, request=ADMIN)
    message = "⚠ “Erode and dilate by (pixels, e.g. 3 or 2,5)” &#x27;three&#x27;: give whole pixel counts"
    assert message in shown[tab.panel.table]
    assert shown[tab.computed] == NOTHING and tab.stale not in shown  # the note under Run is left as it is
    shown = handler(None, None, None, ex.prompt, ex.subject, None, ["clip_i"], "3", False, NOTHING, request=ADMIN)
    assert "none of the chosen metrics uses a mask" in shown[tab.panel.table]
    bare, _ = _sample_of(wb, masked=False)
    handler, tab = _check(wb, bare)
    shown = handler(None, None, None, ex.prompt, ex.subject, None, ["cp"], "3", False, NOTHING, request=ADMIN)
    assert "the sample has no mask to vary; draw or segment the subject first" in shown[tab.panel.table]


def test_a_rater_is_refused(wb, demo_settings):
    import dataclasses

    bench = build_workbench(dataclasses.replace(demo_settings, users="alice:pw-a:admin,bob:pw-b"))
    try:
        sample_of, ex = _sample_of(bench)
        handler, tab = _check(bench, sample_of)
        shown = handler(
            None,
            None,
            None,
            ex.prompt,
            ex.subject,
            None,
            ["cp"],
            "3",
            False,
            NOTHING,
            request=SimpleNamespace(username="bob"),
        )
        assert "⚠" in shown[tab.panel.table] and "admin" in shown[tab.panel.table]
    finally:
        bench.close()
