"""The whole app: banner + status line on top, then the tabs."""
from __future__ import annotations

import gradio as gr

from ..workbench import Workbench
from . import score_tab, status


def build_app(wb: Workbench) -> gr.Blocks:
    """The app's Blocks for `wb` (not launched; see `masc_ui.ui.launch.launch_kwargs`)."""
    with gr.Blocks(title="MaSC Workbench", analytics_enabled=False) as app:
        gr.Markdown("## MaSC Workbench — score, inspect and rate concept-driven generation")
        status_line = status.build(wb)
        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab("Score", id="score", elem_id="tab-score"):
                score = score_tab.build(wb, status_line)
        app.load(lambda: wb.status().line(), None, [status_line])
    app.queue(default_concurrency_limit=8)
    app.tabs = tabs  # type: ignore[attr-defined]
    app.score_tab = score  # type: ignore[attr-defined]
    return app
