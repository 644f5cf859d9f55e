"""A choice the user makes (a radio, a dropdown, a checkbox, a row, a frame, a click on an image, a slider let go)
while the app is still answering the previous one is answered next, never dropped: Gradio's default for these
events ("once") ignores whatever happens while an answer is pending, which left the mask panel showing one
image's mask under another image's name."""

from __future__ import annotations

import gradio as gr

CHOICE_EVENTS = {"input", "select", "release"}


def test_every_choice_event_answers_the_latest_choice(demo_settings):
    from masc_ui.ui.blocks import build_app
    from masc_ui.workbench import build_workbench

    wb = build_workbench(demo_settings)
    try:
        app = build_app(wb)
        seen, dropped = set(), []
        for fn in app.fns.values():
            for block_id, event in fn.targets:
                block = app.blocks.get(block_id)
                if event not in CHOICE_EVENTS or isinstance(block, gr.Tab):
                    continue  # opening a tab again while it opens shows the same thing
                seen.add(block.elem_id)
                if fn.trigger_mode != "always_last":
                    dropped.append(f"{block.elem_id}.{event} ({fn.trigger_mode})")
        assert {"mask-target", "sam-candidate", "browse-dataset", "browse-table", "frame-strip"} <= seen
        assert dropped == []
    finally:
        wb.close()
