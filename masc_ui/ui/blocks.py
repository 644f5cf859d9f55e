"""The whole app: banner + status line on top, then the tabs (one module each)."""
from __future__ import annotations

import gradio as gr

from ..workbench import Workbench
from . import agreement_tab, browse_tab, mask_panel, rate_tab, score_actions, score_tab, status


def build_app(wb: Workbench) -> gr.Blocks:
    """The app's Blocks for `wb` (not launched; see `masc_ui.ui.launch.launch_kwargs`)."""
    with gr.Blocks(title="MaSC Workbench", analytics_enabled=False) as app:
        gr.Markdown("### MaSC Workbench — score, inspect and rate concept-driven generation", elem_id="app-title")
        status_line = status.build(wb)
        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab("Score", id="score", elem_id="tab-score"):
                score = score_tab.build(wb, status_line)
            with gr.Tab("Rate", id="rate", elem_id="tab-rate") as rate:
                open_task, task_outputs = rate_tab.build(wb)
            with gr.Tab("Browse and export", id="browse", elem_id="tab-browse") as browse:
                browse_ui = browse_tab.build(wb)
            with gr.Tab("Agreement", id="agreement", elem_id="tab-agreement") as agreement:
                show_agreement, agreement_io = agreement_tab.build(wb)
        rate.select(open_task, None, task_outputs, api_name="rate_open")
        browse.select(browse_ui.on_refresh, browse_ui.inputs, browse_ui.outputs)
        agreement.select(show_agreement, agreement_io, agreement_io)
        refresh_in, refresh_out = mask_panel.refresh_io(score.masks, score.ref_image, score.extra_refs,
                                                        score.out_image)
        opened = [*score_actions.cleared_results(score), score.ref_image, score.extra_refs, score.out_image,
                  score.prompt, score.subject, score.dataset, score.method, score.example, score.masks.session,
                  score.load_msg, score.link, browse_ui.open_msg, tabs]
        browse_ui.open.click(browse_tab.open_handler(wb, score, browse_ui, tabs),
                             [browse_ui.sample_id, score.masks.session], opened, api_name="open_sample")\
            .then(score.masks.refresh, refresh_in, refresh_out)
        app.load(lambda: wb.status().line(), None, [status_line])
        app.load(open_task, None, task_outputs)
    app.queue(default_concurrency_limit=8)
    return app
